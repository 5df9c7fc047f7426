// The propagation layers above the driver: strategies (aggressive layer),
// the five op-priority levels, and user priorities.
#include "layers.h"
#include "ir/op_properties.h"

#include "driver.h"
#include "edges.h"
#include "rules/registry.h"
#include "shardlab/ir/sharding_access.h"
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
    DriverConfig config{strategy,    lc.conservative, direction,    lc.groups,
                        lc.warnings, lc.observer,     lc.no_change, lc.rules,
                        lc.index,    lc.steps};
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

enum class PassThrough { No, Both, Forward };

PassThrough passThroughKind(const Operation &op, const OpIndex *index) {
  bool elementwise = index ? index->elementwise(op) : isElementwise(op);
  if (elementwise || isOffloadCall(op) || op.is("stablehlo.reshape") ||
      op.is("stablehlo.transpose") || op.is("sdy.data_flow_edge") ||
      op.is("sdy.func_data_flow_edge"))
    return PassThrough::Both;
  if (op.is("stablehlo.dynamic_slice") ||
      op.is("stablehlo.dynamic_update_slice"))
    return PassThrough::Forward;
  return PassThrough::No;
}

PropagationDirection passThrough(PassThrough kind, const Operation &op,
                                 bool allow_multi_use) {
  if (kind == PassThrough::No)
    return PropagationDirection::None;
  PropagationDirection d = directionFromUses(op, allow_multi_use);
  return kind == PassThrough::Forward
             ? intersectionOfDirections(d, PropagationDirection::Forward)
             : d;
}

bool contains(const std::vector<int64_t> &list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Level 2 for an op with attached rule `rule` (null: none, treated as
// identity) that is a broadcast_in_dim or not.
PropagationDirection onlyPassThroughFactors(const OpShardingRule *rule,
                                            bool broadcast, int64_t factor) {
  if (rule && (contains(rule->reduction, factor) ||
               contains(rule->need_replication, factor) ||
               contains(rule->permutation, factor)))
    return PropagationDirection::None;
  return broadcast ? PropagationDirection::Backward
                   : PropagationDirection::Both;
}

// The rule attached to `op` (the driver's rule, when it has one).
const OpShardingRule *attachedRule(Operation &op, const OpIndex *index) {
  bool known = false;
  const OpShardingRule *rule =
      index ? index->cachedRule(index->indexOf(&op), known) : nullptr;
  if (rule)
    return rule;
  const Attr *attr = op.attrs.get(kShardingRuleAttr);
  return attr && attr->kind == AttrKind::OpShardingRule ? &attr->rule()
                                                        : nullptr;
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
  // An op's pass-through kind and whether it is a broadcast depend on the
  // op alone: classified once for all five levels (bit 0: known, bits 1-2:
  // the kind, bit 3: broadcast_in_dim).
  const OpIndex *index = lc.index;
  std::vector<uint8_t> classes(index ? index->order.size() + 1 : 0, 0);
  auto classify = [&classes, index](Operation &op) -> uint8_t {
    uint32_t i = index ? index->indexOf(&op) : 0;
    if (i && classes[i])
      return classes[i];
    uint8_t c = static_cast<uint8_t>(
        1 | (static_cast<uint8_t>(passThroughKind(op, index)) << 1) |
        (op.is("stablehlo.broadcast_in_dim") ? 8 : 0));
    if (i)
      classes[i] = c;
    return c;
  };
  for (int level = 0; level < 5; ++level) {
    if (lc.observer)
      lc.observer->position.op_priority_level = level;
    OpDirectionFn dir = [level, &outer, index, &classify](
                            Operation &op,
                            std::span<PropagationDirection> directions) {
      outer(op, directions);
      // Levels 0, 1, 3 and 4 do not depend on the factor. From level 1 on,
      // level 1's direction contains level 0's, whose use counts need not be
      // read.
      uint8_t c = classify(op);
      auto kind = static_cast<PassThrough>((c >> 1) & 3);
      bool broadcast = (c & 8) != 0;
      PropagationDirection fixed = passThrough(kind, op, level >= 1);
      if (level >= 3)
        fixed =
            unionOfDirections(fixed, broadcast ? PropagationDirection::Backward
                                               : PropagationDirection::Both);
      if (level >= 4)
        fixed = PropagationDirection::Both;
      const OpShardingRule *rule =
          level >= 2 ? attachedRule(op, index) : nullptr;
      for (size_t f = 0; f < directions.size(); ++f) {
        PropagationDirection acc = fixed;
        if (level >= 2)
          acc = unionOfDirections(
              acc,
              onlyPassThroughFactors(rule, broadcast, static_cast<int64_t>(f)));
        directions[f] = intersectionOfDirections(acc, directions[f]);
      }
    };
    runStrategies(module, lc, dir);
  }
}

} // namespace shardlab::prop
