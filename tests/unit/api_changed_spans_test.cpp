// The playground's changed spans (api/changed_spans.h): what a pipeline
// changed in each output line against the printed input.
#include "api/changed_spans.h"
#include "shardlab/api/playground_api.h"

#include "api_reply.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace shardlab;
using api::changedSpans;
using api::LineChange;

TEST_CASE("a gained sharding is changed from its brace to before the type") {
  std::string input = "func.func @f() {\n"
                      "  %0 = stablehlo.add %a, %a : tensor<8xf32>\n"
                      "}";
  std::string output = "func.func @f() {\n"
                       "  %0 = stablehlo.add %a, %a {sdy.sharding = s} : "
                       "tensor<8xf32>\n"
                       "}";
  std::vector<LineChange> changes = changedSpans(input, output);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].line == 2);
  CHECK_FALSE(changes[0].inserted);
  const std::string line = "  %0 = stablehlo.add %a, %a {sdy.sharding = s} : "
                           "tensor<8xf32>";
  CHECK(line.substr(changes[0].from, changes[0].to - changes[0].from) ==
        "{sdy.sharding = s} ");
}

TEST_CASE("an inserted op is changed whole; equal lines are not changed") {
  std::string input = "a = x\nb = y\nc = z";
  std::string output = "a = x\nb = y\n  r = stablehlo.all_reduce\nc = z";
  std::vector<LineChange> changes = changedSpans(input, output);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].line == 3);
  CHECK(changes[0].inserted);
  CHECK(changes[0].from == 0);
  CHECK(changes[0].to == 26);
  CHECK(changedSpans(input, input).empty());
}

TEST_CASE("columns count UTF-16 units, as the editor does") {
  // "é" is 2 bytes and 1 unit, "𝄞" 4 bytes and 2 units.
  std::vector<LineChange> changes =
      changedSpans("x = \"é𝄞\" : t", "x = \"é𝄞\" {s} : t");
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].from == 10); // `x = "é𝄞" `: 10 units, 13 bytes
  CHECK(changes[0].to == 14);
}

TEST_CASE("large differing middles align greedily, line by line") {
  // 600 lines each side, every middle line changed: the LCS table would
  // have 360k cells, so the greedy alignment runs; each line still pairs
  // with its input line and is changed only where it differs.
  std::string input, output;
  for (int i = 0; i < 600; ++i) {
    input += "%" + std::to_string(i) + " = op : t\n";
    output +=
        "%" + std::to_string(i) + " = op {s" + std::to_string(i) + "} : t\n";
  }
  std::vector<LineChange> changes = changedSpans(input, output);
  REQUIRE(changes.size() == 600);
  for (int i = 0; i < 600; ++i) {
    CAPTURE(i);
    CHECK(changes[i].line == uint32_t(i + 1));
    CHECK_FALSE(changes[i].inserted);
  }
}

TEST_CASE("the playground reply carries the changes; input only when asked") {
  const char *text = R"(sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
)";
  nlohmann::json with_input = reply(api::playgroundJson(
      text, R"({"pipeline": "pipeline", "schedule": false})"));
  REQUIRE(with_input["ok"] == true);
  CHECK(with_input["input"].get<std::string>().find("stablehlo.negate") !=
        std::string::npos);
  REQUIRE(with_input["changes"].is_array());
  bool negate_changed = false;
  const std::string output = with_input["output"];
  for (const nlohmann::json &change : with_input["changes"])
    if (change["line"] == 3 && !change["inserted"].get<bool>())
      negate_changed = true;
  CHECK(output.find("stablehlo.negate %arg0 {sdy.sharding") !=
        std::string::npos);
  CHECK(negate_changed);
  nlohmann::json without = reply(api::playgroundJson(
      text, R"({"pipeline": "pipeline", "schedule": false, "input": false})"));
  REQUIRE(without["ok"] == true);
  CHECK(without["input"] == "");
  CHECK(without["changes"] == with_input["changes"]);
  CHECK(without["output"] == with_input["output"]);
  nlohmann::json wrong =
      reply(api::playgroundJson(text, R"({"schedule": false, "input": 0})"));
  CHECK(wrong["ok"] == false);
  CHECK(wrong["error"].get<std::string>().find("input") != std::string::npos);
}
