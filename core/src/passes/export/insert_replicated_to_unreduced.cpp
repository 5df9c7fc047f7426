// -sdy-insert-replicated-to-unreduced: a result unreduced (summed) over
// axes its op does not reduce over holds the whole value on every device
// along them, and its sum over them would be the value times their size.
// Shardy's explicit reshards leave such a result as it is (its lit tests
// expect so); for the per-device program the op computes the result with
// those axes replicated, and an sdy.replicated_to_unreduced after it keeps
// the value on one device of each group and zeros on the others
// (-sdy-convert-global-to-local), so that the partial results add up.
//
// The op reduces over an axis when the axis splits a dimension of an
// operand that maps a reduction factor of its rule, or an operand is
// unreduced over it (a sum of partial sums is one). With a 4-device "x":
//
//   %r = stablehlo.reduce(%a init: %z) across dimensions = [1]
//        {sdy.sharding = <@m, [{}], unreduced={"x"}>}
//                                         (%a: <@m, [{}, {"x":(1)2}]>)
// becomes
//   %r = stablehlo.reduce ... {sdy.sharding = <@m, [{}], unreduced={"x":(1)2}>}
//   %u = sdy.replicated_to_unreduced {"x":(2)2} %r
//        out_sharding=<@m, [{}], unreduced={"x"}>   (the users read %u)
#include "export_passes.h"

#include "passes/pass_utils.h"
#include "rules/registry.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>

namespace shardlab {
namespace {

bool mapsReduction(const OpShardingRule::DimMapping &dim,
                   const OpShardingRule &rule) {
  return std::any_of(dim.begin(), dim.end(), [&](int64_t factor) {
    return std::find(rule.reduction.begin(), rule.reduction.end(), factor) !=
           rule.reduction.end();
  });
}

// The axes `op` reduces over: those of operand dimensions that map a
// reduction factor, and the operands' unreduced axes.
std::vector<AxisRef> reducedAxes(Operation &op, const OpShardingRule &rule) {
  std::vector<AxisRef> axes;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const TensorSharding *sharding = getSharding(op.operand(i));
    if (!sharding)
      continue;
    axes.insert(axes.end(), sharding->unreduced.begin(),
                sharding->unreduced.end());
    if (i >= rule.operands.size())
      continue;
    const OpShardingRule::TensorMapping &mapping = rule.operands[i];
    for (size_t d = 0; d < mapping.size() && d < sharding->dims.size(); ++d)
      if (mapsReduction(mapping[d], rule))
        axes.insert(axes.end(), sharding->dims[d].axes.begin(),
                    sharding->dims[d].axes.end());
  }
  return axes;
}

bool insertAfterResults(Module &module, Operation &op) {
  bool changed = false;
  std::optional<OpShardingRule> rule;
  for (size_t i = 0; i < op.numResults(); ++i) {
    Value *result = op.result(i);
    const TensorSharding *sharding = getSharding(result);
    if (!sharding || sharding->unreduced.empty() ||
        sharding->unreduced_kind != ReductionKind::Sum)
      continue;
    const Mesh *mesh = lookupMesh(module, *sharding);
    if (!mesh)
      continue;
    if (!rule)
      rule = getOrCreateShardingRule(op, module.ctx(), false, false);
    if (!rule)
      return changed;
    const std::vector<AxisRef> missing =
        getAxisSetDiff(sharding->unreduced, reducedAxes(op, *rule), *mesh);
    if (missing.empty())
      continue;
    Context &ctx = module.ctx();
    const TensorSharding wanted = *sharding;
    TensorSharding computed = wanted;
    computed.unreduced = getAxisSetDiff(wanted.unreduced, missing, *mesh);
    setSharding(result, computed, ctx);
    auto made = makeOp(ctx, "sdy.replicated_to_unreduced", {result},
                       {result->type}, op.loc);
    made->attrs.set(
        ctx.intern("axes"),
        ctx.attrs.make(Attr{AttrKind::AxisRefList, missing, nullptr, {}}));
    made->attrs.set(ctx.intern("out_sharding"), ctx.attrs.sharding(wanted));
    Operation *after =
        op.parentBlock()->insertBefore(op.nextInBlock(), std::move(made));
    result->replaceAllUsesExcept(after->result(0), after);
    changed = true;
  }
  return changed;
}

} // namespace

bool insertReplicatedToUnreducedPass(Module &module, const PassOptions &,
                                     DiagnosticEngine &) {
  std::vector<Operation *> ops;
  forEachFunc(module, [&](Operation &func) {
    walk(func, [&](Operation &op) {
      if (&op != &func && op.name.substr(0, 4) != "sdy." &&
          op.numResults() > 0 && !insideManualComputation(op))
        ops.push_back(&op);
    });
  });
  bool changed = false;
  for (Operation *op : ops)
    changed = insertAfterResults(module, *op) || changed;
  return changed || markUnchanged(module);
}

} // namespace shardlab
