// The propagation layers above the driver: strategies (aggressive layer),
// the five op-priority levels, and user priorities.
#include "layers.h"

#include "driver.h"
#include "edges.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/rules/registry.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <array>
#include <map>

namespace shardlab::prop {

void runStrategies(Module &module, const LayerContext &lc,
                   const OpDirectionFn &direction) {
  for (FactorStrategy strategy : lc.strategies) {
    if (lc.observer)
      lc.observer->position.strategy = strategy;
    DriverConfig config{strategy,  lc.conservative, direction,
                        lc.groups, lc.warnings,     lc.observer};
    runDriver(module, config);
  }
}

namespace {

bool isScalar(const Value *value) {
  return !value->type->isRankedTensor() || value->type->rank() == 0;
}

PropagationDirection directionFromUses(const Operation &op,
                                       bool allow_multi_use) {
  if (allow_multi_use)
    return PropagationDirection::Both;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const Value *v = op.operand(i);
    if (!v->hasOneUse() && !isScalar(v))
      return PropagationDirection::None;
  }
  return PropagationDirection::Both;
}

bool isOffloadCall(const Operation &op) {
  if (!op.is("stablehlo.custom_call"))
    return false;
  const Attr *target = op.attrs.get("call_target_name");
  return target &&
         (target->str() == "MoveToDevice" || target->str() == "MoveToHost");
}

PropagationDirection passThrough(Operation &op, bool allow_multi_use) {
  if (isElementwise(op) || isOffloadCall(op) || op.is("stablehlo.reshape") ||
      op.is("stablehlo.transpose") || op.is("sdy.data_flow_edge") ||
      op.is("sdy.func_data_flow_edge"))
    return directionFromUses(op, allow_multi_use);
  if (op.is("stablehlo.dynamic_slice") ||
      op.is("stablehlo.dynamic_update_slice"))
    return intersectionOfDirections(directionFromUses(op, allow_multi_use),
                                    PropagationDirection::Forward);
  return PropagationDirection::None;
}

bool contains(const std::vector<int64_t> &list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

PropagationDirection onlyPassThroughFactors(Operation &op, int64_t factor) {
  const Attr *attr = op.attrs.get(kShardingRuleAttr);
  if (attr && attr->kind == AttrKind::OpShardingRule) {
    const OpShardingRule &rule = attr->rule();
    if (contains(rule.reduction, factor) ||
        contains(rule.need_replication, factor) ||
        contains(rule.permutation, factor))
      return PropagationDirection::None;
  }
  return op.is("stablehlo.broadcast_in_dim") ? PropagationDirection::Backward
                                             : PropagationDirection::Both;
}

PropagationDirection levelDirection(int level, Operation &op, int64_t factor) {
  switch (level) {
  case 0:
    return passThrough(op, false);
  case 1:
    return passThrough(op, true);
  case 2:
    return onlyPassThroughFactors(op, factor);
  case 3:
    return op.is("stablehlo.broadcast_in_dim") ? PropagationDirection::Backward
                                               : PropagationDirection::Both;
  default:
    return PropagationDirection::Both;
  }
}

} // namespace

void runOpPriority(Module &module, const LayerContext &lc,
                   const OpDirectionFn &outer) {
  if (!lc.run_op_priority) {
    if (lc.observer)
      lc.observer->position.op_priority_level = -1;
    runStrategies(module, lc, outer);
    return;
  }
  for (int level = 0; level < 5; ++level) {
    if (lc.observer)
      lc.observer->position.op_priority_level = level;
    OpDirectionFn dir = [level, &outer](Operation &op, int64_t factor) {
      PropagationDirection acc = PropagationDirection::None;
      for (int l = 0; l <= level; ++l)
        acc = unionOfDirections(acc, levelDirection(l, op, factor));
      return intersectionOfDirections(acc, outer(op, factor));
    };
    runStrategies(module, lc, dir);
  }
}

} // namespace shardlab::prop
