// Internal: typed, non-throwing access to JSON object fields that records
// "<path>.<field>: expected ..., got ..." errors instead of throwing.
#pragma once

#include "shardlab/support/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::cost::detail {

using nlohmann::json;

/// Parses JSON text without exceptions; the error says line and column.
Result<json> parseJsonText(std::string_view text);

/// A short description of a JSON value's type and content for messages.
std::string describe(const json &value);

/// Collects field errors while reading one JSON object at `path`.
class FieldReader {
public:
  FieldReader(const json &object, std::string path,
              std::vector<std::string> *errors);

  bool is_object() const { return object_.is_object(); }
  bool has(const char *key) const;
  const json *get(const char *key) const;
  /// Reads an integer >= min_value; absent is an error when required.
  bool integer(const char *key, int64_t *out, bool required, int64_t min_value);
  /// Reads a finite number > 0 (or >= 0 when allow_zero).
  bool positive(const char *key, double *out, bool required,
                bool allow_zero = false);
  bool string(const char *key, std::string *out, bool required);
  /// Records an error on `key`.
  void fail(const char *key, const std::string &expected,
            const json *got = nullptr);
  std::string fieldPath(const char *key) const;

private:
  const json &object_;
  std::string path_;
  std::vector<std::string> *errors_;
};

/// Joins collected errors into one Error (first 50 shown).
Error joinErrors(const std::vector<std::string> &errors);

} // namespace shardlab::cost::detail
