// The IR verifier on sdy op invariants: collectives (with the operand-mesh
// note), manual computations, named computations, data-flow edges,
// propagation barriers, propagation edges and region isolation.
#include <doctest/doctest.h>

#include "verify_helpers.h"

using shardlab::test::verifyText;

namespace {

bool contains(const std::vector<std::string> &diags, const std::string &text) {
  for (const std::string &diag : diags)
    if (diag.find(text) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_CASE("verify: collective mesh mismatch notes the operand mesh") {
  auto result = verifyText(R"(sdy.mesh @mesh1 = <["x"=2, "y"=2]>
sdy.mesh @mesh2 = <["a"=2, "b"=2]>
func.func @f(%arg0 : tensor<16x8xf32> {sdy.sharding=#sdy.sharding<@mesh2, [{"a"}, {"b"}]>}) -> tensor<16x8xf32> {
  %0 = sdy.all_gather [{}, {"b"}] %arg0 out_sharding=<@mesh1, [{"y"}, {"x"}]> :  tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
)");
  REQUIRE(result.diags.size() == 2);
  CHECK(result.diags[0] == "4:8: error: 'sdy.all_gather' op result mesh does "
                           "not match operand mesh");
  CHECK(result.diags[1].rfind("3:", 0) == 0);
  CHECK(contains(result.diags,
                 "note: operand mesh: #sdy.mesh<[\"a\"=2, \"b\"=2]>"));
}

TEST_CASE("verify: collective without operand sharding and a valid one") {
  auto missing = verifyText(R"(sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @f(%arg0 : tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]> :  tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
)");
  CHECK(contains(missing.diags, "collective on operand without sharding"));
  auto valid = verifyText(R"(sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @f(%arg0 : tensor<16x8xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> tensor<16x8xf32> {
  %0 = sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]> :  tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
)");
  CHECK(valid.ok);
  CHECK(valid.diags.empty());
}

TEST_CASE("verify: manual computation local shapes and manual axes") {
  auto shape = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"a"} (%arg1: tensor<16x32xf32>) {
    sdy.return %arg1 : tensor<16x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
)");
  CHECK(contains(shape.diags, "'sdy.manual_computation' op operand shape, "
                              "corresponding sharding, and region operand "
                              "shape at index 0 must match. Expected local "
                              "shape 'tensor<8x32xf32>'"));
  auto axis = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a", "b"} (%arg1: tensor<8x32xf32>) {
    sdy.return %arg1 : tensor<8x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
)");
  CHECK(contains(axis.diags, "unknown manual axis: \"b\""));
}

TEST_CASE("verify: values from outside an isolated region are rejected") {
  auto result = verifyText(R"(sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={} (%arg1: tensor<16x32xf32>) {
    %1 = stablehlo.add %arg0, %arg1 : tensor<16x32xf32>
    sdy.return %1 : tensor<16x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
)");
  REQUIRE(result.diags.size() == 2);
  CHECK(result.diags[0] == "4:10: error: 'stablehlo.add' op using value "
                           "defined outside the region");
  CHECK(result.diags[1] ==
        "3:8: note: required by region isolation constraints");
}

TEST_CASE("verify: named computation result types are inferred") {
  auto result =
      verifyText(R"(func.func @f(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
  %0 = sdy.named_computation<"bar">(%arg0) (%arg1: tensor<8x2xi32>) {
    sdy.return %arg1, %arg1 : tensor<8x2xi32>, tensor<8x2xi32>
  }: (tensor<8x2xi32>) -> tensor<8x2xi32>
  return %0 : tensor<8x2xi32>
}
)");
  CHECK(contains(result.diags, "failed to infer returned types"));
  CHECK(contains(result.diags,
                 "inferred type(s) 'tensor<8x2xi32>', 'tensor<8x2xi32>' are "
                 "incompatible with return type(s) of operation "
                 "'tensor<8x2xi32>'"));
}

TEST_CASE("verify: data flow edges, barriers and constants") {
  auto edge = verifyText(
      R"(func.func @f(%arg0: tensor<32x96xf32>) -> (tensor<32x96xf32>, tensor<32x96xf32>) {
  %0 = sdy.data_flow_edge %arg0 : tensor<32x96xf32>
  return %arg0, %0 : tensor<32x96xf32>, tensor<32x96xf32>
}
)");
  CHECK(contains(edge.diags, "expected input of sdy.data_flow_edge to have "
                             "a single user"));
  auto barrier =
      verifyText(R"(func.func @f(%arg0 : tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.propagation_barrier %arg0 allowed_direction=BOTH : tensor<8xf32>
  return %0 : tensor<8xf32>
}
)");
  CHECK(contains(barrier.diags, "cannot specify `BOTH` as the direction"));
  auto constant = verifyText(R"(func.func @f() -> tensor<8x?xf32> {
  %0 = sdy.constant dense<1.000000e+00> : tensor<8x?xf32>
  func.return %0 : tensor<8x?xf32>
}
)");
  CHECK(
      contains(constant.diags, "elements literal type must have static shape"));
}

