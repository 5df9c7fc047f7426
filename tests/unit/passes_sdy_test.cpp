// The sdy passes that need no propagation, run through the pass registry on
// small modules: canonicalization patterns, import and export passes, and
// the failures they report.
#include "passes/call_graph.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

const char *kMesh = "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n";

/// Parses `text`, runs `flag` with `options`, prints; "<failed>" on error.
std::string runPass(const std::string &flag, const std::string &text,
                    const std::string &options = "") {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  PassPipeline pipeline;
  REQUIRE(appendPass(pipeline, flag, options).ok());
  if (!runPassPipeline(*module, pipeline, diags))
    return "<failed>";
  return printModule(*module);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("canonicalize folds a reshard of a single-use reshard") {
  std::string out =
      runPass("canonicalize",
              std::string(kMesh) +
                  "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
                  "  %0 = sdy.reshard %arg0 <@mesh, [{\"a\"}, {\"b\"}]> : "
                  "tensor<8x8xf32>\n"
                  "  %1 = sdy.reshard %0 <@mesh, [{\"a\", ?}, {?}]> : "
                  "tensor<8x8xf32>\n"
                  "  return %1 : tensor<8x8xf32>\n}\n");
  CHECK(contains(out, "%0 = sdy.reshard %arg0 <@mesh, [{\"a\", ?}, {?}]>"));
  CHECK_FALSE(contains(out, "%1 ="));
}

TEST_CASE("canonicalize keeps an all_reduce with a non-slice user") {
  std::string module =
      std::string(kMesh) +
      "func.func @f(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {\n"
      "  %0 = sdy.all_reduce {\"a\"} %arg0 out_sharding=<@mesh, [{}, {}]> : "
      "tensor<16x8xf32>\n"
      "  %1 = sdy.all_slice [{\"a\"}, {}] %0 out_sharding=<@mesh, [{\"a\"}, "
      "{}]> : tensor<16x8xf32>\n"
      "  return %1 : tensor<16x8xf32>\n}\n";
  CHECK(contains(runPass("canonicalize", module),
                 "sdy.reduce_scatter [{\"a\"}, {}] %arg0"));
  std::string with_other_user = module;
  with_other_user.insert(with_other_user.find("  return"),
                         "  %2 = sdy.all_reduce {\"b\"} %0 "
                         "out_sharding=<@mesh, [{}, {}]> : tensor<16x8xf32>\n");
  CHECK_FALSE(
      contains(runPass("canonicalize", with_other_user), "sdy.reduce_scatter"));
}

TEST_CASE("lift-inlined-meshes names new meshes after existing ones") {
  std::string out = runPass(
      "sdy-lift-inlined-meshes",
      std::string(kMesh) +
          "func.func @f(%arg0: tensor<8xf32> {sdy.sharding = "
          "#sdy.sharding<mesh<[\"x\"=4]>, [{\"x\"}]>}) -> tensor<8xf32> {\n"
          "  return %arg0 : tensor<8xf32>\n}\n");
  CHECK(contains(out, "sdy.mesh @mesh_0 = <[\"x\"=4]>"));
  CHECK(contains(out, "#sdy.sharding<@mesh_0, [{\"x\"}]>"));
}

TEST_CASE("sharding-group-import merges groups sharing a value") {
  std::string out =
      runPass("sdy-sharding-group-import",
              "func.func @f(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) {\n"
              "  sdy.sharding_group %arg0 group_id = 7 : tensor<4xf32>\n"
              "  sdy.sharding_group %arg0 group_id = 9 : tensor<4xf32>\n"
              "  sdy.sharding_group %arg1 group_id = 9 : tensor<4xf32>\n"
              "  func.return\n}\n");
  CHECK(contains(out, "sdy.sharding_group %arg0 group_id=0"));
  CHECK(contains(out, "sdy.sharding_group %arg1 group_id=0"));
  CHECK_FALSE(contains(out, "group_id=1"));
}

TEST_CASE("manual-axes-cleanup rejects manual axes on an io-less body") {
  CHECK(runPass("sdy-manual-axes-cleanup",
                "func.func @f() {\n"
                "  sdy.manual_computation() in_shardings=[] out_shardings=[] "
                "manual_axes={\"a\"} () {\n"
                "    %0 = sdy.constant dense<1.0> : tensor<8xf32>\n"
                "    sdy.return\n"
                "  } : () -> ()\n"
                "  func.return\n}\n") == "<failed>");
}

TEST_CASE("add then sink data-flow edges restores the owner shardings") {
  std::string module =
      std::string(kMesh) +
      "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.optimization_barrier {sdy.sharding = "
      "#sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} %arg0 : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n}\n";
  std::string with_edges = runPass("sdy-add-data-flow-edges", module);
  CHECK(contains(with_edges, "sdy.data_flow_edge %0 sharding=<@mesh, "
                             "[{\"a\"}]>"));
  std::string sunk = runPass("sdy-sink-data-flow-edges", with_edges);
  CHECK_FALSE(contains(sunk, "sdy.data_flow_edge"));
  CHECK(contains(sunk, "#sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>"));
}

TEST_CASE("update-non-divisible trims func shardings to a dividing prefix") {
  std::string out = runPass(
      "sdy-update-non-divisible-input-output-shardings",
      "sdy.mesh @mesh = <[\"x\"=4, \"y\"=2]>\n"
      "func.func @f(%arg0: tensor<2x8xf32> {sdy.sharding = "
      "#sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>}) -> tensor<2x8xf32> {\n"
      "  return %arg0 : tensor<2x8xf32>\n}\n");
  CHECK(contains(out, "#sdy.sharding<@mesh, [{\"x\":(1)2}, {\"y\"}]>"));
}

TEST_CASE("close-shardings closes dims and drops replicated axes") {
  std::string out =
      runPass("sdy-close-shardings",
              std::string(kMesh) +
                  "func.func @f(%arg0: tensor<8xf32> {sdy.sharding = "
                  "#sdy.sharding<@mesh, [{\"a\", ?}], replicated={\"b\"}>}) -> "
                  "tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n");
  CHECK(contains(out, "#sdy.sharding<@mesh, [{\"a\"}]>}"));
}

TEST_CASE("a mesh named @main is not the main function (fuzz finding)") {
  // The export pipeline looked up @main and used the mesh's missing region.
  const std::string text = R"(sdy.mesh @main = <["x"=2, "y"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
)";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  CHECK(module->mainFunc() == nullptr);
  for (const char *flag : {"sdy-remove-sub-axes-in-input-output-shardings",
                           "sdy-export-pipeline", "sdy-propagation-pipeline"})
    CHECK_MESSAGE(contains(runPass(flag, text), "func.func @g"), flag);
}

