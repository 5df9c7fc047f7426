// The propagation trace (explainability) and the debug views derived from
// it: steps with their layer position, per-value explanations, Shardy's
// sharding-origins and propagation-edges views, and the JSON form.
#include <doctest/doctest.h>

#include "propagation/debug_info.h"
#include "propagation/trace.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/text/text.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

using namespace shardlab;

namespace {

struct Traced {
  std::unique_ptr<Module> module;
  PropagationTrace trace;
  bool ok = false;
};

Traced trace(const std::string &text, PropagationLayer layer) {
  Traced out;
  DiagnosticEngine diags;
  out.module = parseModule(text, diags);
  REQUIRE(out.module);
  PropagationOptions options;
  options.layer = layer;
  out.ok = propagateShardingsWithTrace(*out.module, options, diags, out.trace);
  return out;
}

const char *kChain = R"(
sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {"b"}]>},
                %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
})";

const SlotExplanation *explanationOf(const std::vector<SlotExplanation> &all,
                                     const Value *value) {
  for (const SlotExplanation &e : all)
    if (!e.slot.isFuncResult() && e.slot.value == value)
      return &e;
  return nullptr;
}

Operation *opNamed(Module &module, std::string_view name) {
  Operation *found = nullptr;
  walk(module.op(), [&](Operation &op) {
    if (!found && op.is(name))
      found = &op;
  });
  return found;
}

} // namespace

TEST_CASE("trace: steps in decision order with op, factor and layer position") {
  Traced t = trace(kChain, PropagationLayer::UserPriority);
  REQUIRE(t.ok);
  REQUIRE(t.trace.steps.size() >= 3);
  // Seeds: the two axes of %arg0, from input 0.
  REQUIRE(t.trace.seeds.size() == 2);
  CHECK(t.trace.seeds[0].axis == fullAxis("a"));
  CHECK(originName(t.trace.seeds[0].origin) == "input: 0");
  for (size_t i = 0; i < t.trace.steps.size(); ++i) {
    const TraceStep &step = t.trace.steps[i];
    CHECK(step.index == static_cast<int64_t>(i));
    CHECK(step.position.user_priority == 0);
    CHECK(step.position.op_priority_level >= 0);
    CHECK(step.position.strategy == FactorStrategy::Aggressive);
    CHECK_FALSE(step.decisions.empty());
  }
  // The add is first: elementwise ops propagate at op-priority level 0.
  const TraceStep &first = t.trace.steps[0];
  CHECK(first.op->is("stablehlo.add"));
  CHECK(first.kind == StepKind::Op);
  CHECK(first.position.op_priority_level == 0);
  bool result_got_a = false;
  for (const AxisDecision &d : first.decisions)
    if (d.target == EdgeNode{EdgeNodeType::Result, 0} &&
        d.axis == fullAxis("a")) {
      result_got_a = true;
      CHECK(d.source == EdgeNode{EdgeNodeType::Operand, 0});
      CHECK(d.factor == 0);
    }
  CHECK(result_got_a);
  // The func result is filled last, from the returned value.
  const TraceStep &last = t.trace.steps.back();
  CHECK(last.kind == StepKind::FuncResult);
  CHECK(last.results[0].isFuncResult());
}

TEST_CASE("trace: every axis of every value is explained") {
  Traced t = trace(kChain, PropagationLayer::OpPriority);
  REQUIRE(t.ok);
  Operation *negate = opNamed(*t.module, "stablehlo.negate");
  REQUIRE(negate);
  std::vector<SlotExplanation> all = explainShardings(t.trace);
  const SlotExplanation *e = explanationOf(all, negate->result(0));
  REQUIRE(e);
  REQUIRE(e->axes.size() == 2);
  for (const AxisExplanation &a : e->axes) {
    REQUIRE(a.step);
    REQUIRE(a.decision);
    CHECK(a.step->op == negate);
    CHECK(a.step->position.user_priority == -1);
    CHECK(a.step->position.op_priority_level == 0);
    REQUIRE(a.origin);
    CHECK(originName(*a.origin) == "input: 0");
  }
  CHECK(e->axes[0].decision->factor == 0);
  CHECK(e->axes[1].decision->factor == 1);
  // %arg0's axes were written by the user.
  Value *arg0 = t.module->lookupSymbol("main")->region(0).front().argument(0);
  const SlotExplanation *user = explanationOf(all, arg0);
  REQUIRE(user);
  REQUIRE(user->axes.size() == 2);
  CHECK(user->axes[0].step == nullptr);
  CHECK(user->axes[0].group_copy == nullptr);
}

