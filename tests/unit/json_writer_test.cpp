// JsonWriter writes what nlohmann::json would dump for the same value.
#include "support/json_writer.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

using nlohmann::json;
using shardlab::JsonWriter;

TEST_CASE("JsonWriter: the same text as nlohmann for strings, numbers, nesting") {
  const std::string tricky = std::string("q\"b\\s\n\t\x01 é 𝔸 ") + "\xff\xfe bad";
  const double numbers[] = {0.1, -2.5e-300, 1e300, 3.0, 123456789.125};
  std::string out;
  JsonWriter w(out);
  w.beginObject().field("s", tricky).key("n").beginArray();
  for (double d : numbers)
    w.value(d);
  w.value(int64_t(-42)).value(true).null().endArray();
  w.key("empty").beginObject().endObject();
  w.key("nested").beginArray().beginArray().endArray().beginObject().field(
      "k", "v");
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
        json::parse(expected.dump(-1, ' ', false,
                                  json::error_handler_t::replace)));
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
