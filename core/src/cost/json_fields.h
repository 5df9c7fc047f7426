// Internal: typed, non-throwing access to JSON object fields that records
// "<path>.<field>: expected ..., got ..." errors instead of throwing.
#pragma once

#include "shardlab/cost/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::cost::detail {

using nlohmann::json;

/// Parses JSON text without exceptions; the error says line and column.
Result<json> ParseJsonText(std::string_view text);

/// A short description of a JSON value's type and content for messages.
std::string Describe(const json &value);

/// Collects field errors while reading one JSON object at `path`.
class FieldReader {
public:
  FieldReader(const json &object, std::string path,
              std::vector<std::string> *errors);

  bool is_object() const { return object_.is_object(); }
  bool Has(const char *key) const;
  const json *Get(const char *key) const;
  /// Reads an integer >= min_value; absent is an error when required.
  bool Int(const char *key, int64_t *out, bool required, int64_t min_value);
  /// Reads a finite number > 0 (or >= 0 when allow_zero).
  bool Positive(const char *key, double *out, bool required,
                bool allow_zero = false);
  bool String(const char *key, std::string *out, bool required);
  /// Records an error on `key`.
  void Fail(const char *key, const std::string &expected,
            const json *got = nullptr);
  std::string FieldPath(const char *key) const;

private:
  const json &object_;
  std::string path_;
  std::vector<std::string> *errors_;
};

/// Joins collected errors into one Error (first 50 shown).
Error JoinErrors(const std::vector<std::string> &errors);

} // namespace shardlab::cost::detail
