// Module text varied in tests: one module written once, then edited by
// replacing parts of it (a shape scaled, a sharding changed, an op added).
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

namespace shardlab::test {

using TextEdits = std::vector<std::pair<std::string, std::string>>;

/// `text` with every `from` replaced by `to` (a `to` that contains `from`
/// is not replaced again).
inline std::string replacedAll(std::string text, const std::string &from,
                               const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// `text` with each edit's `from` replaced everywhere, in order.
inline std::string replacedAll(std::string text, const TextEdits &edits) {
  for (const auto &[from, to] : edits)
    text = replacedAll(std::move(text), from, to);
  return text;
}

/// `text` with its first `from` replaced by `to`; the test fails where
/// `text` has no `from` (the edit would silently test the unedited text).
inline std::string replacedOnce(std::string text, const std::string &from,
                                const std::string &to) {
  const size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "not in the text: " << from);
  return text.replace(at, from.size(), to);
}

} // namespace shardlab::test
