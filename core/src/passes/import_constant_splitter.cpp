// -sdy-constant-or-scalar-splitter: turns stablehlo.constant into
// sdy.constant, then gives every use of a constant sub-computation
// (constants and iotas, and pure broadcast / reshape / slice / elementwise
// ops over them) and of every scalar broadcast its own copy, so that uses
// can be sharded independently. Not modelled yet: calls and named
// computations count as non-constant.
#include "shardlab/passes/pass_utils.h"
#include "shardlab/passes/sdy_passes.h"

#include <algorithm>
#include <unordered_set>

namespace shardlab {

namespace {

bool isElementwise(const Operation &op) {
  static const std::unordered_set<std::string_view> kOps = {
      "stablehlo.abs",
      "stablehlo.add",
      "stablehlo.and",
      "stablehlo.atan2",
      "stablehlo.cbrt",
      "stablehlo.ceil",
      "stablehlo.clamp",
      "stablehlo.compare",
      "stablehlo.complex",
      "stablehlo.convert",
      "stablehlo.cosine",
      "stablehlo.divide",
      "stablehlo.exponential",
      "stablehlo.exponential_minus_one",
      "stablehlo.floor",
      "stablehlo.imag",
      "stablehlo.is_finite",
      "stablehlo.log",
      "stablehlo.log_plus_one",
      "stablehlo.logistic",
      "stablehlo.maximum",
      "stablehlo.minimum",
      "stablehlo.multiply",
      "stablehlo.negate",
      "stablehlo.not",
      "stablehlo.or",
      "stablehlo.popcnt",
      "stablehlo.power",
      "stablehlo.real",
      "stablehlo.remainder",
      "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even",
      "stablehlo.rsqrt",
      "stablehlo.select",
      "stablehlo.shift_left",
      "stablehlo.shift_right_arithmetic",
      "stablehlo.shift_right_logical",
      "stablehlo.sign",
      "stablehlo.sine",
      "stablehlo.sqrt",
      "stablehlo.subtract",
      "stablehlo.tan",
      "stablehlo.tanh",
      "stablehlo.xor"};
  return kOps.count(op.name) != 0;
}

bool isConstantPreserving(Operation &op) {
  if (!isSideEffectFree(op))
    return false;
  return op.is("stablehlo.broadcast_in_dim") || op.is("stablehlo.reshape") ||
         op.is("stablehlo.slice") || isElementwise(op);
}

bool isScalar(const Value *value) {
  return value->type->isRankedTensor() && value->type->shape.empty();
}

struct SplitState {
  std::vector<Operation *> constants; // in discovery order
  std::unordered_set<Operation *> constant_set;
  std::vector<Operation *> expansions;
  std::unordered_set<Operation *> expansion_set;
};

bool isConstantExpression(Operation &op, const SplitState &state) {
  if (op.is("sdy.constant") || op.is("stablehlo.iota"))
    return true;
  if (!isConstantPreserving(op))
    return false;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Operation *def = op.operand(i)->defining_op;
    if (!def || !state.constant_set.count(def))
      return false;
  }
  return true;
}

void cloneInto(Value *result, ValueMap &map) {
  if (isScalar(result) || map.count(result))
    return;
  Operation &op = *result->defining_op;
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (!op.operand(i)->isBlockArgument())
      cloneInto(op.operand(i), map);
  op.parentBlock()->insertBefore(&op, cloneOp(op, map));
  for (Operation *user : usersOf(result))
    if (user->is("sdy.sharding_group"))
      op.parentBlock()->insertBefore(&op, cloneOp(*user, map));
}

Value *cloneSubComputation(Value *result) {
  if (isScalar(result))
    return result;
  ValueMap map;
  cloneInto(result, map);
  return map[result];
}

void processOp(Operation &op, SplitState &state) {
  if (op.is("func.func") || op.is("sdy.sharding_group"))
    return;
  if (isConstantExpression(op, state)) {
    state.constants.push_back(&op);
    state.constant_set.insert(&op);
    return;
  }
  if (op.is("stablehlo.broadcast_in_dim") && isScalar(op.operand(0))) {
    state.expansions.push_back(&op);
    state.expansion_set.insert(&op);
    return;
  }
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Operation *def = op.operand(i)->defining_op;
    if (def &&
        (state.constant_set.count(def) || state.expansion_set.count(def)))
      op.setOperand(i, cloneSubComputation(op.operand(i)));
  }
}

bool onlyShardingGroupUsers(Operation &op) {
  for (size_t i = 0; i < op.numResults(); ++i)
    for (Operation *user : usersOf(op.result(i)))
      if (!user->is("sdy.sharding_group"))
        return false;
  return true;
}

void eraseUnused(SplitState &state) {
  std::vector<Operation *> order = state.expansions;
  order.insert(order.end(), state.constants.rbegin(), state.constants.rend());
  for (Operation *op : order) {
    if (!onlyShardingGroupUsers(*op))
      continue;
    for (size_t i = 0; i < op->numResults(); ++i)
      for (Operation *user : usersOf(op->result(i)))
        eraseOp(*user);
    eraseOp(*op);
  }
}

void convertConstants(Module &module) {
  std::vector<Operation *> constants;
  walk(module.op(), [&](Operation &op) {
    if (op.is("stablehlo.constant"))
      constants.push_back(&op);
  });
  for (Operation *op : constants) {
    auto copy = makeOp(module.ctx(), "sdy.constant", {}, {op->result(0)->type},
                       op->loc);
    copy->attrs = op->attrs;
    Operation *created = op->parentBlock()->insertBefore(op, std::move(copy));
    replaceOp(*op, {created->result(0)});
  }
}

} // namespace

bool constantOrScalarSplitterPass(Module &module, const PassOptions &,
                                  DiagnosticEngine &) {
  convertConstants(module);
  forEachFunc(module, [&](Operation &func) {
    SplitState state;
    std::vector<Operation *> ops;
    walk(func, [&](Operation &op) { ops.push_back(&op); });
    for (Operation *op : ops)
      processOp(*op, state);
    eraseUnused(state);
  });
  return true;
}

} // namespace shardlab
