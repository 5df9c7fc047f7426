// Properties of propagation over 1000 generated modules with random
// shardings (tests/unit/module_gen.h), with the full default stack
// (user priorities, op priorities, aggressive):
// - the output verifies;
// - propagating the output again changes nothing;
// - closed dimension shardings are never changed, and the axes a user gave
//   an open dimension stay its major axes (replicated axes stay too);
// - renaming mesh axes, the mesh or the values changes nothing but the
//   names;
// - every axis propagation adds to a value is explained by the trace.
#include "shardlab/passes/pass_manager.h"

#include <doctest/doctest.h>

#include "module_gen.h"

#include "propagation/projection.h"
#include "propagation/propagate.h"
#include "propagation/trace.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/text/text.h"
#include "verify/verifier.h"

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace shardlab;
using namespace shardlab::testgen;

namespace {

constexpr int kModules = 1000;

std::string firstError(const DiagnosticEngine &diags) {
  return diags.diagnostics().empty() ? std::string()
                                     : diags.diagnostics()[0].message;
}

// The module, or null with the first error (loadModule: parse + verify).
std::unique_ptr<Module> parseAndVerify(const std::string &text,
                                       std::string &error) {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = loadModule(text, diags).module;
  if (!module)
    error = firstError(diags);
  return module;
}

// Propagates `text` with the default stack; "" and `error` on failure.
std::string propagate(const std::string &text, std::string &error,
                      bool memoize_steps = true) {
  auto module = parseAndVerify(text, error);
  if (!module)
    return "";
  DiagnosticEngine diags;
  PropagationOptions options;
  options.memoize_steps = memoize_steps;
  if (!propagateShardings(*module, options, diags)) {
    error = firstError(diags);
    return "";
  }
  return printModule(*module);
}

// Every sharding a user can write, in a fixed order: func arguments, func
// results, then per op its result shardings or its constraint sharding.
std::vector<const TensorSharding *> userShardings(Module &module) {
  std::vector<const TensorSharding *> out;
  Operation *func = module.lookupSymbol("main");
  Block &body = func->region(0).front();
  for (size_t i = 0; i < body.numArguments(); ++i)
    out.push_back(getSharding(body.argument(i)));
  for (size_t i = 0; i < funcNumResults(*func); ++i)
    out.push_back(getFuncResultSharding(*func, i));
  walk(*func, [&](Operation &op) {
    for (size_t i = 0; i < op.numResults(); ++i)
      out.push_back(getSharding(op.result(i)));
  });
  return out;
}

// `prefix` starts `axes`, its last axis possibly grown from a sub-axis to a
// larger one ("y":(1)2 -> "y"), as propagation may extend it.
bool startsWith(const std::vector<AxisRef> &axes,
                const std::vector<AxisRef> &prefix) {
  return axisListPrefixStatus(prefix, axes) != PrefixStatus::NotAPrefix;
}

// "" when every user dimension sharding of `before` is kept by `after`.
std::string userShardingsKept(Module &before, Module &after) {
  std::vector<const TensorSharding *> in = userShardings(before);
  std::vector<const TensorSharding *> out = userShardings(after);
  if (in.size() != out.size())
    return "different number of shardings";
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i])
      continue;
    if (!out[i])
      return "sharding " + std::to_string(i) + " dropped";
    for (size_t d = 0; d < in[i]->dims.size(); ++d) {
      const DimSharding &user = in[i]->dims[d];
      const DimSharding &now = out[i]->dims[d];
      if (user.closed && (!now.closed || !(now.axes == user.axes)))
        return "closed dim " + std::to_string(d) + " of sharding " +
               std::to_string(i) + " changed";
      if (!startsWith(now.axes, user.axes))
        return "user axes of dim " + std::to_string(d) + " of sharding " +
               std::to_string(i) + " changed";
    }
    for (const AxisRef &axis : in[i]->replicated)
      if (std::find(out[i]->replicated.begin(), out[i]->replicated.end(),
                    axis) == out[i]->replicated.end())
        return "replicated axis of sharding " + std::to_string(i) + " lost";
  }
  return "";
}

// The axes of every value's sharding (func arguments, then op results, in
// walk order), flattened over dims.
std::vector<std::pair<Value *, std::vector<AxisRef>>>
valueAxes(Module &module) {
  std::vector<std::pair<Value *, std::vector<AxisRef>>> out;
  auto add = [&](Value *v) {
    std::vector<AxisRef> axes;
    if (const TensorSharding *s = getSharding(v))
      for (const DimSharding &dim : s->dims)
        axes.insert(axes.end(), dim.axes.begin(), dim.axes.end());
    out.emplace_back(v, std::move(axes));
  };
  Operation *func = module.lookupSymbol("main");
  Block &body = func->region(0).front();
  for (size_t i = 0; i < body.numArguments(); ++i)
    add(body.argument(i));
  walk(*func, [&](Operation &op) {
    for (size_t i = 0; i < op.numResults(); ++i)
      add(op.result(i));
  });
  return out;
}

