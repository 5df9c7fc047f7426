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

/// Reads named fields of one options object, collecting the first error.
class OptionReader {
public:
  /// `where` names the object in errors: "options.phase: unknown field".
  explicit OptionReader(const json &object, std::string where = "options");

  /// The raw field, or nullptr when absent or null.
  const json *get(const char *key) const;
  /// A string field; keeps `out` when absent.
  void string(const char *key, std::string &out);
  /// A boolean field; keeps `out` when absent.
  void boolean(const char *key, bool &out);
  /// An integer field in [min_value, max_value]; keeps `out` when absent.
  void integer(const char *key, int64_t &out, int64_t min_value = 0,
               int64_t max_value = INT64_MAX);
  /// An integer field that must be present.
  void requiredInteger(const char *key, int64_t &out, int64_t min_value = 0);
  /// An array of non-negative integers; keeps `out` when absent.
  void integers(const char *key, std::vector<int64_t> &out);
  /// Records an error for the first field not in `known` (the request's
  /// fields, request_fields.h, generated from schemas/api), naming them.
  void rejectUnknown(std::span<const std::string_view> known);
  /// Records an error about `key` unless one is already recorded.
  void fail(const char *key, const std::string &expected);

  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }

private:
  const json &object_;
  std::string where_;
  std::string error_;
};

} // namespace shardlab::api::detail
