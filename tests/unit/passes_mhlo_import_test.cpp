// MHLO input (older XLA dumps): mhlo.* spellings of StableHLO ops read and
// print as themselves, and the MHLO import turns them into StableHLO ops
// before the GSPMD import.
#include "passes/xla_support.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

const char *kMhlo = R"(
func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<8x8xf32> {
  %0 = mhlo.constant dense<1.000000e+00> : tensor<8x8xf32>
  %1 = mhlo.add %arg0, %0 : tensor<8x8xf32>
  %2 = mhlo.custom_call @Sharding(%1) {mhlo.sharding = "{devices=[1,2]<=[2]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
)";

} // namespace

TEST_CASE("mhlo ops read and print in their custom form") {
  DiagnosticEngine diags;
  auto module = parseModule(kMhlo, diags);
  REQUIRE(module);
  const std::string printed = printModule(*module);
  CHECK(printed.find("mhlo.add %arg0, %") != std::string::npos);
  CHECK(printed.find("mhlo.constant dense<1.000000e+00>") != std::string::npos);
  auto again = parseModule(printed, diags);
  REQUIRE(again);
  CHECK(printModule(*again) == printed);
}

TEST_CASE("-xla-sdy-mhlo-import-pipeline: MHLO ops become StableHLO, then "
          "GSPMD shardings are imported") {
  DiagnosticEngine diags;
  auto module = parseModule(kMhlo, diags);
  REQUIRE(module);
  REQUIRE(runNestedPass(*module, "xla-sdy-mhlo-import-pipeline", diags));
  const std::string out = printModule(*module);
  CHECK(out.find("mhlo.add") == std::string::npos);
  CHECK(out.find("stablehlo.add") != std::string::npos);
  CHECK(out.find("sdy.sharding_constraint") != std::string::npos);
  CHECK(out.find("sdy.mesh @mesh") != std::string::npos);
}
