#include "shardlab/propagation/propagate.h"

#include "layers.h"
#include "shardlab/propagation/debug_info.h"
#include "shardlab/propagation/trace.h"
#include "shardlab/rules/registry.h"

#include <optional>

#include <string>

namespace shardlab {

namespace {

// Shardy rejects dynamic shapes and tuples of op results before propagating
// (the first offending op in walk order gets the error).
bool validShapes(Module &module, DiagnosticEngine &diags) {
  bool ok = true;
  walkPostOrder(module.op(), [&](Operation &op) {
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

namespace {

bool propagateImpl(Module &module, const PropagationOptions &options,
                   DiagnosticEngine &diags, PropagationTrace *trace) {
  // Shardy prepares its debugging handler before checking the shapes.
  std::optional<ShardingDebugSession> session;
  if (trace || options.debug_sharding_origins ||
      options.debug_propagation_edge_sharding)
    session.emplace(module, options.debug_sharding_origins,
                    options.debug_propagation_edge_sharding);
  if (!validShapes(module, diags))
    return false;
  prop::ShardingGroups groups = prop::buildShardingGroups(module, diags);
  prop::LayerContext lc;
  lc.observer = session ? &session->observer() : nullptr;
  prop::OpIndex index;
  index.build(module);
  lc.index = &index;
  prop::NoChangeCache no_change(index.order.size());
  lc.no_change = &no_change;
  RuleCache rules;
  lc.rules = &rules;
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
  if (session) {
    session->save();
    if (trace)
      *trace = std::move(session->trace());
  }
  return true;
}

} // namespace

bool propagateShardings(Module &module, const PropagationOptions &options,
                        DiagnosticEngine &diags) {
  return propagateImpl(module, options, diags, nullptr);
}

bool propagateShardingsWithTrace(Module &module,
                                 const PropagationOptions &options,
                                 DiagnosticEngine &diags,
                                 PropagationTrace &trace) {
  trace = PropagationTrace{};
  return propagateImpl(module, options, diags, &trace);
}

} // namespace shardlab
