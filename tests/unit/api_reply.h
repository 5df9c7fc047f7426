// The tests of the JSON API read its replies through this: a reply must be
// a JSON object with an "ok" field, whatever went wrong.
#pragma once

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

inline nlohmann::json reply(const std::string &text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  REQUIRE_FALSE(parsed.is_discarded());
  REQUIRE(parsed.is_object());
  REQUIRE(parsed.contains("ok"));
  return parsed;
}
