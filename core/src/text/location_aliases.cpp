#include "location_aliases.h"

#include "support/text_sink.h"

#include <algorithm>
#include <utility>

namespace shardlab {

namespace {

using Span = std::pair<size_t, size_t>; ///< [begin, end) in a location's text

// The index past the string literal that starts at `at` (a `"`).
size_t skipString(std::string_view text, size_t at) {
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"')
      return i + 1;
  }
  return text.size();
}

// The index of the bracket that closes the one at `at`, strings skipped.
size_t closingBracket(std::string_view text, size_t at) {
  int depth = 0;
  for (size_t i = at; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      i = skipString(text, i);
      continue;
    }
    if (c == '(' || c == '[' || c == '<' || c == '{')
      ++depth;
    else if ((c == ')' || c == ']' || c == '>' || c == '}') && --depth == 0)
      return i;
    ++i;
  }
  return text.size();
}

// [begin, end) split at each `separator` outside strings and brackets.
std::vector<Span> splitTopLevel(std::string_view text, size_t begin, size_t end,
                                std::string_view separator) {
  std::vector<Span> parts;
  size_t start = begin;
  for (size_t i = begin; i < end;) {
    const char c = text[i];
    if (c == '"') {
      i = skipString(text, i);
    } else if (c == '(' || c == '[' || c == '<' || c == '{') {
      i = closingBracket(text, i) + 1;
    } else if (text.substr(i, separator.size()) == separator) {
      parts.push_back({start, i});
      i += separator.size();
      start = i;
    } else {
      ++i;
    }
  }
  parts.push_back({start, end});
  return parts;
}

// The locations directly inside a location, in MLIR's syntax:
//   "name"(child)   callsite(callee at caller)   fused<meta>[a, b]
// A file location, a bare name (its child unknown) and `unknown` hold none.
std::vector<Span> partsOf(std::string_view text) {
  if (!text.empty() && text[0] == '"') {
    const size_t name_end = skipString(text, 0);
    if (name_end < text.size() && text[name_end] == '(')
      return {{name_end + 1, closingBracket(text, name_end)}};
    return {};
  }
  constexpr std::string_view kCallSite = "callsite(";
  if (text.starts_with(kCallSite))
    return splitTopLevel(text, kCallSite.size(), text.size() - 1, " at ");
  if (text.starts_with("fused")) {
    size_t at = 5;
    if (at < text.size() && text[at] == '<')
      at = closingBracket(text, at) + 1;
    if (at < text.size() && text[at] == '[')
      return splitTopLevel(text, at + 1, closingBracket(text, at), ", ");
  }
  return {};
}

} // namespace

void LocationAliases::visit(std::string_view text, bool deferred) {
  visitEntry(text, deferred);
}

size_t LocationAliases::visitEntry(std::string_view text, bool deferred) {
  if (auto it = index_.find(std::string(text)); it != index_.end()) {
    if (!deferred)
      markNotDeferred(it->second);
    return it->second;
  }
  const size_t entry = entries_.size();
  entries_.push_back({std::string(text), {}, 0, deferred, 0});
  index_.emplace(std::string(text), entry);
  for (const auto &[begin, end] : partsOf(text)) {
    // entries_ grows while the part is visited: index, do not hold.
    const size_t part = visitEntry(text.substr(begin, end - begin), deferred);
    entries_[entry].parts.push_back(part);
    entries_[entry].depth =
        std::max(entries_[entry].depth, entries_[part].depth + 1);
  }
  return entry;
}

void LocationAliases::markNotDeferred(size_t entry) {
  if (!entries_[entry].deferred)
    return;
  entries_[entry].deferred = false;
  for (size_t part : entries_[entry].parts)
    markNotDeferred(part);
}

void LocationAliases::assignNames() {
  by_number_.resize(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i)
    by_number_[i] = i;
  std::stable_sort(by_number_.begin(), by_number_.end(),
                   [&](size_t a, size_t b) {
                     return entries_[a].depth < entries_[b].depth;
                   });
  for (size_t n = 0; n < by_number_.size(); ++n)
    entries_[by_number_[n]].number = n;
}

void LocationAliases::appendNumber(TextSink &out, size_t entry) const {
  out += "#loc";
  if (entries_[entry].number)
    out.appendDecimal(int64_t(entries_[entry].number));
}

void LocationAliases::appendAlias(TextSink &out, std::string_view text) const {
  auto it = index_.find(std::string(text));
  if (it == index_.end()) { // not visited: spelled out
    out += text;
    return;
  }
  appendNumber(out, it->second);
}

void LocationAliases::appendWithPartAliases(TextSink &out,
                                            std::string_view text) const {
  size_t copied = 0;
  for (const auto &[begin, end] : partsOf(text)) {
    out += text.substr(copied, begin - copied);
    appendAlias(out, text.substr(begin, end - begin));
    copied = end;
  }
  out += text.substr(copied);
}

void LocationAliases::appendDefinitions(TextSink &out, bool deferred) const {
  for (size_t entry : by_number_) {
    if (entries_[entry].deferred != deferred)
      continue;
    appendNumber(out, entry);
    out += " = loc(";
    appendWithPartAliases(out, entries_[entry].text);
    out += ")\n";
  }
}

} // namespace shardlab
