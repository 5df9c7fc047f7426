// End-to-end propagation over small modules: the driver, the layers and the
// rules they read, checked on the printed shardings.
#include <doctest/doctest.h>

#include "propagation/layers.h"
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

namespace {

// Four equal layers: each matmul and add reads what the one in the layer
// before read, once propagation has reached it.
const char *kLayers = R"(
sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>},
                %w: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"b"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.add %0, %arg0 : tensor<8x16xf32>
  %2 = stablehlo.dot_general %1, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %3 = stablehlo.add %2, %1 : tensor<8x16xf32>
  %4 = stablehlo.dot_general %3, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %5 = stablehlo.add %4, %3 : tensor<8x16xf32>
  %6 = stablehlo.dot_general %5, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %7 = stablehlo.add %6, %5 : tensor<8x16xf32>
  return %7 : tensor<8x16xf32>
})";

// Runs the aggressive layer over `text` with `memo` (null: none).
std::string runAggressive(const std::string &text, prop::StepMemo *memo) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  if (!module)
    return "<parse error>";
  prop::LayerContext lc;
  lc.strategies = {FactorStrategy::Aggressive};
  lc.steps = memo;
  lc.warnings = &diags;
  RuleCache rules;
  lc.rules = &rules;
  prop::runStrategies(*module, lc,
                      [](Operation &, std::span<PropagationDirection>) {});
  return printModule(*module);
}

} // namespace

TEST_CASE("equal ops take their steps from the step memo, to the same end") {
  prop::StepMemo memo;
  std::string memoized = runAggressive(kLayers, &memo);
  std::string computed = runAggressive(kLayers, nullptr);
  CHECK(memoized == computed);
  // The layers' shardings reached the last layer...
  CHECK(has(memoized,
            "stablehlo.add %6, %5 {sdy.sharding = "
            "#sdy.sharding_per_value<[<@m, [{\"a\", ?}, {\"b\", ?}]>]>"));
  // ...and the steps of layers 2-4 equal layer 1's: the memo holds fewer
  // outcomes than the 8 ops took steps (each at least once).
  CHECK(memo.size() > 0);
  CHECK(memo.size() < 8);
}

TEST_CASE("the step memo keys on the rule, the flags and what a step read") {
  prop::StepMemo memo;
  TensorSharding s;
  const TensorSharding *outcome[] = {nullptr, &s};
  prop::StepMemo::Key key;
  key.reads.words[0] = 1;
  key.reads.size = 1;
  key.rule = &memo;
  memo.insert(key, outcome);
  auto found = memo.find(key);
  REQUIRE(found.size() == 2);
  CHECK(found[0] == nullptr);
  CHECK(found[1] == &s);
  prop::StepMemo::Key other = key;
  other.flags = 2;
  CHECK(memo.find(other).empty());
  other = key;
  other.rule = &s;
  CHECK(memo.find(other).empty());
  other = key;
  other.reads.words[0] = 2;
  CHECK(memo.find(other).empty());
}
