// The line alignment of changed_spans.h. Lines whose skeletons agree at the
// head and tail align as they are (a pipeline inserts a few ops somewhere
// in the middle); between them, a longest common subsequence of skeletons
// when the table is small, else a greedy linear-time alignment (the full
// pipeline renumbers values and reorders functions, and an LCS table of
// millions of cells would cost an update hundreds of ms).
#include "changed_spans.h"

#include "shardlab/support/string_hash.h"
#include "support/byte_scan.h"

#include <algorithm>
#include <cstring>

namespace shardlab::api {
namespace {

// One line of a printed module and where its skeleton ends: at the first
// '{' or " : " (or the line's end).
struct Line {
  std::string_view text;
  size_t skeleton_end;
};

// Each '\n', '{' and ':' of `text` in order, 16 bytes at a time where SIMD
// exists: the scan over both whole texts is most of the alignment's cost.
template <typename Visit> void forEachMark(std::string_view text, Visit visit) {
  const char *base = text.data();
  size_t at = 0;
#ifdef SHARDLAB_HAS_BYTE_SCAN
  for (; at + ByteScan::kWidth <= text.size(); at += ByteScan::kWidth) {
    const ByteScan::Bytes bytes = ByteScan::load(base + at);
    unsigned marks = ByteScan::mask(
        ByteScan::any(ByteScan::equal(bytes, '\n'),
                      ByteScan::any(ByteScan::equal(bytes, '{'),
                                    ByteScan::equal(bytes, ':'))));
    for (; marks; marks &= marks - 1)
      visit(at + ByteScan::first(marks));
  }
#endif
  for (; at < text.size(); ++at)
    if (base[at] == '\n' || base[at] == '{' || base[at] == ':')
      visit(at);
}

std::vector<Line> splitLines(std::string_view text) {
  std::vector<Line> lines;
  size_t start = 0, skeleton_end = std::string_view::npos;
  forEachMark(text, [&](size_t at) {
    const char mark = text[at];
    if (mark == '\n') {
      lines.push_back(
          {text.substr(start, at - start), std::min(skeleton_end, at) - start});
      start = at + 1;
      skeleton_end = std::string_view::npos;
    } else if (skeleton_end == std::string_view::npos &&
               (mark == '{' || (at > start && at + 1 < text.size() &&
                                text[at - 1] == ' ' && text[at + 1] == ' '))) {
      skeleton_end = mark == '{' ? at : at - 1;
    }
  });
  lines.push_back(
      {text.substr(start), std::min(skeleton_end, text.size()) - start});
  return lines;
}

std::string_view trimmed(std::string_view text) {
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return {};
  size_t last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

// Skeletons with their hashes: most comparisons differ in the hash alone.
struct Skeletons {
  std::vector<std::string_view> text;
  std::vector<uint64_t> hash;

  explicit Skeletons(const std::vector<Line> &lines) {
    text.reserve(lines.size());
    hash.reserve(lines.size());
    for (const Line &line : lines) {
      text.push_back(trimmed(line.text.substr(0, line.skeleton_end)));
      hash.push_back(hashString(text.back()));
    }
  }
  size_t size() const { return text.size(); }
  bool same(size_t i, const Skeletons &other, size_t j) const {
    return hash[i] == other.hash[j] && text[i] == other.text[j];
  }
};

using Pairs = std::vector<std::pair<size_t, size_t>>;

// How far ahead in the input the greedy alignment looks for a line.
constexpr size_t kWindow = 64;
// Above this many cells the LCS table gives way to the greedy alignment.
constexpr size_t kMaxLcsCells = 250'000;

// Each output line in [from, end_b) takes the first input line with its
// skeleton among the kWindow after the last one aligned (in [from, end_a)).
void alignGreedy(const Skeletons &ka, const Skeletons &kb, size_t from,
                 size_t end_a, size_t end_b, Pairs &pairs) {
  size_t next = from; // the input lines before it are aligned or passed
  for (size_t j = from; j < end_b; ++j) {
    const size_t limit = std::min(end_a, next + kWindow);
    for (size_t i = next; i < limit; ++i)
      if (ka.same(i, kb, j)) {
        pairs.emplace_back(i, j);
        next = i + 1;
        break;
      }
  }
}

void alignLcs(const Skeletons &ka, const Skeletons &kb, size_t head, size_t n,
              size_t m, Pairs &pairs) {
  std::vector<uint32_t> table((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t & {
    return table[i * (m + 1) + j];
  };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = ka.same(head + i, kb, head + j)
                     ? at(i + 1, j + 1) + 1
                     : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (ka.same(head + i, kb, head + j))
      pairs.emplace_back(head + i++, head + j++);
    else if (at(i + 1, j) >= at(i, j + 1))
      ++i;
    else
      ++j;
  }
}

Pairs alignLines(const std::vector<Line> &a, const std::vector<Line> &b) {
  const Skeletons ka(a), kb(b);
  size_t head = 0;
  while (head < ka.size() && head < kb.size() && ka.same(head, kb, head))
    ++head;
  size_t tail = 0;
  while (tail < ka.size() - head && tail < kb.size() - head &&
         ka.same(ka.size() - 1 - tail, kb, kb.size() - 1 - tail))
    ++tail;
  Pairs pairs;
  for (size_t i = 0; i < head; ++i)
    pairs.emplace_back(i, i);
  const size_t n = a.size() - head - tail, m = b.size() - head - tail;
  if (n > 0 && m > 0) {
    if (n * m > kMaxLcsCells)
      alignGreedy(ka, kb, head, head + n, head + m, pairs);
    else
      alignLcs(ka, kb, head, n, m, pairs);
  }
  for (size_t t = tail; t > 0; --t)
    pairs.emplace_back(a.size() - t, b.size() - t);
  return pairs;
}

// A UTF-8 byte's share of UTF-16 units: a continuation byte none, the
// lead of a 4-byte character (a surrogate pair) two, any other one.
uint32_t unitsOfByte(unsigned char byte) {
  return (byte & 0xC0) == 0x80 ? 0 : (byte >= 0xF0 ? 2 : 1);
}

// The UTF-16 length of UTF-8 `text`: what an editor's columns count.
// Printed modules are ASCII but for strings and locations: eight bytes
// without a high bit are eight units.
uint32_t utf16Length(std::string_view text) {
  uint32_t units = 0;
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    if ((word & 0x8080808080808080ULL) == 0) {
      units += 8;
      continue;
    }
    for (size_t k = i; k < i + 8; ++k)
      units += unitsOfByte(static_cast<unsigned char>(text[k]));
  }
  for (; i < text.size(); ++i)
    units += unitsOfByte(static_cast<unsigned char>(text[i]));
  return units;
}

} // namespace

std::vector<LineChange> changedSpans(std::string_view input,
                                     std::string_view output) {
  const std::vector<Line> a = splitLines(input);
  const std::vector<Line> b = splitLines(output);
  std::vector<LineChange> changes;
  std::vector<bool> aligned(b.size(), false);
  for (auto [i, j] : alignLines(a, b)) {
    aligned[j] = true;
    std::string_view x = a[i].text, y = b[j].text;
    if (x == y)
      continue;
    size_t prefix = 0;
    while (prefix < x.size() && prefix < y.size() && x[prefix] == y[prefix])
      ++prefix;
    size_t suffix = 0;
    while (suffix < x.size() - prefix && suffix < y.size() - prefix &&
           x[x.size() - 1 - suffix] == y[y.size() - 1 - suffix])
      ++suffix;
    // A prefix or suffix ending inside a multi-byte character keeps it
    // whole in the change.
    while (prefix > 0 && (static_cast<unsigned char>(y[prefix]) & 0xC0) == 0x80)
      --prefix;
    size_t end = y.size() - suffix;
    while (end < y.size() &&
           (static_cast<unsigned char>(y[end]) & 0xC0) == 0x80)
      ++end;
    const uint32_t from = utf16Length(y.substr(0, prefix));
    changes.push_back({uint32_t(j + 1), from,
                       from + utf16Length(y.substr(prefix, end - prefix)),
                       false});
  }
  for (size_t j = 0; j < b.size(); ++j)
    if (!aligned[j] && !trimmed(b[j].text).empty())
      changes.push_back({uint32_t(j + 1), 0, utf16Length(b[j].text), true});
  std::sort(
      changes.begin(), changes.end(),
      [](const LineChange &u, const LineChange &v) { return u.line < v.line; });
  return changes;
}

} // namespace shardlab::api
