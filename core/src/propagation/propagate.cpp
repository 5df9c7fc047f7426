#include "propagation/propagate.h"

#include "layers.h"
#include "propagation/debug_info.h"
#include "propagation/trace.h"
#include "rules/registry.h"

#include <optional>
#include <string>
#include <vector>

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

bool supportedResults(const Operation &op) {
  for (size_t i = 0; i < op.numResults(); ++i) {
    Type type = op.result(i)->type;
    if ((type->isTensor() &&
         (!type->isRankedTensor() || !type->hasStaticShape())) ||
        type->kind == TypeKind::Tuple)
      return false;
  }
  return true;
}

// One walk of a large module costs about as much as a propagation step of
// every op, so the checks and bookkeeping before propagation share one:
// numbers the ops of func bodies into `index`, collects the
// sdy.sharding_group ops, and returns whether every op result is supported.
bool scanModule(Module &module, prop::OpIndex &index,
                std::vector<Operation *> &group_ops) {
  bool supported = true;
  index.clear();
  for (Operation &top : module.body()) {
    supported = supported && supportedResults(top);
    bool in_func = top.is("func.func");
    walk(top, [&](Operation &op) {
      if (in_func)
        index.add(op, module.ctx());
      if (op.is("sdy.sharding_group"))
        group_ops.push_back(&op);
      supported = supported && supportedResults(op);
    });
  }
  return supported;
}

void removeShardingRules(Module &module, const prop::OpIndex &index) {
  auto remove = [](Operation &op) {
    const Attr *rule = op.attrs.get(kShardingRuleAttr);
    if (rule && rule->kind == AttrKind::OpShardingRule &&
        !rule->rule().is_custom)
      op.attrs.erase(kShardingRuleAttr);
  };
  for (Operation *op : index.order)
    remove(*op);
  // Ops outside func bodies (rare) are not indexed.
  for (Operation &top : module.body())
    if (!top.is("func.func")) {
      remove(top);
      walk(top, remove);
    }
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
  prop::OpIndex index;
  std::vector<Operation *> group_ops;
  if (!scanModule(module, index, group_ops)) {
    validShapes(module, diags); // the error, on the op Shardy names
    return false;
  }
  prop::ShardingGroups groups =
      prop::buildShardingGroups(module, diags, &group_ops);
  if (groups.inserted_ops)
    index.build(module);
  prop::LayerContext lc;
  lc.observer = session ? &session->observer() : nullptr;
  lc.index = &index;
  prop::NoChangeCache no_change(index.order.size());
  lc.no_change = &no_change;
  prop::StepMemo steps;
  lc.steps = options.memoize_steps ? &steps : nullptr;
  RuleCache rules;
  lc.rules = &rules;
  lc.strategies = options.strategies;
  lc.conservative = options.conservative;
  lc.run_op_priority = options.run_op_priority;
  lc.groups = &groups;
  lc.warnings = &diags;
  prop::OpDirectionFn any = [](Operation &, std::span<PropagationDirection>) {};
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
    removeShardingRules(module, index);
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
