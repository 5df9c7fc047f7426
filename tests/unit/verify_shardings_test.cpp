// The IR verifier on shardings attached to values: op `sdy.sharding`
// attributes, func argument / result shardings, sharding rules and the
// parent-manual-computation note (Shardy's tensor_sharding_verification and
// sharding_rule_verification tests, in small modules).
#include <doctest/doctest.h>

#include "verify_helpers.h"

using shardlab::test::verifyText;

TEST_CASE("verify: a valid module passes with no diagnostics") {
  auto result = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"a"}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
)");
  REQUIRE(result.parsed);
  CHECK(result.ok);
  CHECK(result.diags.empty());
}

TEST_CASE("verify: op sharding errors carry the 'op result' layer") {
  auto result = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"a"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
)");
  CHECK_FALSE(result.ok);
  REQUIRE(result.diags.size() == 1);
  CHECK(result.diags[0] == "3:8: error: 'stablehlo.add' op result - sharding "
                           "doesn't match tensor rank: 2 != 1");
}

TEST_CASE("verify: unknown mesh and wrong attribute kind on an op") {
  auto unknown =
      verifyText(R"(func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@other_mesh, [{}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
)");
  REQUIRE(unknown.diags.size() == 1);
  CHECK(unknown.diags[0].find("op result - unknown mesh: @other_mesh") !=
        std::string::npos);
  auto wrong = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding<@mesh, [{}]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
)");
  REQUIRE(wrong.diags.size() == 1);
  CHECK(wrong.diags[0].find("should have a sharding attribute of type "
                            "TensorShardingPerValueAttr") != std::string::npos);
}

TEST_CASE("verify: func argument and result shardings name their index") {
  auto arg = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
)");
  REQUIRE(arg.diags.size() == 1);
  CHECK(arg.diags[0] ==
        "2:1: error: 'func.func' op arg 1 - unknown axis name: \"c\"");
  auto res = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  return %arg0 : tensor<8xf32>
}
)");
  REQUIRE(res.diags.size() == 1);
  CHECK(res.diags[0].find("'func.func' op result 0 - sharding doesn't match "
                          "tensor rank: 2 != 1") != std::string::npos);
}

TEST_CASE("verify: axis bound by a parent manual computation adds a note") {
  auto result = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<8x32xf32>) {
    %1 = sdy.sharding_constraint %arg1 <@mesh, [{"a"}, {}]> : tensor<8x32xf32>
    sdy.return %1 : tensor<8x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
)");
  REQUIRE(result.diags.size() == 2);
  CHECK(result.diags[0].rfind("4:10: error: 'sdy.sharding_constraint' op "
                              "operates on axis \"a\"",
                              0) == 0);
  CHECK(result.diags[1] == "3:8: note: parent bounding this axis as manual");
}

TEST_CASE("verify: sharding rules are checked against the op's types") {
  auto result =
      verifyText(R"(func.func @f(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i])->([i, j]) {i=2, j=4}>} : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
)");
  REQUIRE(result.diags.size() == 1);
  CHECK(result.diags[0].find("'stablehlo.add' op operand 1 - mapping rank "
                             "must match: 1 != 2") != std::string::npos);
}

TEST_CASE("verify: only the first failing op is reported") {
  auto result = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b"}]>]>} : tensor<8xf32>
  %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"c"}]>]>} : tensor<8xf32>
  return %1 : tensor<8xf32>
}
)");
  REQUIRE(result.diags.size() == 1);
  CHECK(result.diags[0].find("unknown axis name: \"b\"") != std::string::npos);
}
