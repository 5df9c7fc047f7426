// -sdy-replicate-operands-of-unknown-ops: an op Shardy has no sharding rule
// for (uniform_quantize, chlo.top_k, an unknown custom call) is not
// partitioned: every device runs it whole, as XLA's partitioner runs an op
// it cannot partition. (Not inside a manual computation, whose body the
// user partitioned.) Shardy's explicit reshards leave such an op alone, so
// its sharded operands would reach it as shards, and a result propagation
// sharded would be computed from them; this pass makes each device read
// its operands whole and take its shard of each sharded result after it.
//
//   %q = stablehlo.uniform_quantize %w    (%w: <@m, [{"a"}, {}]>)
// becomes
//   %r = sdy.reshard %w <@m, [{}, {}]>
//   %q = stablehlo.uniform_quantize %r
// and -sdy-reshard-to-collectives turns the reshard into an all_gather;
//
//   %v, %i = chlo.top_k(%x, k = 2)  (%x, %i: <@m, [{"a"}, {}]>; %v: [{}, {}])
// becomes
//   %r = sdy.reshard %x <@m, [{}, {}]>
//   %v, %i0 = chlo.top_k(%r, k = 2)                (both: [{}, {}])
//   %i = sdy.reshard %i0 <@m, [{"a"}, {}]>         (a slice on each device)
#include "export_passes.h"

#include "passes/pass_utils.h"
#include "rules/registry.h"
#include "sharding/sharding_utils.h"
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

bool replicateOperands(Operation &op, Context &ctx) {
  bool changed = false;
  // Each sharded result computed whole, then resharded for its users.
  Operation *after = op.nextInBlock();
  for (size_t i = 0; i < op.numResults(); ++i)
    if (const TensorSharding *s = getSharding(op.result(i));
        s && isSharded(*s)) {
      reshardResultBack(op, i, fullyClosedSharding(s->mesh, s->dims.size()),
                        after, ctx);
      changed = true;
    }
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Value *operand = op.operand(i);
    const TensorSharding *sharding = getSharding(operand);
    if (!sharding || !isSharded(*sharding) || !operand->type ||
        !operand->type->isRankedTensor())
      continue;
    reshardOperandBefore(
        op, i, fullyClosedSharding(sharding->mesh, sharding->dims.size()), ctx);
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
      if (&op != &func && !partitionedAnyway(op) &&
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