// "" when every axis propagation added to a value is explained by the
// trace (a decision or a sharding-group copy for that value, on the axis or
// on one containing it or contained in it).
std::string traceExplainsNewAxes(const std::string &text) {
  std::string error;
  auto before = parseAndVerify(text, error);
  auto module = parseAndVerify(text, error);
  if (!module || !before)
    return "parse: " + error;
  PropagationTrace trace;
  DiagnosticEngine diags;
  if (!propagateShardingsWithTrace(*module, PropagationOptions{}, diags, trace))
    return "propagation failed";
  std::vector<SlotExplanation> explained = explainShardings(trace);
  auto in = valueAxes(*before);
  auto out = valueAxes(*module);
  if (in.size() != out.size())
    return "structure changed";
  for (size_t i = 0; i < out.size(); ++i)
    for (const AxisRef &axis : out[i].second) {
      const std::vector<AxisRef> &old_axes = in[i].second;
      if (std::find(old_axes.begin(), old_axes.end(), axis) != old_axes.end())
        continue;
      bool found = false;
      for (const SlotExplanation &e : explained)
        if (!e.slot.isFuncResult() && e.slot.value == out[i].first)
          for (const AxisExplanation &a : e.axes)
            found = found || contains(a.axis, axis) || contains(axis, a.axis);
      if (!found)
        return "value " + std::to_string(i) + ": axis " + axis.name +
               " has no explanation";
    }
  return "";
}

// Replaces the quoted axis names and the mesh name of `from` by `to`.
std::string rename(std::string text, const Naming &from, const Naming &to) {
  auto replaceAll = [&](const std::string &a, const std::string &b) {
    for (size_t pos = text.find(a); pos != std::string::npos;
         pos = text.find(a, pos + b.size()))
      text.replace(pos, a.size(), b);
  };
  for (size_t i = 0; i < from.axis_names.size(); ++i)
    replaceAll("\"" + from.axis_names[i] + "\"",
               "\"\x01" + std::to_string(i) + "\x01\"");
  for (size_t i = 0; i < to.axis_names.size(); ++i)
    replaceAll("\"\x01" + std::to_string(i) + "\x01\"",
               "\"" + to.axis_names[i] + "\"");
  replaceAll("@" + from.mesh_name + ",", "@" + to.mesh_name + ",");
  replaceAll("@" + from.mesh_name + " ", "@" + to.mesh_name + " ");
  return text;
}

Naming otherNaming(const ModuleSpec &spec, uint64_t seed) {
  std::vector<std::string> pool = {"data", "model",  "pipe", "b",
                                   "a",    "expert", "seq",  "z1"};
  std::mt19937_64 rng(seed);
  std::shuffle(pool.begin(), pool.end(), rng);
  Naming naming;
  naming.axis_names.assign(
      pool.begin(),
      pool.begin() + static_cast<std::ptrdiff_t>(spec.axis_sizes.size()));
  naming.mesh_name = "grid";
  naming.value_prefix = "v";
  return naming;
}

} // namespace

TEST_CASE("properties of propagation over generated modules") {
  int checked = 0;
  for (uint64_t seed = 0; seed < kModules; ++seed) {
    ModuleSpec spec = generateModule(seed);
    Naming naming = defaultNaming(spec);
    std::string text = renderModule(spec, naming);
    INFO("seed " << seed << "\n" << text);

    std::string error;
    auto input = parseAndVerify(text, error);
    REQUIRE_MESSAGE(input, "generated module does not verify: " << error);

    std::string once = propagate(text, error);
    REQUIRE_MESSAGE(!once.empty(), "propagation failed: " << error);
    INFO("propagated:\n" << once);

    // The output verifies.
    auto output = parseAndVerify(once, error);
    REQUIRE_MESSAGE(output, "output does not verify: " << error);

    // Propagating the output again changes nothing.
    CHECK(propagate(once, error) == once);

    // Reusing the outcomes of equal steps changes nothing either.
    CHECK(propagate(text, error, /*memoize_steps=*/false) == once);

    // Closed and user-given dimension shardings are kept.
    std::string kept = userShardingsKept(*input, *output);
    CHECK_MESSAGE(kept.empty(), kept);

    // Every axis propagation added is explained by the trace.
    std::string unexplained = traceExplainsNewAxes(text);
    CHECK_MESSAGE(unexplained.empty(), unexplained);

    // Renaming axes, the mesh and the values changes only the names.
    Naming other = otherNaming(spec, seed);
    std::string renamed = propagate(renderModule(spec, other), error);
    CHECK(renamed == rename(once, naming, other));
    ++checked;
  }
  CHECK(checked == kModules);
}

TEST_CASE("the generator covers every op kind and sharding feature") {
  std::string all;
  for (uint64_t seed = 0; seed < 200; ++seed)
    all +=
        renderModule(generateModule(seed), defaultNaming(generateModule(seed)));
  for (const char *needle :
       {"stablehlo.dot_general", "batching_dims", "stablehlo.reshape",
        "stablehlo.transpose", "stablehlo.reduce", "stablehlo.broadcast_in_dim",
        "stablehlo.add", "stablehlo.negate", "sdy.sharding_constraint",
        "sdy.sharding_per_value", "replicated={", "}p1", ":(1)2", ":(2)2",
        "\"z\"=", ", ?}"})
    CHECK_MESSAGE(all.find(needle) != std::string::npos, needle);
}
