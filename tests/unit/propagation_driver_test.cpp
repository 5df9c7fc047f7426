// End-to-end propagation over small modules: the driver, the layers and the
// rules they read, checked on the printed shardings.
#include <doctest/doctest.h>

#include "propagation/propagate.h"
#include "shardlab/text/text.h"

#include <string>

using namespace shardlab;

namespace {

std::string propagate(const std::string &text, PropagationLayer layer,
                      bool keep_rules = false) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  if (!module)
    return "<parse error>";
  PropagationOptions options;
  options.layer = layer;
  options.keep_sharding_rules = keep_rules;
  if (!propagateShardings(*module, options, diags))
    return "<propagation error>";
  return printModule(*module);
}

bool has(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}

const char *kChain = R"(
sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {"b"}]>},
                %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
})";

} // namespace

TEST_CASE("basic propagation reaches every value and the main results") {
  std::string out = propagate(kChain, PropagationLayer::Basic);
  CHECK(has(out, "%arg1: tensor<8x8xf32> {sdy.sharding = "
                 "#sdy.sharding<@m, [{\"a\", ?}, {\"b\", ?}]>}"));
  CHECK(has(out, "stablehlo.negate %0 {sdy.sharding = "
                 "#sdy.sharding_per_value<[<@m, [{\"a\", ?}, {\"b\", ?}]>]>}"));
  CHECK(has(out, "-> (tensor<8x8xf32> {sdy.sharding = "
                 "#sdy.sharding<@m, [{\"a\", ?}, {\"b\", ?}]>})"));
  CHECK_FALSE(has(out, "sdy.sharding_rule"));
}

TEST_CASE("propagating the output again changes nothing") {
  for (PropagationLayer layer :
       {PropagationLayer::Basic, PropagationLayer::Aggressive,
        PropagationLayer::OpPriority, PropagationLayer::UserPriority}) {
    std::string once = propagate(kChain, layer);
    CHECK(propagate(once, layer) == once);
  }
}

TEST_CASE("closed dims and replicated axes are never changed") {
  std::string out = propagate(R"(
sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {"b"}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {?}], replicated={"b"}>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
})",
                              PropagationLayer::Aggressive);
  CHECK(has(out, "#sdy.sharding<@m, [{}, {?}], replicated={\"b\"}>"));
}

TEST_CASE("keep-sharding-rules leaves the rules attached") {
  std::string out = propagate(kChain, PropagationLayer::Basic, true);
  CHECK(has(
      out,
      "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j])"));
}

TEST_CASE("user priorities: a p0 dim wins over a conflicting p1 dim") {
  std::string out = propagate(R"(
sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}p1, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"b"}p0, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
})",
                              PropagationLayer::UserPriority);
  CHECK(has(out, "stablehlo.add %arg0, %arg1 {sdy.sharding = "
                 "#sdy.sharding_per_value<[<@m, [{\"b\", ?}, {?}]>]>}"));
  CHECK(has(out, "#sdy.sharding<@m, [{\"a\"}, {}]>"));
}

TEST_CASE("dynamic shapes are rejected with Shardy's message") {
  DiagnosticEngine diags;
  auto module = parseModule(R"(
func.func @main(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.abs %arg0 : tensor<?xf32>
  return %0 : tensor<?xf32>
})",
                            diags);
  REQUIRE(module);
  CHECK_FALSE(propagateShardings(*module, PropagationOptions{}, diags));
  CHECK(diags.hasErrors());
}
