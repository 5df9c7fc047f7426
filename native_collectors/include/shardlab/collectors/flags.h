// A small command-line flag parser shared by the collectors: long flags
// (--name value, --name=value), short flags (-n 20, -n20), boolean flags,
// byte sizes with binary suffixes (1K, 2G) and integer lists (1,2,4 or
// 256..4096 doubling). Errors are returned as data, never thrown.
#pragma once

#include "shardlab/support/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::collectors {

using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

/// One accepted flag. `value_name` empty = boolean flag (no value).
struct FlagSpec {
  std::string long_name; // without the leading "--"
  char short_name = 0;   // 0 = none
  std::string value_name;
  std::string default_text; // shown in --help; "" = none
  std::string help;
};

/// Flags seen on the command line, by long name ("1" for boolean flags).
struct ParsedFlags {
  std::map<std::string, std::string> values;
  bool has(const std::string &name) const { return values.count(name) != 0; }
  /// The value given, or `fallback` when the flag was not given.
  std::string get(const std::string &name, const std::string &fallback) const;
};

/// Parses `args` (without the program name) against `specs`.
Result<ParsedFlags> parseFlags(const std::vector<FlagSpec> &specs,
                               const std::vector<std::string> &args);
/// Formats usage text: summary, one line per flag, then `epilogue`.
std::string formatHelp(const std::string &program, const std::string &summary,
                       const std::vector<FlagSpec> &specs,
                       const std::string &epilogue);

/// "1024", "1K", "32M", "2G", "1KiB" (binary suffixes) -> bytes (>= 1).
Result<int64_t> parseBytes(std::string_view text);
/// 1024 -> "1K", 3145728 -> "3M", 1000 -> "1000" (exact binary units only).
std::string formatBytes(int64_t bytes);
/// A positive integer ("20"); `what` names the flag in errors.
Result<int64_t> parsePositiveInt(std::string_view text, std::string_view what);
/// A number > 1 (the size step factor).
Result<double> parseFactor(std::string_view text, std::string_view what);
/// Comma-separated words, trimmed, empties dropped.
std::vector<std::string> splitList(std::string_view text);
/// "1,2,4", "256..4096" (doubling) or a mix ("1,16..64") -> sorted, unique.
Result<std::vector<int64_t>> parseIntList(std::string_view text,
                                          std::string_view what);

} // namespace shardlab::collectors
