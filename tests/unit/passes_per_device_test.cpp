// The per-device passes where Shardy's sdy_opt showed them differing
// (tests/differential/run_differential.py --flags per-device): what
// -sdy-pad-for-divisibility and -sdy-convert-global-to-local make of calls,
// replicated ops, reshards and pads of padded operands.
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

/// `text` after the one pass `flag`; the diagnostics' first error when
/// it fails.
std::string afterPass(const std::string &text, const std::string &flag) {
  DiagnosticEngine diags;
  LoadedModule loaded = loadModule(text, diags);
  REQUIRE(loaded.module);
  PassPipeline pipeline;
  REQUIRE(appendPass(pipeline, flag, "").ok());
  if (!runPassPipeline(*loaded.module, pipeline, diags))
    return "failed";
  return printModule(*loaded.module);
}

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// A pad of 7 rows sliced from 8 (padded back to 8 for 4 shards) by
/// `low`/`high` to `out` rows, sharded over the 4.
std::string padOfPadded(int low, int high, int out) {
  const std::string rows = std::to_string(out);
  return R"(sdy.mesh @mesh_4 = <["x"=4]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_4, [{"x"}, {}]>}) -> tensor<)" +
         rows + R"(x8xf32> {
  %0 = stablehlo.slice %arg0 [0:7, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh_4, [{"x"}, {}]>]>} : (tensor<8x8xf32>) -> tensor<7x8xf32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.pad %0, %cst, low = [)" +
         std::to_string(low) + R"(, 0], high = [)" + std::to_string(high) +
         R"(, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh_4, [{"x"}, {}]>]>} : (tensor<7x8xf32>, tensor<f32>) -> tensor<)" +
         rows + R"(x8xf32>
  %2 = sdy.all_gather [{"x"}, {}] %1 out_sharding=<@mesh_4, [{}, {}]> : tensor<)" +
         rows + R"(x8xf32>
  return %2 : tensor<)" +
         rows + R"(x8xf32>
})";
}

} // namespace

TEST_CASE("Pad for divisibility takes a reshard's target sharding") {
  // Before reshard-to-collectives a reshard names its target "sharding";
  // the pass read every collective's "out_sharding" and crashed on it.
  const std::string out = afterPass(R"(sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = sdy.reshard %arg0 <@mesh, [{}, {}]> : tensor<16x32xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<16x32xf32>
  %2 = sdy.reshard %1 <@mesh, [{}, {"x"}]> : tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
})",
                                    "sdy-pad-for-divisibility");
  CHECK(has(out, "sdy.reshard %arg0 <@mesh, [{}, {}]>"));
  CHECK(has(out, "sdy.reshard %1 <@mesh, [{}, {\"x\"}]>"));
}

TEST_CASE("Global to local rebuilds a call from its callee alone") {
  // As Shardy's pass (MLIR's call signature conversion): the call's
  // sharding, its other attributes and its properties go; the callee and
  // the local types stay.
  const std::string out = afterPass(R"(sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = call @f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>, no_inline, foo = 1 : i32} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
func.func private @f(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  return %arg0 : tensor<8x4xf32>
})",
                                    "sdy-convert-global-to-local");
  CHECK(has(out, "%0 = call @f(%arg0) : (tensor<4x4xf32>) -> tensor<4x4xf32>"));
  // The negate still reads the call's (global) sharding as its own.
  CHECK(has(out, "stablehlo.negate %0 {sdy.sharding"));
}

TEST_CASE("Global to local leaves a replicated pad and slice as they are") {
  const std::string out = afterPass(R"(sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> tensor<6x4xf32> {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.pad %arg0, %c, low = [1, 0], high = [1, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<8x4xf32>, tensor<f32>) -> tensor<10x4xf32>
  %1 = stablehlo.slice %0 [2:8, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<10x4xf32>) -> tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
})",
                                    "sdy-convert-global-to-local");
  CHECK(has(out, "interior = [0, 0] {sdy.sharding = "
                 "#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}"));
  CHECK(has(out, "[2:8, 0:4] {sdy.sharding = "
                 "#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}"));
}

TEST_CASE("A pad of a padded operand masks its extra rows where the "
          "result needs no padding") {
  // Shardy's rule, checked against sdy_opt on each: the operand's extra
  // row (row 7 of 8) is masked to the padding value when the result's
  // rows divide by the 4 shards; not when the result is padded too.
  const auto masks = [](int low, int high, int out) {
    return has(
        afterPass(padOfPadded(low, high, out), "sdy-pad-for-divisibility"),
        "stablehlo.compare");
  };
  CHECK(masks(0, 1, 8));
  CHECK(masks(1, 0, 8));
  CHECK(masks(2, 3, 12));
  CHECK_FALSE(masks(1, 2, 10));
  CHECK_FALSE(masks(0, 3, 10));
  CHECK_FALSE(masks(1, -1, 7));
}

TEST_CASE("Global to local refuses the sdy ops Shardy marks illegal") {
  // A barrier or an edge has no sharding to localize its result by, and its
  // operand may be split; a reshard left unconverted names devices the
  // program does not run on. Each left a program whose types disagree
  // (operand tensor<4xf32>, result tensor<8xf32>); sdy_opt refuses each.
  struct Case {
    const char *name, *line;
  };
  const Case cases[] = {
      {"sdy.propagation_barrier", "%0 = sdy.propagation_barrier %arg0 "
                                  "allowed_direction=BACKWARD : tensor<8xf32>"},
      {"sdy.data_flow_edge", "%0 = sdy.data_flow_edge %arg0 : tensor<8xf32>"},
      {"sdy.sharding_constraint",
       "%0 = sdy.sharding_constraint %arg0 <@mesh, [{}]> : tensor<8xf32>"},
      {"sdy.reshard", "%0 = sdy.reshard %arg0 <@mesh, [{}]> : tensor<8xf32>"},
      {"sdy.sharding_group",
       "sdy.sharding_group %arg0 group_id=0 : tensor<8xf32>\n"
       "  %0 = stablehlo.negate %arg0 : tensor<8xf32>"}};
  for (const Case &c : cases) {
    CAPTURE(c.name);
    const std::string text =
        std::string(
            "sdy.mesh @mesh = <[\"x\"=2]>\n"
            "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = "
            "#sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<8xf32> {\n  ") +
        c.line + "\n  return %0 : tensor<8xf32>\n}\n";
    DiagnosticEngine diags;
    LoadedModule loaded = loadModule(text, diags);
    REQUIRE(loaded.module);
    PassPipeline pipeline;
    REQUIRE(appendPass(pipeline, "sdy-convert-global-to-local", "").ok());
    CHECK_FALSE(runPassPipeline(*loaded.module, pipeline, diags));
    const std::string expected = "failed to legalize operation '" +
                                 std::string(c.name) +
                                 "' that was explicitly marked illegal";
    bool said = false;
    for (const Diagnostic &diag : diags.diagnostics())
      said = said || diag.message == expected;
    CHECK(said);
  }
}
