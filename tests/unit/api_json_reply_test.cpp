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

TEST_CASE("dumpReply: every special byte at every offset of a word") {
  // The writer skips 8 or 16 plain bytes at a time; a byte that needs escaping
  // (or starts a multi-byte character, or is invalid) must be seen at
  // every position of such a word and of the tail after it.
  const std::string specials[] = {"\"",   "\\",       "\n",   "\x01", "\x1f",
                                  "\x7f", "\xc3\xa9", "\xff", " "};
  for (const std::string &special : specials)
    for (size_t at = 0; at < 35; ++at) { // two 16-byte strides and a tail
      std::string text(35, 'x');
      text.replace(at, 1, special);
      const json reply = {{"output", text}};
      CHECK_MESSAGE(dumpReply(reply) == reference(reply),
                    "special at offset " << at);
    }
}