TEST_CASE("trace: the user-priority round of an axis") {
  Traced t = trace(R"(
sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}p1, {"b"}]>})
    -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
})",
                   PropagationLayer::UserPriority);
  REQUIRE(t.ok);
  Operation *negate = opNamed(*t.module, "stablehlo.negate");
  std::vector<SlotExplanation> all = explainShardings(t.trace);
  const SlotExplanation *e = explanationOf(all, negate->result(0));
  REQUIRE(e);
  REQUIRE(e->axes.size() == 2);
  // "b" (priority 0) comes in round 0, "a" (p1) in round 1.
  CHECK(e->axes[0].axis == fullAxis("b"));
  CHECK(e->axes[0].step->position.user_priority == 0);
  CHECK(e->axes[1].axis == fullAxis("a"));
  CHECK(e->axes[1].step->position.user_priority == 1);
  CHECK(t.trace.seeds[0].priority == 1);
}

TEST_CASE("trace: basic-then-aggressive records the strategy of each step") {
  DiagnosticEngine diags;
  auto module = parseModule(R"(
sdy.mesh @m = <["a"=2, "b"=2, "c"=2]>
func.func @main(%arg0: tensor<256x512xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {"b", "c"}]>},
                %arg1: tensor<128x512xf32> {sdy.sharding = #sdy.sharding<@m, [{"c", "b"}, {"a"}]>})
    -> tensor<256x128xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1] :
    (tensor<256x512xf32>, tensor<128x512xf32>) -> tensor<256x128xf32>
  return %0 : tensor<256x128xf32>
})",
                            diags);
  REQUIRE(module);
  PropagationOptions options;
  options.layer = PropagationLayer::Aggressive;
  options.strategies = {FactorStrategy::Basic, FactorStrategy::Aggressive};
  PropagationTrace t;
  REQUIRE(propagateShardingsWithTrace(*module, options, diags, t));
  REQUIRE_FALSE(t.steps.empty());
  // Basic cannot resolve the conflicts on the contracting dim; aggressive
  // gives the result both non-contracting shardings.
  bool aggressive = false;
  for (const TraceStep &step : t.steps) {
    CHECK(step.position.op_priority_level == -1);
    aggressive =
        aggressive || step.position.strategy == FactorStrategy::Aggressive;
  }
  CHECK(aggressive);
}

TEST_CASE("trace: the sharding-origins attributes are the origins view") {
  DiagnosticEngine diags;
  auto module = parseModule(kChain, diags);
  REQUIRE(module);
  PropagationOptions options;
  options.layer = PropagationLayer::Aggressive;
  PropagationTrace t;
  REQUIRE(propagateShardingsWithTrace(*module, options, diags, t));
  std::vector<ValueOrigins> origins = shardingOrigins(t);
  Operation *negate = opNamed(*module, "stablehlo.negate");
  bool found = false;
  for (const ValueOrigins &vo : origins)
    if (vo.value == negate->result(0)) {
      found = true;
      REQUIRE(vo.axes.size() == 2);
      CHECK(originName(vo.axes[0].second) == "input: 0");
    }
  CHECK(found);

  // The same run with the debug option writes what the view says.
  auto again = parseModule(kChain, diags);
  options.debug_sharding_origins = true;
  REQUIRE(propagateShardings(*again, options, diags));
  std::string out = printModule(*again);
  CHECK(out.find("stablehlo.negate %0 {sdy.sharding = "
                 "#sdy.sharding_per_value<[<@m, [{\"a\", ?}, {\"b\", ?}]>]>, "
                 "sdy.sharding_origins = [{a = \"input: 0\", b = \"input: "
                 "0\"}]}") != std::string::npos);
  CHECK(out.find("sdy.sharding_origins = {a = \"self\", b = \"self\"}") !=
        std::string::npos);
}

