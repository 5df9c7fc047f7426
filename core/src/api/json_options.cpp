// Non-throwing option reading and reply rendering for the API.
#include "json_options.h"

#include <cstdint>
#include <cstring>

#include <algorithm>
#include <string>

namespace shardlab::api::detail {

json parseJson(std::string_view text) {
  return json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                     /*allow_exceptions=*/false);
}

std::string errorReply(std::string_view message) {
  json reply = {{"ok", false}, {"error", std::string(message)}};
  return dumpReply(reply);
}

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

// A JSON string as nlohmann::json writes it (ensure_ascii off): runs of
// plain bytes are copied at once. Strings with invalid UTF-8 go through
// nlohmann, which replaces the bad bytes; false when that is needed.
// Whether none of the 8 bytes at `at` needs a look: all ASCII, none below
// 0x20, no quote, no backslash (SWAR tests, 8 bytes at a time).
bool plainWord(const char *at) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  uint64_t word;
  std::memcpy(&word, at, 8);
  auto has_zero = [&](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t below_space = (word - kOnes * 0x20) & ~word & kHigh;
  return ((word & kHigh) | below_space | has_zero(word ^ (kOnes * '"')) |
          has_zero(word ^ (kOnes * '\\'))) == 0;
}

bool appendString(std::string &out, std::string_view text) {
  static const char *const kHex = "0123456789abcdef";
  out.push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    while (i + 8 <= text.size() && plainWord(text.data() + i))
      i += 8;
    if (i >= text.size())
      break;
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8Length(text, i);
      if (length == 0)
        return false;
      i += length - 1;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\')
      continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  out.append(text.data() + run, text.size() - run);
  out.push_back('"');
  return true;
}

void appendStringOrReplaced(std::string &out, const std::string &text) {
  const size_t mark = out.size();
  if (appendString(out, text))
    return;
  out.resize(mark);
  out += json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

void appendJson(std::string &out, const json &value) {
  switch (value.type()) {
  case json::value_t::object: {
    out.push_back('{');
    bool first = true;
    for (const auto &[key, item] : value.items()) {
      if (!first)
        out.push_back(',');
      first = false;
      appendStringOrReplaced(out, key);
      out.push_back(':');
      appendJson(out, item);
    }
    out.push_back('}');
    return;
  }
  case json::value_t::array: {
    out.push_back('[');
    for (size_t i = 0; i < value.size(); ++i) {
      if (i)
        out.push_back(',');
      appendJson(out, value[i]);
    }
    out.push_back(']');
    return;
  }
  case json::value_t::string:
    appendStringOrReplaced(out, value.get_ref<const std::string &>());
    return;
  case json::value_t::number_integer:
    out += std::to_string(value.get<int64_t>());
    return;
  case json::value_t::number_unsigned:
    out += std::to_string(value.get<uint64_t>());
    return;
  default: // floats, booleans, null: nlohmann's own spelling
    out += value.dump();
  }
}

} // namespace

std::string dumpReply(const json &reply) {
  // The same text as reply.dump(-1, ' ', false, replace) (module text or
  // user strings may hold invalid UTF-8: replaced, never thrown), written
  // without nlohmann's byte-by-byte escaping: a reply carries whole module
  // texts, and escaping them was 13% of an API call.
  std::string out;
  appendJson(out, reply);
  return out;
}

OptionReader::OptionReader(const json &object) : object_(object) {
  if (!object_.is_object())
    error_ = "options: expected a JSON object";
}

const json *OptionReader::get(const char *key) const {
  if (!object_.is_object())
    return nullptr;
  auto it = object_.find(key);
  return it == object_.end() || it->is_null() ? nullptr : &*it;
}

void OptionReader::rejectUnknown(std::span<const std::string_view> known) {
  if (!error_.empty() || !object_.is_object())
    return;
  for (const auto &[key, value] : object_.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end())
      continue;
    std::string list;
    for (std::string_view name : known)
      list += (list.empty() ? "" : ", ") + std::string(name);
    error_ = "options: unknown field '" + key + "'; the fields are " + list;
    return;
  }
}

void OptionReader::fail(const char *key, const std::string &expected) {
  if (error_.empty())
    error_ = std::string("options.") + key + ": expected " + expected;
}

void OptionReader::string(const char *key, std::string &out) {
  const json *value = get(key);
  if (!value)
    return;
  if (!value->is_string())
    return fail(key, "a string");
  out = value->get_ref<const std::string &>();
}

void OptionReader::boolean(const char *key, bool &out) {
  const json *value = get(key);
  if (!value)
    return;
  if (!value->is_boolean())
    return fail(key, "true or false");
  out = value->get<bool>();
}

namespace {

/// An integral JSON number in [lo, hi], or false.
bool readInteger(const json &value, int64_t lo, int64_t hi, int64_t &out) {
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX))
      return false;
    out = static_cast<int64_t>(v);
  } else if (value.is_number_integer()) {
    out = value.get<int64_t>();
  } else {
    return false;
  }
  return out >= lo && out <= hi;
}

} // namespace

void OptionReader::integer(const char *key, int64_t &out, int64_t min_value,
                           int64_t max_value) {
  const json *value = get(key);
  if (!value)
    return;
  int64_t v = 0;
  if (!readInteger(*value, min_value, max_value, v))
    return fail(key, "an integer in [" + std::to_string(min_value) + ", " +
                         std::to_string(max_value) + "]");
  out = v;
}

void OptionReader::requiredInteger(const char *key, int64_t &out,
                                   int64_t min_value) {
  if (!get(key))
    return fail(key, "an integer (required)");
  integer(key, out, min_value);
}

bool readIntegerArray(const json &value, std::vector<int64_t> &out) {
  if (!value.is_array())
    return false;
  std::vector<int64_t> result;
  for (const json &item : value) {
    int64_t v = 0;
    if (!readInteger(item, 0, INT64_MAX, v))
      return false;
    result.push_back(v);
  }
  out = std::move(result);
  return true;
}

void OptionReader::integers(const char *key, std::vector<int64_t> &out) {
  const json *value = get(key);
  if (value && !readIntegerArray(*value, out))
    fail(key, "an array of non-negative integers");
}

} // namespace shardlab::api::detail
