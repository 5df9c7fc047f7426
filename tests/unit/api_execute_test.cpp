// The JSON API's interpreter (execute): a global run's checks and values, a
// partitioned run compared with it, what each device held around a
// collective, and bad requests as values.
#include "shardlab/api/api.h"

#include "api_reply.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using nlohmann::json;
using namespace shardlab;

namespace {

// Sums 0..7 and checks the sum: 28.
const char *kSelfChecking = R"(
func.func @main() -> tensor<f32> {
  %x = stablehlo.iota dim = 0 : tensor<8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  %want = stablehlo.constant dense<28.0> : tensor<f32>
  stablehlo.custom_call @check.expect_eq(%s, %want) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
  return %s : tensor<f32>
})";

// x sharded over 2 devices, summed: one all_reduce of the partial sums.
const char *kSharded = R"(
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
})";

} // namespace

TEST_CASE("execute runs a self-checking module and returns its values") {
  json r = reply(api::executeJson(kSelfChecking, "{}"));
  CHECK(r["ok"] == true);
  REQUIRE(r["checks"].size() == 1);
  CHECK(r["checks"][0]["op"] == "check.expect_eq");
  CHECK(r["checks"][0]["passed"] == true);
  CHECK(r["checks_passed"] == 1);
  REQUIRE(r["results"].size() == 1);
  CHECK(r["results"][0]["type"] == "tensor<f32>");
  CHECK(r["results"][0]["values"] == json::array({28.0}));
  CHECK_FALSE(r.contains("partition"));
}

TEST_CASE("execute with shardings compares the per-device run with the "
          "global one and keeps each device's values around a collective") {
  json r = reply(api::executeJson(
      kSharded, R"({"shardings": "module", "collectives": true})"));
  CHECK_MESSAGE(r["ok"] == true, r.dump());
  CHECK(r["partition"]["status"] == "match");
  CHECK(r["partition"]["devices"] == 2);
  REQUIRE(r["collectives"].size() == 1);
  const json &step = r["collectives"][0];
  CHECK(step["op"] == "stablehlo.all_reduce");
  CHECK(step["line"] == 5); // the reduce that needs it
  REQUIRE(step["devices"].size() == 2);
  // Each device sums its half; the all_reduce gives both the whole sum.
  const json &d0 = step["devices"][0], &d1 = step["devices"][1];
  const double half0 = d0["before"][0]["values"][0];
  const double half1 = d1["before"][0]["values"][0];
  const double whole = r["results"][0]["values"][0];
  CHECK(half0 != half1);
  CHECK(half0 + half1 == doctest::Approx(whole));
  CHECK(d0["after"][0]["values"][0] == whole);
  CHECK(d1["after"][0]["values"][0] == whole);
}

TEST_CASE("execute elides large tensors and shows their range") {
  json r = reply(api::executeJson(R"(
func.func @main() -> tensor<100xi32> {
  %x = stablehlo.iota dim = 0 : tensor<100xi32>
  return %x : tensor<100xi32>
})",
                                  R"({"max_elements": 3})"));
  REQUIRE(r["ok"] == true);
  const json &t = r["results"][0];
  CHECK(t["values"] == json::array({0, 1, 2}));
  CHECK(t["elided"] == true);
  CHECK(t["elements"] == 100);
  CHECK(t["min"] == 0);
  CHECK(t["max"] == 99);
}

TEST_CASE("execute reports what it cannot run, bad text and bad options "
          "as values") {
  json parse = reply(api::executeJson("func.func @main( {", "{}"));
  CHECK(parse["ok"] == false);
  CHECK_FALSE(parse["diagnostics"].empty());
  json shardings =
      reply(api::executeJson(kSelfChecking, R"({"shardings": "mesh:3"})"));
  CHECK(shardings["ok"] == false);
  CHECK(shardings["error"].get<std::string>().find("shardings") !=
        std::string::npos);
  json unknown = reply(api::executeJson(kSelfChecking, R"({"seed": 3})"));
  CHECK(unknown["ok"] == false);
  json dynamic = reply(
      api::executeJson("func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
                       "  return %x : tensor<?xf32>\n}\n",
                       R"({"shardings": "random:1"})"));
  CHECK(dynamic["ok"] == false);
  CHECK(dynamic["partition"]["status"] == "not run");
  CHECK(dynamic["error"].get<std::string>().find("dynamic") !=
        std::string::npos);
}

TEST_CASE("execute feeds a function with arguments the partition check's "
          "random inputs") {
  json r = reply(api::executeJson(kSharded, "{}"));
  REQUIRE(r["ok"] == true);
  json p = reply(api::executeJson(kSharded, R"({"shardings": "module"})"));
  REQUIRE(p["ok"] == true);
  // Same inputs, so the same global result, and not the sum of zeros.
  CHECK(r["results"] == p["results"]);
  CHECK(r["results"][0]["values"][0] != 0.0);
}