TEST_CASE("trace: propagation edges view and its text") {
  std::vector<AxisEdges> axes = {
      {fullAxis("b"),
       {{{EdgeNodeType::Result, 0}, {EdgeNodeType::Operand, 1}, 4},
        {{EdgeNodeType::Result, 0}, {EdgeNodeType::Operand, 0}, 4},
        {{EdgeNodeType::Result, 0}, {EdgeNodeType::Operand, 0}, 7}}},
      {fullAxis("a"),
       {{{EdgeNodeType::Operand, 0}, {EdgeNodeType::Result, 0}, 4}}},
      {subAxis("c", 1, 2),
       {{{EdgeNodeType::Operand, 0}, {EdgeNodeType::Result, 0}, 1}}}};
  CHECK(propagationEdgesText(axes) ==
        "#sdy.propagation_edges<[{step-1 = [{\"c\":(1)2 = operand-0 -> "
        "[result-0]}]}, {step-4 = [{\"a\" = operand-0 -> [result-0]}, "
        "{\"b\" = result-0 -> [operand-0, operand-1]}]}]>");
  CHECK(propagationEdgesText({}).empty());
}

TEST_CASE("trace: sub-axes that complete each other are reported merged") {
  Traced t = trace(R"(
sdy.mesh @m = <["c"=8]>
func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{"c":(1)4, ?}, {"c":(4)2, ?}]>})
    -> tensor<16xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<4x4xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
})",
                   PropagationLayer::Aggressive);
  REQUIRE(t.ok);
  REQUIRE_FALSE(t.trace.steps.empty());
  const TraceStep &step = t.trace.steps[0];
  CHECK(step.op->is("stablehlo.reshape"));
  REQUIRE(step.decisions.size() == 1);
  CHECK(step.decisions[0].axis == fullAxis("c"));
  CHECK(step.decisions[0].factor == 1);
}

TEST_CASE("trace: sharding-group members record the copy") {
  Traced t = trace(R"(
sdy.mesh @m = <["a"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a", ?}]>},
                %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = stablehlo.abs %arg1 : tensor<8xf32>
  sdy.sharding_group %0 group_id=0 : tensor<8xf32>
  sdy.sharding_group %1 group_id=0 : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
})",
                   PropagationLayer::Basic);
  REQUIRE(t.ok);
  Operation *abs = opNamed(*t.module, "stablehlo.abs");
  std::vector<SlotExplanation> all = explainShardings(t.trace);
  const SlotExplanation *e = explanationOf(all, abs->result(0));
  REQUIRE(e);
  REQUIRE(e->axes.size() == 1);
  REQUIRE(e->axes[0].group_copy);
  CHECK(e->axes[0].group_step->op->is("stablehlo.negate"));
  REQUIRE(e->axes[0].origin);
  CHECK(originName(*e->axes[0].origin) == "input: 0");
}

TEST_CASE("trace: JSON names values as the printer does") {
  Traced t = trace(kChain, PropagationLayer::UserPriority);
  REQUIRE(t.ok);
  nlohmann::json j = traceToJson(t.trace, *t.module);
  REQUIRE(j["steps"].is_array());
  CHECK(j["steps"].size() == t.trace.steps.size());
  const nlohmann::json &first = j["steps"][0];
  CHECK(first["kind"] == "op");
  CHECK(first["op"]["name"] == "stablehlo.add");
  CHECK(first["op"]["results"][0] == "%0");
  CHECK(first["op"]["func"] == "main");
  CHECK(first["strategy"] == "aggressive");
  CHECK(first["user_priority"] == 0);
  bool negate_explained = false;
  for (const nlohmann::json &v : j["values"])
    if (v["slot"].value("value", "") == "%1") {
      negate_explained = true;
      CHECK(v["axes"].size() == 2);
      CHECK(v["axes"][0]["axis"] == "a");
      CHECK(v["axes"][0]["origin"] == "input: 0");
      CHECK(v["axes"][0]["user_given"] == false);
      CHECK(v["axes"][0]["op"]["name"] == "stablehlo.negate");
      CHECK(v["axes"][0]["factor_name"] == "i");
      CHECK(v["axes"][0]["from"]["value"] == "%0");
    }
  CHECK(negate_explained);
  CHECK(j["seeds"][0]["slot"]["value"] == "%arg0");
  // Round trip through text.
  CHECK(nlohmann::json::parse(j.dump()) == j);
}

TEST_CASE("trace: a module that cannot be propagated gives an empty trace") {
  Traced t = trace(R"(
sdy.mesh @m = <["a"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>})
    -> tensor<?xf32> {
  %0 = stablehlo.convert %arg0 : (tensor<8xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
})",
                   PropagationLayer::UserPriority);
  CHECK_FALSE(t.ok);
  CHECK(t.trace.steps.empty());
}
