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
#include <memory>

namespace shardlab::prop {

void runStrategies(Module &module, const LayerContext &lc,
                   const OpDirectionFn &direction) {
  for (FactorStrategy strategy : lc.strategies) {
    if (lc.observer)
      lc.observer->position.strategy = strategy;
    DriverConfig config{strategy,     lc.conservative, direction,
                        lc.groups,    lc.warnings,     lc.observer,
                        lc.no_change, lc.rules,        lc.index};
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

PropagationDirection passThrough(Operation &op, bool allow_multi_use) {
  return passThrough(passThroughKind(op, nullptr), op, allow_multi_use);
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

PropagationDirection onlyPassThroughFactors(Operation &op, int64_t factor) {
  const Attr *attr = op.attrs.get(kShardingRuleAttr);
  return onlyPassThroughFactors(
      attr && attr->kind == AttrKind::OpShardingRule ? &attr->rule() : nullptr,
      op.is("stablehlo.broadcast_in_dim"), factor);
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
    // The driver asks for every factor of an op in a row: the levels that do
    // not depend on the factor are computed once per op. Propagation does not
    // change the IR's structure or uses, so an op's entry stays valid.
    struct Memo {
      Operation *op = nullptr;
      PropagationDirection fixed = PropagationDirection::None;
      const OpShardingRule *rule = nullptr; ///< attached rule (level 2)
      bool broadcast = false;
    };
    auto memo = std::make_shared<Memo>();
    const OpIndex *index = lc.index;
    OpDirectionFn dir = [level, &outer, memo, index](Operation &op,
                                                     int64_t factor) {
      if (memo->op != &op) {
        // Levels 0, 1, 3 and 4 do not depend on the factor.
        // From level 1 on, level 1's direction contains level 0's, whose
        // use counts need not be read.
        PassThrough kind = passThroughKind(op, index);
        PropagationDirection acc = passThrough(kind, op, level >= 1);
        for (int l = 3; l <= level; ++l)
          acc = unionOfDirections(acc, levelDirection(l, op, factor));
        memo->op = &op;
        memo->fixed = acc;
        // The driver's rule, when it has one, is the attached rule.
        bool known = false;
        const OpShardingRule *rule =
            index ? index->cachedRule(index->indexOf(&op), known) : nullptr;
        if (!rule) {
          const Attr *attr = op.attrs.get(kShardingRuleAttr);
          rule = attr && attr->kind == AttrKind::OpShardingRule ? &attr->rule()
                                                                : nullptr;
        }
        memo->rule = rule;
        memo->broadcast = op.is("stablehlo.broadcast_in_dim");
      }
      PropagationDirection acc = memo->fixed;
      if (level >= 2)
        acc = unionOfDirections(
            acc, onlyPassThroughFactors(memo->rule, memo->broadcast, factor));
      return intersectionOfDirections(acc, outer(op, factor));
    };
    runStrategies(module, lc, dir);
  }
}

} // namespace shardlab::prop
