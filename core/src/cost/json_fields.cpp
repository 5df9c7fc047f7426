// Internal: typed, non-throwing JSON field access with located errors.
#include "json_fields.h"

#include <cmath>

namespace shardlab::cost::detail {
namespace {

// SAX handler that builds the DOM and keeps the parse error message.
class ErrorKeepingSax : public nlohmann::detail::json_sax_dom_parser<json> {
public:
  explicit ErrorKeepingSax(json &result)
      : nlohmann::detail::json_sax_dom_parser<json>(result, false) {}
  bool parse_error(std::size_t position, const std::string &last_token,
                   const nlohmann::detail::exception &ex) {
    message = std::string(ex.what()) + " (byte " + std::to_string(position) +
              ", near '" + last_token.substr(0, 40) + "')";
    return false;
  }
  std::string message;
};

} // namespace

Result<json> parseJsonText(std::string_view text) {
  json root;
  ErrorKeepingSax sax(root);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax,
                                  nlohmann::detail::input_format_t::json,
                                  /*strict=*/true);
  if (!ok || !sax.message.empty())
    return makeError("invalid JSON: " + sax.message);
  return root;
}

std::string describe(const json &value) {
  std::string text = value.dump();
  if (text.size() > 60)
    text = text.substr(0, 57) + "...";
  return std::string(value.type_name()) + " " + text;
}

FieldReader::FieldReader(const json &object, std::string path,
                         std::vector<std::string> *errors)
    : object_(object), path_(std::move(path)), errors_(errors) {
  if (!object_.is_object())
    errors_->push_back(path_ + ": expected an object, got " +
                       describe(object_));
}

bool FieldReader::has(const char *key) const { return get(key) != nullptr; }

const json *FieldReader::get(const char *key) const {
  if (!object_.is_object())
    return nullptr;
  auto it = object_.find(key);
  return it == object_.end() || it->is_null() ? nullptr : &*it;
}

std::string FieldReader::fieldPath(const char *key) const {
  return path_.empty() ? std::string(key) : path_ + "." + key;
}

void FieldReader::fail(const char *key, const std::string &expected,
                       const json *got) {
  std::string msg = fieldPath(key) + ": expected " + expected;
  msg += got ? ", got " + describe(*got) : " (field is missing)";
  errors_->push_back(msg);
}

bool FieldReader::integer(const char *key, int64_t *out, bool required,
                          int64_t min_value) {
  const json *v = get(key);
  const std::string expected = "an integer >= " + std::to_string(min_value);
  if (!v) {
    if (required)
      fail(key, expected);
    return false;
  }
  if (!v->is_number_integer() ||
      (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX)) ||
      v->get<int64_t>() < min_value) {
    fail(key, expected, v);
    return false;
  }
  *out = v->get<int64_t>();
  return true;
}

bool FieldReader::positive(const char *key, double *out, bool required,
                           bool allow_zero) {
  const json *v = get(key);
  const char *expected =
      allow_zero ? "a finite number >= 0" : "a finite number > 0";
  if (!v) {
    if (required)
      fail(key, expected);
    return false;
  }
  if (!v->is_number() || !std::isfinite(v->get<double>()) ||
      v->get<double>() < 0 || (!allow_zero && v->get<double>() == 0)) {
    fail(key, expected, v);
    return false;
  }
  *out = v->get<double>();
  return true;
}

bool FieldReader::string(const char *key, std::string *out, bool required) {
  const json *v = get(key);
  if (!v) {
    if (required)
      fail(key, "a string");
    return false;
  }
  if (!v->is_string()) {
    fail(key, "a string", v);
    return false;
  }
  *out = v->get<std::string>();
  return true;
}

Error joinErrors(const std::vector<std::string> &errors) {
  std::string msg;
  for (size_t i = 0; i < errors.size() && i < 50; ++i)
    msg += i > 0 ? "\n" + errors[i] : errors[i];
  if (errors.size() > 50)
    msg += "\n... and " + std::to_string(errors.size() - 50) + " more";
  return makeError(msg);
}

} // namespace shardlab::cost::detail
