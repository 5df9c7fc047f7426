// Input propagation does not support gets Shardy's answer, never a crash:
// dynamic shapes and tuples of op results are errors at the op (Shardy's
// allValidShapes), ops whose operands use different meshes are left alone
// (Shardy's "no common mesh name" match failure, no diagnostic), and the
// debug and trace machinery copes with modules lacking data-flow edges.
#include <doctest/doctest.h>

#include "propagation/trace.h"
#include "shardlab/api/api.h"
#include "shardlab/text/text.h"

#include <string>
#include <vector>

using namespace shardlab;

namespace {

api::RunResult run(const std::string &text,
                   const std::vector<std::string> &flags) {
  Result<api::RunRequest> request = api::parseRunFlags(flags);
  REQUIRE(request.ok());
  request->file = "in.mlir";
  return api::runPipeline(text, *request);
}

bool has(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}

const std::vector<std::vector<std::string>> kPasses = {
    {"-sdy-basic-propagate"},
    {"-sdy-aggressive-propagate"},
    {"-sdy-op-priority-propagate"},
    {"-sdy-user-priority-propagate"},
    {"-sdy-aggressive-propagate=debug-sharding-origins=true "
     "debug-propagation-edge-sharding=true"},
};

} // namespace

TEST_CASE("unsupported: a dynamic shape is an error at the op") {
  const char *text = R"(sdy.mesh @m = <["a"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) -> tensor<?xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = stablehlo.convert %0 : (tensor<8xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
)";
  for (const auto &flags : kPasses) {
    api::RunResult r = run(text, flags);
    CHECK_FALSE(r.ok);
    CHECK(has(r.stderr_text,
              "in.mlir:4:8: error: Shardy propagation only supports ranked "
              "tensors with a static shape. type: tensor<?xf32>"));
  }
}

TEST_CASE("unsupported: an unranked tensor is an error at the op") {
  api::RunResult r =
      run(R"(func.func @main(%arg0: tensor<8xf32>) -> tensor<*xf32> {
  %0 = stablehlo.convert %arg0 : (tensor<8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
)",
          {"-sdy-user-priority-propagate"});
  CHECK_FALSE(r.ok);
  CHECK(has(r.stderr_text, "in.mlir:2:8: error: Shardy propagation only "
                           "supports ranked tensors with a static shape. "
                           "type: tensor<*xf32>"));
}

TEST_CASE("unsupported: a dynamic func argument alone is fine, as in Shardy") {
  api::RunResult r =
      run(R"(func.func @main(%arg0: tensor<?x?xf32>) -> tensor<?x?xf32> {
  return %arg0 : tensor<?x?xf32>
}
)",
          {"-sdy-basic-propagate"});
  CHECK(r.ok);
  CHECK(r.stderr_text.empty());
}

TEST_CASE("unsupported: a tuple is an error at the op") {
  const char *text = R"(sdy.mesh @m = <["a"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) -> tuple<tensor<8xf32>> {
  %0 = "stablehlo.tuple"(%arg0) : (tensor<8xf32>) -> tuple<tensor<8xf32>>
  return %0 : tuple<tensor<8xf32>>
}
)";
  for (const auto &flags : kPasses) {
    api::RunResult r = run(text, flags);
    CHECK_FALSE(r.ok);
    CHECK(has(r.stderr_text, "in.mlir:3:8: error: Shardy propagation doesn't "
                             "support tuples: tuple<tensor<8xf32>>"));
  }
}

TEST_CASE("unsupported: operands on different meshes are not propagated") {
  const char *text = R"(sdy.mesh @m1 = <["a"=2]>
sdy.mesh @m2 = <["b"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m1, [{"a"}]>},
                %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m2, [{"b"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
)";
  for (const auto &flags : kPasses) {
    api::RunResult r = run(text, flags);
    CHECK(r.ok);
    CHECK(r.stderr_text.empty());
    // The add has no common mesh: nothing moves through it.
    CHECK(has(r.output, "%0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>"));
    // The output verifies (and propagates again to the same text).
    api::RunResult again = run(r.output, flags);
    CHECK(again.ok);
  }
}

TEST_CASE("unsupported: a result sharding on another mesh than the operands") {
  const char *text = R"(sdy.mesh @m1 = <["a"=2]>
sdy.mesh @m2 = <["b"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m1, [{"a"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m2, [{?}, {"b", ?}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.abs %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
)";
  for (const auto &flags : kPasses) {
    api::RunResult r = run(text, flags);
    CHECK(r.ok);
    CHECK(has(r.output, "stablehlo.negate %arg0 {sdy.sharding = "
                        "#sdy.sharding_per_value<[<@m2, [{?}, {\"b\", ?}]>]>"));
  }
}

TEST_CASE("unsupported: a manual computation's shardings on two meshes") {
  // With manual axes the verifier rejects it (before any pass runs).
  api::RunResult r = run(R"(sdy.mesh @m1 = <["a"=2]>
sdy.mesh @m2 = <["a"=4]>
func.func @main(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m1, [{}, {}]>] out_shardings=[<@m2, [{}, {}]>] manual_axes={"a"} (%arg1: tensor<16x32xf32>) {
    sdy.return %arg1 : tensor<16x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
)",
                         {"-sdy-basic-propagate"});
  CHECK_FALSE(r.ok);
  CHECK(has(r.stderr_text, "in.mlir:4:8: error: 'sdy.manual_computation' op "
                           "all in and out shardings must be bound to the "
                           "same mesh or an empty mesh"));
  // Without manual axes it is valid; propagation moves nothing across the
  // two meshes and does not fail.
  api::RunResult free = run(R"(sdy.mesh @m1 = <["a"=2]>
sdy.mesh @m2 = <["b"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m1, [{"a"}]>] out_shardings=[<@m2, [{"b"}]>] manual_axes={} (%arg1: tensor<8xf32>) {
    sdy.return %arg1 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
)",
                            {"-sdy-add-data-flow-edges", "-sdy-basic-propagate",
                             "-sdy-sink-data-flow-edges"});
  CHECK(free.ok);
  CHECK(free.stderr_text.empty());
}

TEST_CASE("unsupported: debug options without data-flow edges do not crash") {
  // Shardy assumes -sdy-add-data-flow-edges ran before the debug options;
  // without the edges the manual computation is simply not seeded.
  api::RunResult r = run(R"(sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {?}]>}) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m, [{"a"}, {?}]>] out_shardings=[<@m, [{"a"}, {?}]>] manual_axes={"a"} (%arg1: tensor<4x8xf32>) {
    %1 = stablehlo.negate %arg1 : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.while(%iterArg = %0) : tensor<8x8xf32>
    cond {
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %iterArg : tensor<8x8xf32>
  }
  return %2 : tensor<8x8xf32>
}
)",
                         {"-sdy-apply-sharding-constraints=debug-sharding-"
                          "origins=true debug-propagation-edge-sharding=true",
                          "-sdy-user-priority-propagate=debug-sharding-"
                          "origins=true debug-propagation-edge-sharding=true",
                          "-sdy-sink-data-flow-edges=sink-debug-sharding-"
                          "origins=true sink-debug-propagation-edge-sharding="
                          "true"});
  CHECK(r.ok);
  CHECK(has(r.output, "sdy.sharding_origin_name = \"mc_0\""));
  // Inside the body the manual axis is not propagated (Shardy's getSharding
  // of a body argument drops the manual axes).
  CHECK(has(r.output, "stablehlo.negate %arg1 : tensor<4x8xf32>"));
}