// What sdy_opt -sdy-constant-or-scalar-merger printed for the same module:
// the merger goes in program order, so broadcasts of two constants it has
// just merged merge too; and NaN constants, equal by their bits, merge.
TEST_CASE("the constant merger merges in program order, NaNs included") {
  std::string out = runPass(
      "sdy-constant-or-scalar-merger",
      std::string(kMesh) +
          "func.func @f() -> tensor<2x64xf32> {\n"
          "  %0 = sdy.constant dense<1.000000e+00> : tensor<f32>\n"
          "  %1 = sdy.constant dense<1.000000e+00> : tensor<f32>\n"
          "  %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> "
          "tensor<2x64xf32>\n"
          "  %3 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> "
          "tensor<2x64xf32>\n"
          "  %4 = sdy.constant dense<0x7FC00000> : tensor<f32>\n"
          "  %5 = sdy.constant dense<0x7FC00000> : tensor<f32>\n"
          "  %6 = stablehlo.add %4, %5 : tensor<f32>\n"
          "  %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> "
          "tensor<2x64xf32>\n"
          "  %8 = stablehlo.add %2, %3 : tensor<2x64xf32>\n"
          "  %9 = stablehlo.add %8, %7 : tensor<2x64xf32>\n"
          "  return %9 : tensor<2x64xf32>\n}\n");
  CHECK(contains(out, "    %0 = sdy.constant dense<1.000000e+00> : "
                      "tensor<f32>\n"
                      "    %1 = stablehlo.broadcast_in_dim %0, dims = [] : "
                      "(tensor<f32>) -> tensor<2x64xf32>\n"
                      "    %2 = sdy.constant dense<0x7FC00000> : tensor<f32>\n"
                      "    %3 = stablehlo.add %2, %2 : tensor<f32>\n"));
  CHECK(contains(out, "%5 = stablehlo.add %1, %1 : tensor<2x64xf32>"));
}