// Shardy declares SameOperandsAndResultType on its markers and collectives;
// a pass that gives one a local operand and a global result (as the
// per-device conversion once did to a barrier) must be caught. The generic
// form is the only way to write such an op.
TEST_CASE("verify: sdy markers and collectives keep their operand's type") {
  const char *ops[] = {
      R"("sdy.propagation_barrier"(%arg0) <{allowed_direction = 1 : i32}>)",
      R"("sdy.data_flow_edge"(%arg0))",
      R"("sdy.sharding_constraint"(%arg0) <{sharding = #sdy.sharding<@mesh, [{}]>}>)",
      R"("sdy.reshard"(%arg0) <{sharding = #sdy.sharding<@mesh, [{}]>}>)",
      R"("sdy.all_gather"(%arg0) <{gathering_axes = #sdy<list_of_axis_ref_lists[{"x"}]>, out_sharding = #sdy.sharding<@mesh, [{}]>}>)",
      R"("sdy.collective_permute"(%arg0) <{out_sharding = #sdy.sharding<@mesh, [{"x"}]>}>)"};
  for (const char *op : ops) {
    CAPTURE(op);
    const std::string head =
        R"(sdy.mesh @mesh = <["x"=2]>
func.func @f(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<RESULT> {
  %0 = )";
    const std::string tail = R"( : (tensor<4xf32>) -> tensor<RESULT>
  return %0 : tensor<RESULT>
}
)";
    auto with = [&](const std::string &result) {
      std::string text = head + op + tail;
      for (size_t at; (at = text.find("RESULT")) != std::string::npos;)
        text.replace(at, 6, result);
      return verifyText(text);
    };
    auto mismatched = with("8xf32");
    REQUIRE(!mismatched.diags.empty());
    CHECK(mismatched.diags[0].find(
              "op requires the same type for all operands and results") !=
          std::string::npos);
    // The same op with its operand's type has no such error.
    CHECK(!contains(with("4xf32").diags, "requires the same type"));
  }
}

TEST_CASE("verify: propagation edges steps and axes") {
  auto steps = verifyText(R"(sdy.mesh @mesh = <["c"=8, "d"=8]>
func.func @f(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.propagation_edges = #sdy.propagation_edges<[{step-1 = [{"c" = operand-0 -> [result-0]}]},{step-1 = [{"d" = operand-1 -> [result-0]}]}]>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"c", ?}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
)");
  CHECK(
      contains(steps.diags, "propagation edges have duplicate step index: 1"));
  auto range = verifyText(R"(sdy.mesh @mesh = <["z"=4]>
func.func @f(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.propagation_edges = #sdy.propagation_edges<[{step-22 = [{"z" = result-0 -> [operand-3]}]}]>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"z", ?}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
)");
  CHECK(contains(range.diags, "'stablehlo.add' op expected a value ref to "
                              "have an operand index in range [0, 2), got: "
                              "3"));
  auto kind =
      verifyText(R"(func.func @f(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.result_propagation_edges = [1,2,3]} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
)");
  CHECK(contains(kind.diags, "ArrayAttr<PropagationEdgesAttr>"));
}
