// -sdy-replicate-custom-call-factors: a custom call whose `custom` sharding
// rule says some factors need replication (a custom_partitioning rule's
// `need_replication`) is left alone by Shardy's explicit reshards: XLA's
// partitioner calls the op's own partitioning, which reads those
// dimensions whole. This pass does what that partitioning does for the
// per-device program: each operand sharded along such a factor goes through
// an sdy.reshard that gathers it, the op computes those dimensions whole,
// and a result that was to be sharded along one is sliced back after it.
// (Not inside a manual computation, whose body the user partitioned.)
//
//   %o = stablehlo.custom_call @attn(%q) {sdy.sharding_rule =
//        #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=512}
//        need_replication={j}, custom>}            (%q: <@m, [{}, {"s"}]>)
// becomes
//   %r = sdy.reshard %q <@m, [{}, {}]>
//   %o = stablehlo.custom_call @attn(%r) ...          (%o: <@m, [{}, {}]>)
//   %b = sdy.reshard %o <@m, [{}, {"s"}]>       (the users read %b)
// and -sdy-reshard-to-collectives turns the reshards into an all_gather and
// an all_slice.
#include "export_passes.h"

#include "passes/pass_utils.h"
#include "rules/registry.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>

namespace shardlab {
namespace {

// `sharding` without the axes of the dimensions `mapping` maps to a factor
// in `need`; nullopt when it shards none of them.
std::optional<TensorSharding>
withoutFactors(const TensorSharding &sharding,
               const OpShardingRule::TensorMapping &mapping,
               const std::vector<int64_t> &need) {
  TensorSharding whole = sharding;
  bool changed = false;
  for (size_t d = 0; d < mapping.size() && d < whole.dims.size(); ++d) {
    const bool needed =
        std::any_of(mapping[d].begin(), mapping[d].end(), [&](int64_t factor) {
          return std::find(need.begin(), need.end(), factor) != need.end();
        });
    if (needed && !whole.dims[d].axes.empty()) {
      whole.dims[d].axes.clear();
      changed = true;
    }
  }
  if (!changed)
    return std::nullopt;
  return whole;
}

std::unique_ptr<Operation> makeReshard(Context &ctx, Value *value,
                                       const TensorSharding &to,
                                       const Location &loc) {
  auto reshard = makeOp(ctx, "sdy.reshard", {value}, {value->type}, loc);
  reshard->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(to));
  return reshard;
}

bool replicateFactors(Operation &op, const OpShardingRule &rule, Context &ctx) {
  bool changed = false;
  for (size_t i = 0; i < op.numOperands() && i < rule.operands.size(); ++i) {
    Value *operand = op.operand(i);
    const TensorSharding *sharding = getSharding(operand);
    if (!sharding)
      continue;
    if (auto whole = withoutFactors(*sharding, rule.operands[i],
                                    rule.need_replication)) {
      Operation *made = op.parentBlock()->insertBefore(
          &op, makeReshard(ctx, operand, *whole, op.loc));
      op.setOperand(i, made->result(0));
      changed = true;
    }
  }
  for (size_t i = 0; i < op.numResults() && i < rule.results.size(); ++i) {
    Value *result = op.result(i);
    const TensorSharding *stored = getSharding(result);
    if (!stored)
      continue;
    const TensorSharding wanted = *stored;
    auto whole = withoutFactors(wanted, rule.results[i], rule.need_replication);
    if (!whole)
      continue;
    setSharding(result, *whole, ctx);
    Operation *back = op.parentBlock()->insertBefore(
        op.nextInBlock(), makeReshard(ctx, result, wanted, op.loc));
    result->replaceAllUsesWith(back->result(0));
    back->setOperand(0, result);
    changed = true;
  }
  return changed;
}

} // namespace

bool replicateCustomCallFactorsPass(Module &module, const PassOptions &,
                                    DiagnosticEngine &) {
  std::vector<Operation *> ops;
  forEachFunc(module, [&](Operation &func) {
    walk(func, [&](Operation &op) {
      const Attr *rule = op.attrs.get(kShardingRuleAttr);
      if (rule && rule->kind == AttrKind::OpShardingRule &&
          rule->rule().is_custom && !rule->rule().need_replication.empty() &&
          !insideManualComputation(op))
        ops.push_back(&op);
    });
  });
  bool changed = false;
  for (Operation *op : ops) {
    const OpShardingRule rule = op->attrs.get(kShardingRuleAttr)->rule();
    changed = replicateFactors(*op, rule, module.ctx()) || changed;
  }
  return changed || markUnchanged(module);
}

} // namespace shardlab
