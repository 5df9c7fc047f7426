// -sdy-constant-or-scalar-splitter: turns stablehlo.constant into
// sdy.constant, then gives every use of a constant sub-computation
// (constants and iotas, and pure broadcast / reshape / slice / elementwise
// ops over them) and of every scalar broadcast its own copy, so that uses
// can be sharded independently. A func.call (sdy.named_computation) counts
// as constant preserving when every op of its callee (body) is; a copied
// call gets a recursively cloned callee.
#include "import_passes.h"
#include "ir/op_properties.h"
#include "passes/call_graph.h"
#include "passes/pass_utils.h"

#include <algorithm>
#include <set>
#include <unordered_set>

namespace shardlab {

namespace {

// Names of named computations and (original) funcs that hold an op which
// is neither constant preserving nor a terminator.
struct NonConstant {
  std::set<std::string> named_computations;
  std::set<std::string> funcs;
};

// What the split of one func needs: the module (callee lookup, cloning)
// and the non-constant names found so far (callees come first).
struct SplitContext {
  Module &module;
  SymbolInserter symbols;
  NonConstant non_constant;
};

bool isConstantPreserving(Operation &op, SplitContext &context) {
  if (op.is("func.call")) {
    Operation *callee = calleeOf(context.module, op);
    return callee &&
           !context.non_constant.funcs.count(originalFuncName(*callee));
  }
  if (op.is("sdy.named_computation"))
    return !context.non_constant.named_computations.count(
        op.attrs.get("name")->str());
  // The name test first: it is cheaper and rules out most ops.
  return (op.is("stablehlo.broadcast_in_dim") || op.is("stablehlo.reshape") ||
          op.is("stablehlo.slice") || isElementwise(op)) &&
         isSideEffectFree(op);
}

bool isScalar(const Value *value) {
  return value->type->isRankedTensor() && value->type->shape.empty();
}

// The constant sub-computations and scalar broadcasts of one region walk.
struct SplitState {
  std::vector<Operation *> constants; // in discovery order
  std::unordered_set<Operation *> constant_set;
  std::vector<Operation *> expansions;
  std::unordered_set<Operation *> expansion_set;
  // The region's func and enclosing named computation were marked non
  // constant already (both are the same for every op of one region walk).
  bool marked_non_constant = false;
};

// `preserving`: isConstantPreserving(op), computed once by the caller.
bool isConstantExpression(Operation &op, bool preserving,
                          const SplitState &state) {
  if (op.is("sdy.constant") || op.is("stablehlo.iota"))
    return true;
  if (!preserving)
    return false;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Operation *def = op.operand(i)->defining_op;
    if (!def || !state.constant_set.count(def))
      return false;
  }
  return true;
}

// Clones the op defining `result` (after its operands), its sharding group
// users, and for a call its callee (recursively).
void cloneInto(Value *result, ValueMap &map, SplitContext &context) {
  if (isScalar(result) || map.count(result))
    return;
  Operation &op = *result->defining_op;
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (!op.operand(i)->isBlockArgument())
      cloneInto(op.operand(i), map, context);
  Operation *copy = op.parentBlock()->insertBefore(&op, cloneOp(op, map));
  if (copy->is("func.call"))
    if (Operation *callee = calleeOf(context.module, *copy)) {
      Operation *clone = context.symbols.insert(
          cloneFuncRecursively(context.module, *callee, context.symbols));
      setCallee(*copy, symbolName(*clone), context.module.ctx());
    }
  for (Operation *user : usersOf(result))
    if (user->is("sdy.sharding_group"))
      op.parentBlock()->insertBefore(&op, cloneOp(*user, map));
}

Value *cloneSubComputation(Value *result, SplitContext &context) {
  if (isScalar(result))
    return result;
  ValueMap map;
  cloneInto(result, map, context);
  return map[result];
}

bool isTerminator(const Operation &op) {
  return op.nextInBlock() == nullptr && op.parentOp() &&
         (op.name.size() >= 6 &&
          op.name.substr(op.name.size() - 6) == "return");
}

Operation *enclosingNamedComputation(const Operation &op) {
  for (Operation *parent = op.parentOp(); parent; parent = parent->parentOp())
    if (parent->is("sdy.named_computation"))
      return parent;
  return nullptr;
}

void markNonConstant(Operation &op, Operation &func, SplitContext &context) {
  if (Operation *named = enclosingNamedComputation(op))
    context.non_constant.named_computations.insert(
        named->attrs.get("name")->str());
  context.non_constant.funcs.insert(originalFuncName(func));
}

void processOp(Operation &op, Operation &func, SplitState &state,
               SplitContext &context) {
  if (op.is("func.func") || op.is("sdy.sharding_group"))
    return;
  bool preserving = isConstantPreserving(op, context);
  if (isConstantExpression(op, preserving, state)) {
    state.constants.push_back(&op);
    state.constant_set.insert(&op);
    return;
  }
  if (!preserving && !state.marked_non_constant && !isTerminator(op)) {
    markNonConstant(op, func, context);
    state.marked_non_constant = true;
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
      op.setOperand(i, cloneSubComputation(op.operand(i), context));
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

// Pre-order over the ops of `region`, not entering named computations.
void collectOps(Region &region, std::vector<Operation *> &ops) {
  for (auto &block : region.blocks)
    for (Operation &op : *block) {
      ops.push_back(&op);
      if (!op.is("sdy.named_computation"))
        for (size_t r = 0; r < op.numRegions(); ++r)
          collectOps(op.region(r), ops);
    }
}

void splitRegion(Region &region, Operation &func, SplitContext &context) {
  std::vector<Operation *> ops;
  collectOps(region, ops);
  SplitState state;
  for (Operation *op : ops)
    processOp(*op, func, state, context);
  eraseUnused(state);
}

} // namespace

bool constantOrScalarSplitterPass(Module &module, const PassOptions &,
                                  DiagnosticEngine &) {
  convertConstants(module);
  SplitContext context{module, SymbolInserter(module), {}};
  for (Operation *func : funcsInCallOrder(module, /*pre_order=*/false)) {
    for (Operation *op : namedComputationsPostOrder(*func))
      splitRegion(op->region(0), *func, context);
    splitRegion(func->region(0), *func, context);
  }
  return true;
}

} // namespace shardlab
