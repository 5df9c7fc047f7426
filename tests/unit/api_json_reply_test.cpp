// The API's reply writer (api/json_options.h dumpReply) gives the same text
// as nlohmann::json's dump with invalid UTF-8 replaced, which it replaces
// for speed on replies that carry whole modules.
#include "api/json_options.h"

#include <doctest/doctest.h>

using shardlab::api::detail::dumpReply;
using shardlab::api::detail::json;

namespace {

std::string reference(const json &value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

TEST_CASE("dumpReply writes what nlohmann writes") {
  std::string controls;
  for (int c = 0; c < 0x20; ++c)
    controls.push_back(static_cast<char>(c));
  const json reply = {
      {"ok", true},
      {"output", "module {\n  \"quoted\" \\ back\tslash\r\n}"},
      {"controls", controls + "\x7f"},
      {"utf8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"invalid", std::string("a\xff"
                              "b\xc0\xaf"
                              "c\xed\xa0\x80"
                              "d\xe2\x82")},
      {"key \xff", 1},
      {"numbers", {0, -7, 18446744073709551615ull, 1.5, 1e300, -0.25}},
      {"nested", {{"empty", json::object()}, {"list", json::array()}}},
      {"flags", {true, false, nullptr}},
  };
  CHECK(dumpReply(reply) == reference(reply));
  CHECK(dumpReply(json("")) == reference(json("")));
}
