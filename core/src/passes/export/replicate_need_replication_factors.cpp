// -sdy-replicate-need-replication-factors: a dimension an op must read
// whole on every device is left sharded by Shardy's explicit reshards in
// two cases, which XLA's partitioner then gathers:
//   - a need_replication factor of a custom rule (a custom_partitioning
//     rule's: XLA calls the op's own partitioning, which reads it whole), or
//     of a registry rule that Shardy does not enforce (its explicit reshards
//     move a sort's sorted dimension, but not every such factor);
//   - a size-1 factor only operands have that is not a reduction: a
//     broadcast_in_dim's expanded dimension (1 row to N). Split over
//     devices, its one row is on the first shard's devices and the others
//     hold padding, which they would broadcast.
// This pass does what XLA does for the per-device program: each operand
// sharded along such a factor goes through an sdy.reshard that gathers it,
// the op computes those dimensions whole, and a result that was to be
// sharded along one is sliced back after it. (Not inside a manual
// computation, whose body the user partitioned.)
//
//   %o = stablehlo.custom_call @attn(%q) {sdy.sharding_rule =
//        #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=512}
//        need_replication={j}, custom>}            (%q: <@m, [{}, {"s"}]>)
// becomes
//   %r = sdy.reshard %q <@m, [{}, {}]>
//   %o = stablehlo.custom_call @attn(%r) ...          (%o: <@m, [{}, {}]>)
//   %b = sdy.reshard %o <@m, [{}, {"s"}]>       (the users read %b)
// and -sdy-reshard-to-collectives turns the reshards into an all_gather and
// an all_slice;
//
//   %b = stablehlo.broadcast_in_dim %x, dims = [0, 1]
//        : (tensor<1x20xf32>) -> tensor<20x20xf32>   (%x: <@m, [{"a"}, {}]>)
// becomes
//   %r = sdy.reshard %x <@m, [{}, {}]>
//   %b = stablehlo.broadcast_in_dim %r, dims = [0, 1] ...
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

// The need_replication factors, and the size-1 factors only operands map
// that are not reductions (a broadcast's expanded dimensions).
std::vector<int64_t> factorsReadWhole(const OpShardingRule &rule) {
  std::vector<int64_t> whole = rule.need_replication;
  std::vector<bool> in_result(rule.factor_sizes.size(), false);
  for (const OpShardingRule::TensorMapping &result : rule.results)
    for (const OpShardingRule::DimMapping &dim : result)
      for (int64_t factor : dim)
        if (factor >= 0 && size_t(factor) < in_result.size())
          in_result[size_t(factor)] = true;
  for (size_t f = 0; f < rule.factor_sizes.size(); ++f) {
    const int64_t factor = int64_t(f);
    const bool listed =
        std::find(whole.begin(), whole.end(), factor) != whole.end() ||
        std::find(rule.reduction.begin(), rule.reduction.end(), factor) !=
            rule.reduction.end();
    if (rule.factor_sizes[f] == 1 && !in_result[f] && !listed)
      whole.push_back(factor);
  }
  return whole;
}

bool replicateFactors(Operation &op, const OpShardingRule &rule,
                      const std::vector<int64_t> &whole, Context &ctx) {
  bool changed = false;
  for (size_t i = 0; i < op.numOperands() && i < rule.operands.size(); ++i) {
    const TensorSharding *sharding = getSharding(op.operand(i));
    if (!sharding)
      continue;
    if (auto gathered = withoutFactors(*sharding, rule.operands[i], whole)) {
      reshardOperandBefore(op, i, *gathered, ctx);
      changed = true;
    }
  }
  Operation *after = op.nextInBlock();
  for (size_t i = 0; i < op.numResults() && i < rule.results.size(); ++i) {
    const TensorSharding *stored = getSharding(op.result(i));
    if (!stored)
      continue;
    if (auto computed = withoutFactors(*stored, rule.results[i], whole)) {
      reshardResultBack(op, i, *computed, after, ctx);
      changed = true;
    }
  }
  return changed;
}

} // namespace

bool replicateNeedReplicationFactorsPass(Module &module, const PassOptions &,
                                         DiagnosticEngine &) {
  std::vector<Operation *> ops;
  forEachFunc(module, [&](Operation &func) {
    walk(func, [&](Operation &op) {
      if (&op != &func && op.name.substr(0, 4) != "sdy." &&
          !insideManualComputation(op))
        ops.push_back(&op);
    });
  });
  bool changed = false;
  for (Operation *op : ops) {
    const std::optional<OpShardingRule> rule =
        getOrCreateShardingRule(*op, module.ctx(), false, false);
    if (!rule)
      continue;
    const std::vector<int64_t> whole = factorsReadWhole(*rule);
    if (!whole.empty())
      changed = replicateFactors(*op, *rule, whole, module.ctx()) || changed;
  }
  return changed || markUnchanged(module);
}

} // namespace shardlab
