// Internal to the API: non-throwing reads of request options from JSON and
// the shapes of error replies. A wrong type or an out-of-range value is an
// error message naming the field, never an exception.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::api::detail {

using nlohmann::json;

/// Parses JSON text without exceptions; a discarded value on failure.
json parseJson(std::string_view text);

/// Reads an array of non-negative integers; false for anything else.
bool readIntegerArray(const json &value, std::vector<int64_t> &out);

/// {"ok": false, "error": message}.
std::string errorReply(std::string_view message);

/// Dumps `reply` (invalid UTF-8 replaced, never throws).
std::string dumpReply(const json &reply);

/// Dumps the object `reply` with more members whose values are already
/// JSON text (a streamed schedule, say), added after its own.
std::string dumpReplyWith(
    const json &reply,
    std::initializer_list<std::pair<std::string_view, std::string_view>>
        raw_fields);

/// Reads named fields of one JSON object (a request's options, a row read
/// back), collecting the first error, which names the field.
class OptionReader {
public:
  /// Optional: an absent field keeps its default (a request's options).
  /// Required: every field read must be present (a row read back).
  enum class Fields { Optional, Required };
  /// `where` names the object in errors: "options.phase: unknown field".
  explicit OptionReader(const json &object, std::string where = "options",
                        Fields fields = Fields::Optional);

  /// The raw field, or nullptr when absent or null.
  const json *get(const char *key) const;
  void string(const char *key, std::string &out);
  void boolean(const char *key, bool &out);
  void number(const char *key, double &out);
  /// An integer field in [min_value, max_value].
  void integer(const char *key, int64_t &out, int64_t min_value = 0,
               int64_t max_value = INT64_MAX);
  /// An integer field that must be present, whatever the mode.
  void requiredInteger(const char *key, int64_t &out, int64_t min_value = 0);
  /// An array of non-negative integers.
  void integers(const char *key, std::vector<int64_t> &out);
  void strings(const char *key, std::vector<std::string> &out);
  /// The array of objects `key`, each read by `item(reader of the item)`,
  /// a reader of this one's mode named `where.key[i]`.
  template <typename Item> void objects(const char *key, Item item) {
    const json *v = field(key, "an array of objects");
    if (v && !v->is_array())
      return fail(key, "an array of objects");
    for (size_t i = 0; v && i < v->size() && ok(); ++i) {
      if (!(*v)[i].is_object())
        return fail(key, "an array of objects");
      OptionReader reader(
          (*v)[i], where_ + "." + key + "[" + std::to_string(i) + "]", fields_);
      item(reader);
      if (!reader.ok())
        error_ = reader.error();
    }
  }
  /// Records an error for the first field not in `known` (the request's
  /// fields, request_fields.h, generated from schemas/api), naming them.
  void rejectUnknown(std::span<const std::string_view> known);
  /// Records an error about `key` unless one is already recorded.
  void fail(const char *key, const std::string &expected);

  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }

private:
  /// The field, or nullptr when absent (an error in Required mode, saying
  /// `what` was expected) or after an error.
  const json *field(const char *key, const char *what);

  const json &object_;
  std::string where_;
  Fields fields_;
  std::string error_;
};

} // namespace shardlab::api::detail
