#include "shardlab/propagation/propagate.h"

#include "layers.h"
#include "shardlab/rules/registry.h"

#include <string>

namespace shardlab {

namespace {

// Shardy rejects dynamic shapes and tuples before propagating.
bool validShapes(Module &module, DiagnosticEngine &diags) {
  bool ok = true;
  walk(module.op(), [&](Operation &op) {
    for (size_t i = 0; ok && i < op.numResults(); ++i) {
      Type type = op.result(i)->type;
      if (type->isTensor() &&
          (!type->isRankedTensor() || !type->hasStaticShape())) {
        diags.error(op.loc, "Shardy propagation only supports ranked tensors "
                            "with a static shape. type: " +
                                type->text);
        ok = false;
      } else if (type->kind == TypeKind::Tuple) {
        diags.error(op.loc,
                    "Shardy propagation doesn't support tuples: " + type->text);
        ok = false;
      }
    }
  });
  return ok;
}

void removeShardingRules(Module &module) {
  walk(module.op(), [&](Operation &op) {
    const Attr *rule = op.attrs.get(kShardingRuleAttr);
    if (rule && rule->kind == AttrKind::OpShardingRule &&
        !rule->rule().is_custom)
      op.attrs.erase(kShardingRuleAttr);
  });
}

} // namespace

bool propagateShardings(Module &module, const PropagationOptions &options,
                        DiagnosticEngine &diags) {
  if (!validShapes(module, diags))
    return false;
  prop::ShardingGroups groups = prop::buildShardingGroups(module, diags);
  prop::LayerContext lc;
  lc.strategies = options.strategies;
  lc.conservative = options.conservative;
  lc.run_op_priority = options.run_op_priority;
  lc.groups = &groups;
  lc.warnings = &diags;
  prop::OpDirectionFn any = [](Operation &, int64_t) {
    return PropagationDirection::Both;
  };
  switch (options.layer) {
  case PropagationLayer::Basic:
    lc.strategies = {FactorStrategy::Basic};
    prop::runStrategies(module, lc, any);
    break;
  case PropagationLayer::Aggressive:
    prop::runStrategies(module, lc, any);
    break;
  case PropagationLayer::OpPriority:
    prop::runOpPriority(module, lc, any);
    break;
  case PropagationLayer::UserPriority:
    prop::runUserPriority(module, lc, any);
    break;
  }
  if (!options.keep_sharding_rules)
    removeShardingRules(module);
  return true;
}

} // namespace shardlab
