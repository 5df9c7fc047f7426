// Non-throwing option reading and reply rendering for the API.
#include "json_options.h"

#include "support/json_writer.h"

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

void appendJson(std::string &out, const json &value) {
  switch (value.type()) {
  case json::value_t::object: {
    out.push_back('{');
    bool first = true;
    for (const auto &[key, item] : value.items()) {
      if (!first)
        out.push_back(',');
      first = false;
      appendJsonString(out, key);
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
    appendJsonString(out, value.get_ref<const std::string &>());
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

std::string dumpReplyWith(
    const json &reply,
    std::initializer_list<std::pair<std::string_view, std::string_view>>
        raw_fields) {
  std::string out = dumpReply(reply);
  if (out.empty() || out.back() != '}')
    return out;
  out.pop_back();
  // One allocation for the whole reply: a schedule's report at 1M ops is
  // hundreds of MB, and growing into it would copy the text before it.
  size_t room = out.size() + 1;
  for (const auto &[key, value] : raw_fields)
    room += key.size() + value.size() + 4;
  out.reserve(room);
  for (const auto &[key, value] : raw_fields) {
    if (out.size() > 1)
      out.push_back(',');
    appendJsonString(out, key);
    out.push_back(':');
    out += value;
  }
  out.push_back('}');
  return out;
}

OptionReader::OptionReader(const json &object, std::string where, Fields fields)
    : object_(object), where_(std::move(where)), fields_(fields) {
  if (!object_.is_object())
    error_ = where_ + ": expected a JSON object";
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
    error_ = where_ + ": unknown field '" + key + "'; the fields are " + list;
    return;
  }
}

void OptionReader::fail(const char *key, const std::string &expected) {
  if (error_.empty())
    error_ = where_ + "." + key + ": expected " + expected;
}

const json *OptionReader::field(const char *key, const char *what) {
  if (!ok())
    return nullptr;
  const json *value = get(key);
  if (!value && fields_ == Fields::Required)
    fail(key, what);
  return value;
}

void OptionReader::string(const char *key, std::string &out) {
  const json *value = field(key, "a string");
  if (!value)
    return;
  if (!value->is_string())
    return fail(key, "a string");
  out = value->get_ref<const std::string &>();
}

void OptionReader::boolean(const char *key, bool &out) {
  const json *value = field(key, "true or false");
  if (!value)
    return;
  if (!value->is_boolean())
    return fail(key, "true or false");
  out = value->get<bool>();
}

void OptionReader::number(const char *key, double &out) {
  const json *value = field(key, "a number");
  if (!value)
    return;
  if (!value->is_number())
    return fail(key, "a number");
  out = value->get<double>();
}

void OptionReader::strings(const char *key, std::vector<std::string> &out) {
  const json *value = field(key, "an array of strings");
  if (!value)
    return;
  std::vector<std::string> read;
  for (size_t i = 0; value->is_array() && i < value->size(); ++i)
    if ((*value)[i].is_string())
      read.push_back((*value)[i].get<std::string>());
  if (!value->is_array() || read.size() != value->size())
    return fail(key, "an array of strings");
  out = std::move(read);
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

// "an integer in [1, 64]", "an integer >= 1", "a non-negative integer".
std::string integerRange(int64_t min_value, int64_t max_value) {
  if (max_value != INT64_MAX)
    return "an integer in [" + std::to_string(min_value) + ", " +
           std::to_string(max_value) + "]";
  return min_value == 0 ? "a non-negative integer"
                        : "an integer >= " + std::to_string(min_value);
}

} // namespace

void OptionReader::integer(const char *key, int64_t &out, int64_t min_value,
                           int64_t max_value) {
  const json *value = field(key, "an integer");
  if (!value)
    return;
  int64_t v = 0;
  if (!readInteger(*value, min_value, max_value, v))
    return fail(key, integerRange(min_value, max_value));
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
  const json *value = field(key, "an array of non-negative integers");
  if (value && !readIntegerArray(*value, out))
    fail(key, "an array of non-negative integers");
}

} // namespace shardlab::api::detail
