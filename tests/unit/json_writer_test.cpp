// JsonWriter writes what nlohmann::json would dump for the same value.
#include "support/json_writer.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>

using nlohmann::json;
using shardlab::JsonWriter;

TEST_CASE(
    "JsonWriter: the same text as nlohmann for strings, numbers, nesting") {
  const std::string tricky =
      std::string("q\"b\\s\n\t\x01 é 𝔸 ") + "\xff\xfe bad";
  const double numbers[] = {0.1, -2.5e-300, 1e300, 3.0, 123456789.125};
  std::string out;
  JsonWriter w(out);
  w.beginObject().field("s", tricky).key("n").beginArray();
  for (double d : numbers)
    w.value(d);
  w.value(int64_t(-42)).value(true).null().endArray();
  w.key("empty").beginObject().endObject();
  w.key("nested").beginArray().beginArray().endArray().beginObject().field("k",
                                                                           "v");
  w.endObject().endArray().endObject();

  json expected;
  expected["s"] = tricky;
  expected["n"] = json::array();
  for (double d : numbers)
    expected["n"].push_back(d);
  expected["n"].push_back(-42);
  expected["n"].push_back(true);
  expected["n"].push_back(nullptr);
  expected["empty"] = json::object();
  expected["nested"] = json::array({json::array(), json{{"k", "v"}}});
  // Same value; keys come in writing order here, sorted in nlohmann.
  CHECK(json::parse(out) ==
        json::parse(
            expected.dump(-1, ' ', false, json::error_handler_t::replace)));
  // The string's own spelling is nlohmann's, byte for byte.
  std::string one;
  JsonWriter(one).value(tricky);
  CHECK(one ==
        json(tricky).dump(-1, ' ', false, json::error_handler_t::replace));
}

TEST_CASE("JsonWriter: NaN and infinities are null, as nlohmann writes them") {
  std::string out;
  JsonWriter(out)
      .beginArray()
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(std::numeric_limits<double>::infinity())
      .endArray();
  CHECK(out == "[null,null]");
}

TEST_CASE("appendJsonString: a byte that needs escaping at every position "
          "of the scan is escaped as nlohmann escapes it") {
  // The scan skips plain words and jumps to the first special byte of a
  // word; put each kind of special byte at every offset, after runs of
  // every length, with and without a second special byte behind it.
  const std::string specials[] = {"\"",   "\\", "\n",  std::string(1, '\x01'),
                                  "\x1f", "é",  "\xff"};
  for (const std::string &special : specials)
    for (size_t before = 0; before < 35; ++before) // two 16-byte strides
      for (const std::string &tail : {std::string(), std::string("\"x")}) {
        const std::string text =
            std::string(before, 'a') + special + std::string(9, 'b') + tail;
        std::string out;
        shardlab::appendJsonString(out, text);
        CAPTURE(before);
        CHECK(out ==
              json(text).dump(-1, ' ', false, json::error_handler_t::replace));
      }
}

TEST_CASE("appendJsonString: long strings dense with escapes cross the "
          "writer's chunk buffer intact") {
  // The writer gathers bytes in a small buffer; runs of 6-byte escapes,
  // multi-byte characters and plain strides must all survive its flushes.
  const std::string pieces[] = {
      "\x01", "\"", "é", "abcdefghijklmnopq", "\n", "\xe2\x82\xac", "x"};
  uint32_t state = 12345;
  std::string text;
  while (text.size() < 20000) {
    state = state * 1103515245u + 12345u;
    text += pieces[(state >> 16) % std::size(pieces)];
  }
  for (size_t length : {size_t{1000}, size_t{4099}, text.size()}) {
    std::string part = text.substr(0, length);
    while (!part.empty() && (static_cast<unsigned char>(part.back()) & 0xC0) ==
                                0x80) // whole characters only
      part.pop_back();
    std::string out;
    shardlab::appendJsonString(out, part);
    CAPTURE(length);
    CHECK(out ==
          json(part).dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

TEST_CASE("JsonWriter: short keys and strings, plain or not, spelled as "
          "nlohmann spells them") {
  // Up to 48 plain bytes take the short path; escapes, control bytes,
  // non-ASCII and invalid UTF-8 the full one, at and around the limit.
  const std::string cases[] = {"",
                               "ok",
                               "a\"b",
                               "back\\slash",
                               "tab\there",
                               "é",
                               "\xff",
                               std::string(48, 'k'),
                               std::string(49, 'k'),
                               std::string(47, 'k') + "\"",
                               std::string(48, 'k') + "\n"};
  for (const std::string &text : cases) {
    const std::string spelled =
        json(text).dump(-1, ' ', false, json::error_handler_t::replace);
    std::string value;
    JsonWriter(value).value(text);
    CHECK(value == spelled);
    std::string object;
    JsonWriter(object).beginObject().field(text, 1).endObject();
    CHECK(object == "{" + spelled + ":1}");
  }
}
