// compareStrategies' options.phase through the JSON API: a phase's reply
// carries its rows' plan indices, rows read back from a reply are taken as
// they were, and what is wrong with them is named.
#include "shardlab/api/strategy_api.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

constexpr const char *kMlp = R"(
func.func @main(%x: tensor<8x8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x8x16xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [2] x [0] : (tensor<8x8x16xf32>, tensor<16x32xf32>) -> tensor<8x8x32xf32>
  %y = stablehlo.dot_general %h, %w2, contracting_dims = [2] x [0] : (tensor<8x8x32xf32>, tensor<32x16xf32>) -> tensor<8x8x16xf32>
  return %y : tensor<8x8x16xf32>
})";

json compare(const json &options) {
  return json::parse(
      shardlab::api::compareStrategiesJson(kMlp, options.dump()));
}

} // namespace

TEST_CASE("compareStrategies JSON: phases in shares, merged, give the "
          "comparison") {
  const json whole = compare({{"devices", 4}});
  REQUIRE(whole["ok"] == true);
  CHECK_FALSE(whole.contains("plan_indices"));
  json rows = json::array();
  std::vector<std::pair<int64_t, json>> merged;
  for (int share = 0; share < 2; ++share) {
    const json part = compare(
        {{"devices", 4},
         {"phase", {{"name", "base"}, {"share", share}, {"shares", 2}}}});
    REQUIRE(part["ok"] == true);
    REQUIRE(part["plan_indices"].size() == part["rows"].size());
    for (size_t k = 0; k < part["rows"].size(); ++k) {
      CHECK(part["plan_indices"][k].get<int64_t>() % 2 == share);
      merged.push_back({part["plan_indices"][k], part["rows"][k]});
    }
  }
  std::sort(merged.begin(), merged.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &[index, row] : merged)
    rows.push_back(row);
  // No layer loops: recompute and split add nothing; finish sorts.
  for (const char *name : {"recompute", "split"}) {
    const json part =
        compare({{"devices", 4}, {"phase", {{"name", name}, {"rows", rows}}}});
    REQUIRE(part["ok"] == true);
    CHECK(part["rows"].empty());
    CHECK(part["plan_indices"].empty());
  }
  const json finish = compare(
      {{"devices", 4}, {"phase", {{"name", "finish"}, {"rows", rows}}}});
  REQUIRE(finish["ok"] == true);
  CHECK_FALSE(finish.contains("plan_indices"));
  REQUIRE(finish["rows"].size() == whole["rows"].size());
  for (size_t i = 0; i < finish["rows"].size(); ++i) {
    json a = finish["rows"][i], b = whole["rows"][i];
    a.erase("elapsed_ms");
    b.erase("elapsed_ms");
    CHECK(a == b);
  }
  CHECK(finish["why_fastest"] == whole["why_fastest"]);
}

TEST_CASE("compareStrategies JSON: a phase's bad rows are named") {
  const json base = compare({{"devices", 4}, {"phase", {{"name", "base"}}}});
  REQUIRE(base["ok"] == true);
  json rows = base["rows"];
  rows[2].erase("compute_us");
  json reply = compare(
      {{"devices", 4}, {"phase", {{"name", "finish"}, {"rows", rows}}}});
  CHECK(reply["ok"] == false);
  CHECK(reply["error"] ==
        "options.phase.rows[2].compute_us: expected a number");
  rows = base["rows"];
  rows[1]["collectives"] = json::array({{{"kind", "all-gather"}}});
  reply = compare(
      {{"devices", 4}, {"phase", {{"name", "finish"}, {"rows", rows}}}});
  CHECK(reply["error"] ==
        "options.phase.rows[1].collectives[0].count: expected an integer");
  reply =
      compare({{"devices", 4}, {"phase", {{"name", "base"}, {"spare", 1}}}});
  CHECK(reply["error"].get<std::string>().rfind(
            "options.phase: unknown field 'spare'", 0) == 0);
  reply = compare({{"devices", 4}, {"phase", {{"share", 1}}}});
  CHECK(reply["error"].get<std::string>().find("options.phase.name") == 0);
}
