// -sdy-replicate-operands-of-unknown-ops: an op Shardy has no sharding rule
// for (uniform_quantize, chlo.top_k, an unknown custom call) and no
// sharding of its own that shards something is not partitioned: every
// device runs it whole. (Not inside a manual
// computation, whose body the user partitioned.) Shardy's explicit
// reshards leave such an op alone, so its sharded operands would reach it
// as shards; this pass makes each device read them whole.
//
//   %q = stablehlo.uniform_quantize %w    (%w: <@m, [{"a"}, {}]>)
// becomes
//   %r = sdy.reshard %w <@m, [{}, {}]>
//   %q = stablehlo.uniform_quantize %r
// and -sdy-reshard-to-collectives turns the reshard into an all_gather.
#include "export_passes.h"

#include "passes/pass_utils.h"
#include "rules/registry.h"
#include "shardlab/ir/sharding_access.h"

namespace shardlab {
namespace {

bool isSharded(const TensorSharding &sharding) {
  for (const DimSharding &dim : sharding.dims)
    if (!dim.axes.empty())
      return true;
  return false;
}

// Ops that are partitioned without a rule of their own: sdy ops, control
// flow and data-flow ops (their shardings are those of their values),
// calls and terminators.
bool partitionedAnyway(Operation &op) {
  return op.name.substr(0, 4) == "sdy." || op.numRegions() > 0 ||
         isBlockReturn(op) || op.is("func.call") || op.is("call") ||
         op.is("stablehlo.optimization_barrier") ||
         op.is("stablehlo.constant") || op.numOperands() == 0;
}

bool hasRule(Operation &op) {
  return op.attrs.get(kShardingRuleAttr) || createOpShardingRule(op, false);
}

// A result sharding that shards something (the export closes the
// shardings of every op, an unknown one's to replicated).
bool shardsItsResults(Operation &op) {
  for (size_t i = 0; i < op.numResults(); ++i)
    if (const TensorSharding *s = getSharding(op.result(i)); s && isSharded(*s))
      return true;
  return false;
}

bool replicateOperands(Operation &op, Context &ctx) {
  bool changed = false;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Value *operand = op.operand(i);
    const TensorSharding *sharding = getSharding(operand);
    if (!sharding || !isSharded(*sharding) || !operand->type ||
        !operand->type->isRankedTensor())
      continue;
    TensorSharding whole;
    whole.mesh = sharding->mesh;
    whole.dims.assign(sharding->dims.size(), DimSharding{});
    auto reshard =
        makeOp(ctx, "sdy.reshard", {operand}, {operand->type}, op.loc);
    reshard->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(whole));
    Operation *made = op.parentBlock()->insertBefore(&op, std::move(reshard));
    op.setOperand(i, made->result(0));
    changed = true;
  }
  return changed;
}

} // namespace

bool replicateOperandsOfUnknownOpsPass(Module &module, const PassOptions &,
                                       DiagnosticEngine &) {
  std::vector<Operation *> unknown;
  forEachFunc(module, [&](Operation &func) {
    walk(func, [&](Operation &op) {
      if (&op != &func && !partitionedAnyway(op) && !shardsItsResults(op) &&
          !insideManualComputation(op) && !hasRule(op))
        unknown.push_back(&op);
    });
  });
  bool changed = false;
  for (Operation *op : unknown)
    changed = replicateOperands(*op, module.ctx()) || changed;
  return changed || markUnchanged(module);
}

} // namespace shardlab
