// JsonWriter and JSON string escaping (see json_writer.h).
#include "support/json_writer.h"

#include "support/byte_scan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace shardlab {
namespace {

// The length of the valid UTF-8 sequence at `at` (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0.
size_t utf8Length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u;
  };
  const unsigned lead = byte(at);
  const auto tail = [&](size_t i, unsigned low = 0x80, unsigned high = 0xBF) {
    return byte(i) >= low && byte(i) <= high;
  };
  if (lead >= 0xC2 && lead <= 0xDF)
    return tail(at + 1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned high = lead == 0xED ? 0x9F : 0xBF;
    return tail(at + 1, low, high) && tail(at + 2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned high = lead == 0xF4 ? 0x8F : 0xBF;
    return tail(at + 1, low, high) && tail(at + 2) && tail(at + 3) ? 4 : 0;
  }
  return 0;
}

// How many of the kStride bytes at `at` need no look: the count before the
// first that does (non-ASCII, below 0x20, a quote or a backslash).
#if defined(SHARDLAB_HAS_BYTE_SCAN)
// A signed compare with 0x20 catches both the control bytes and the bytes
// >= 0x80, which are negative as signed chars.
constexpr size_t kStride = ByteScan::kWidth;
size_t plainPrefix(const char *at) {
  const ByteScan::Bytes bytes = ByteScan::load(at);
  return ByteScan::first(ByteScan::mask(ByteScan::any(
      ByteScan::any(ByteScan::equal(bytes, '"'), ByteScan::equal(bytes, '\\')),
      ByteScan::lessSigned(bytes, 0x20))));
}
#else
// 8 bytes as one word (SWAR). For an ASCII byte x, x + 0x60 reaches 0x80
// exactly when x >= 0x20, and (t + 0x7F) | t has its high bit clear exactly
// when t == 0; no sum of ASCII bytes carries into the next byte. A byte
// >= 0x80 is flagged itself (and its carry may flag bytes above it), so the
// lowest flagged byte is always exact.
constexpr size_t kStride = 8;
size_t plainPrefix(const char *at) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = kOnes * 0x80;
  uint64_t word;
  std::memcpy(&word, at, 8);
  const uint64_t quote = word ^ (kOnes * '"');
  const uint64_t backslash = word ^ (kOnes * '\\');
  const uint64_t plain = (word + kOnes * 0x60) &
                         ((quote + kOnes * 0x7F) | quote) &
                         ((backslash + kOnes * 0x7F) | backslash);
  const uint64_t special = (~plain | word) & kHigh;
  return special ? static_cast<size_t>(__builtin_ctzll(special)) / 8 : kStride;
}
#endif
// A JSON string as nlohmann::json writes it (ensure_ascii off), plain
// bytes copied a word at a time. Strings with invalid UTF-8 go through
// nlohmann, which replaces the bad bytes; false when that is needed.
bool appendString(std::string &out, std::string_view text) {
  static const char *const kHex = "0123456789abcdef";
  // Room for the text, growing geometrically: a reply appends thousands of
  // strings, and reserving each one's size exactly made libc++ (the WASM
  // build's) copy the whole reply every time, quadratic.
  const size_t need = out.size() + text.size() + text.size() / 16 + 2;
  if (need > out.capacity())
    out.reserve(std::max(need, 2 * out.capacity()));
  out.push_back('"');
  // Bytes go through a small buffer that joins the output in chunks: an
  // append per escape was most of the cost (shardings quote axis names).
  char buffer[1024];
  size_t used = 0;
  const char *at = text.data();
  const char *const end = at + text.size();
  while (at < end) {
    // Room for a stride, then up to a stride of plain bytes and an escape.
    if (used > sizeof(buffer) - 2 * kStride - 8) {
      out.append(buffer, used);
      used = 0;
    }
    if (static_cast<size_t>(end - at) >= kStride) {
      // Copy the stride; keep the bytes before the first special one.
      const size_t plain = plainPrefix(at);
      std::memcpy(buffer + used, at, kStride);
      used += plain;
      at += plain;
      if (plain == kStride)
        continue;
    }
    const auto c = static_cast<unsigned char>(*at);
    if (c >= 0x80) {
      const size_t length =
          utf8Length(text, static_cast<size_t>(at - text.data()));
      if (length == 0)
        return false;
      for (size_t k = 0; k < length; ++k)
        buffer[used++] = at[k];
      at += length;
      continue;
    }
    ++at;
    if (c >= 0x20 && c != '"' && c != '\\') {
      buffer[used++] = static_cast<char>(c);
      continue;
    }
    buffer[used++] = '\\';
    switch (c) {
    case '"':
    case '\\':
      buffer[used++] = static_cast<char>(c);
      break;
    case '\b':
      buffer[used++] = 'b';
      break;
    case '\f':
      buffer[used++] = 'f';
      break;
    case '\n':
      buffer[used++] = 'n';
      break;
    case '\r':
      buffer[used++] = 'r';
      break;
    case '\t':
      buffer[used++] = 't';
      break;
    default:
      for (char digit : {'u', '0', '0', kHex[c >> 4], kHex[c & 15]})
        buffer[used++] = digit;
    }
  }
  out.append(buffer, used);
  out.push_back('"');
  return true;
}

// Keys and short names: nothing to escape, so checked with a byte loop and
// appended whole, with what follows (`:` after a key), in one append (the
// buffered escaper above costs more than that on a 10-byte key).
constexpr size_t kShortString = 48;

bool plainShort(std::string_view text) {
  if (text.size() > kShortString)
    return false;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
      return false;
  }
  return true;
}

void appendQuoted(std::string &out, std::string_view text, char after) {
  char buffer[kShortString + 3];
  size_t used = 0;
  buffer[used++] = '"';
  std::memcpy(buffer + used, text.data(), text.size());
  used += text.size();
  buffer[used++] = '"';
  if (after)
    buffer[used++] = after;
  out.append(buffer, used);
}

} // namespace

void appendJsonString(std::string &out, std::string_view text) {
  if (plainShort(text)) {
    appendQuoted(out, text, '\0');
    return;
  }
  const size_t mark = out.size();
  if (appendString(out, text))
    return;
  out.resize(mark);
  out += nlohmann::json(std::string(text))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonWriter::beforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!started_.empty()) {
    if (started_.back())
      out_.push_back(',');
    started_.back() = true;
  }
}

JsonWriter &JsonWriter::beginObject() {
  beforeValue();
  out_.push_back('{');
  started_.push_back(false);
  return *this;
}

JsonWriter &JsonWriter::endObject() {
  out_.push_back('}');
  started_.pop_back();
  return *this;
}

JsonWriter &JsonWriter::beginArray() {
  beforeValue();
  out_.push_back('[');
  started_.push_back(false);
  return *this;
}

JsonWriter &JsonWriter::endArray() {
  out_.push_back(']');
  started_.pop_back();
  return *this;
}

JsonWriter &JsonWriter::key(std::string_view name) {
  beforeValue();
  if (plainShort(name)) {
    appendQuoted(out_, name, ':');
  } else {
    appendJsonString(out_, name);
    out_.push_back(':');
  }
  after_key_ = true;
  return *this;
}

JsonWriter &JsonWriter::value(std::string_view text) {
  beforeValue();
  appendJsonString(out_, text);
  return *this;
}

JsonWriter &JsonWriter::value(double number) {
  beforeValue();
  // nlohmann's spelling (shortest round trip); it writes null for NaN and
  // the infinities, as JSON has no spelling for them.
  out_ += nlohmann::json(number).dump();
  return *this;
}

JsonWriter &JsonWriter::value(int64_t number) {
  beforeValue();
  // to_chars into the stack: a report writes millions of these.
  char digits[24];
  out_.append(digits,
              std::to_chars(digits, digits + sizeof digits, number).ptr);
  return *this;
}

JsonWriter &JsonWriter::value(bool flag) {
  beforeValue();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter &JsonWriter::null() {
  beforeValue();
  out_ += "null";
  return *this;
}

JsonWriter &JsonWriter::raw(std::string_view json) {
  beforeValue();
  out_ += json;
  return *this;
}

} // namespace shardlab
