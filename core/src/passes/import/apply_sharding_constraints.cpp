// -sdy-apply-sharding-constraints: a fully closed sharding constraint (or a
// manual computation's in sharding) decides the sharding of its input when
// the input has none and no other constraint wants a different one. When
// the input is a data-flow edge (or one's target) the constraint is moved
// right after it and takes over all its uses instead. A chain of constraints
// on an otherwise unconstrained value also takes over the uses of that value
// that come after the chain.
#include "import_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "propagation/debug_info.h"
#include "sharding/sharding_utils.h"

#include <optional>

namespace shardlab {

namespace {

bool isConstraintLike(const Operation *op) {
  return op->is("sdy.sharding_constraint") || op->is("sdy.manual_computation");
}

const TensorSharding *shardingOf(Value *value) {
  return getSharding(shardableValue(value));
}

bool usedByConstraintWithDifferentSharding(Value *input,
                                           const TensorSharding &sharding) {
  for (OpOperand *use = input->firstUse(); use; use = use->next_use) {
    Operation *user = use->owner;
    if (user->is("sdy.sharding_constraint") && !(opSharding(*user) == sharding))
      return true;
    if (user->is("sdy.manual_computation")) {
      std::vector<TensorSharding> in = shardingList(*user, "in_shardings");
      if (use->index() < in.size() && !(in[use->index()] == sharding))
        return true;
    }
  }
  return false;
}

bool usedByConstraint(Value *input, const Operation *excluded) {
  for (Operation *user : usersOf(input))
    if (user != excluded && isConstraintLike(user))
      return true;
  return false;
}

bool isFullyClosed(const TensorSharding &sharding) {
  for (const DimSharding &dim : sharding.dims)
    if (!dim.closed)
      return false;
  return true;
}

bool shouldApply(Value *input, const TensorSharding &sharding) {
  return shardableValue(input) && !shardingOf(input) &&
         isFullyClosed(sharding) &&
         !usedByConstraintWithDifferentSharding(input, sharding);
}

bool isEdgeOrEdgeTarget(Value *input) {
  if (input->defining_op && input->defining_op->is("sdy.data_flow_edge"))
    return true;
  Value *owner = edgeOwnerFromTarget(input);
  return owner && dataFlowEdgeUser(owner);
}

// Inserts `op` right after the definition of `value` (block start for a
// block argument).
Operation *insertAfterValue(Value *value, std::unique_ptr<Operation> op) {
  Block *block = value->isBlockArgument() ? value->owner_block
                                          : value->defining_op->parentBlock();
  Operation *before = value->isBlockArgument()
                          ? block->front()
                          : value->defining_op->nextInBlock();
  return block->insertBefore(before, std::move(op));
}

// The constraint right after `input`, taking over all other uses of it.
void routeThroughConstraint(Value *input, Operation *constraint) {
  std::vector<OpOperand *> uses;
  for (OpOperand *use = input->firstUse(); use; use = use->next_use)
    if (use->owner != constraint)
      uses.push_back(use);
  for (OpOperand *use : uses)
    use->set(constraint->result(0));
}

// Adds the constraint's unreduced axes to the input's (edge) sharding.
void applyUnreducedAxes(Value *input, const TensorSharding &sharding,
                        Context &ctx) {
  if (sharding.unreduced.empty())
    return;
  Value *target = shardableValue(input);
  const TensorSharding *current = getSharding(target);
  TensorSharding updated =
      current ? *current
              : fullyOpenSharding(sharding.mesh, input->type->shape.size());
  updated.unreduced = sharding.unreduced;
  updated.unreduced_kind = sharding.unreduced_kind;
  setShardableValueSharding(target, updated, ctx);
}

using MakeConstraint = std::function<Operation *()>;

// `debug` (set with the debug options) records the change when `op` is a
// sharding constraint, as Shardy runs it as a SourceShardingAction.
void applyConstraint(Operation &op, Value *input,
                     const TensorSharding &sharding,
                     const MakeConstraint &constraint_after_input, Context &ctx,
                     ShardingDebugSession *debug) {
  if (!shouldApply(input, sharding))
    return;
  if (isEdgeOrEdgeTarget(input)) {
    routeThroughConstraint(input, constraint_after_input());
    applyUnreducedAxes(input, sharding, ctx);
    return;
  }
  auto apply = [&]() {
    setShardableValueSharding(shardableValue(input), sharding, ctx);
  };
  if (debug && op.is("sdy.sharding_constraint"))
    debug->recordConstraint(op, apply);
  else
    apply();
}

Operation *chainTail(Operation &head) {
  Value *input = head.operand(0);
  if ((input->defining_op &&
       input->defining_op->is("sdy.sharding_constraint")) ||
      shardingOf(input) || usedByConstraint(input, &head))
    return nullptr;
  Operation *tail = &head;
  while (tail->result(0)->hasOneUse() &&
         tail->result(0)->firstUse()->owner->is("sdy.sharding_constraint"))
    tail = tail->result(0)->firstUse()->owner;
  if (tail == &head || usedByConstraint(tail->result(0), nullptr))
    return nullptr;
  return tail;
}

void rewireChain(Operation &head) {
  Operation *tail = chainTail(head);
  if (!tail)
    return;
  std::vector<OpOperand *> uses;
  for (OpOperand *use = head.operand(0)->firstUse(); use; use = use->next_use) {
    Operation *user = use->owner;
    if (user != &head && !user->is("func.return") &&
        user->parentBlock() == tail->parentBlock() &&
        isBeforeInBlock(tail, user))
      uses.push_back(use);
  }
  for (OpOperand *use : uses)
    use->set(tail->result(0));
}

void visitConstraint(Operation &op, Context &ctx, ShardingDebugSession *debug) {
  rewireChain(op);
  Value *input = op.operand(0);
  TensorSharding sharding = opSharding(op);
  applyConstraint(
      op, input, sharding,
      [&]() {
        // Moves the constraint right after its input.
        ValueMap map;
        Operation *moved = insertAfterValue(input, cloneOp(op, map));
        op.result(0)->replaceAllUsesWith(moved->result(0));
        eraseOp(op);
        return moved;
      },
      ctx, debug);
}

void visitManualComputation(Operation &op, Context &ctx,
                            ShardingDebugSession *debug) {
  std::vector<TensorSharding> in = shardingList(op, "in_shardings");
  for (size_t i = 0; i < op.numOperands() && i < in.size(); ++i) {
    Value *operand = op.operand(i);
    applyConstraint(
        op, operand, in[i],
        [&]() {
          auto constraint = makeOp(ctx, "sdy.sharding_constraint", {operand},
                                   {operand->type}, op.loc);
          setOpSharding(*constraint, in[i], ctx);
          return insertAfterValue(operand, std::move(constraint));
        },
        ctx, debug);
  }
}

void collectPostOrder(Operation &op, std::vector<Operation *> &out) {
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (auto &block : op.region(r).blocks)
      for (Operation &nested : *block)
        collectPostOrder(nested, out);
  out.push_back(&op);
}

} // namespace

bool applyShardingConstraintsPass(Module &module, const PassOptions &options,
                                  DiagnosticEngine &) {
  // Shardy's debug options: the origins and edges of the shardings this
  // pass sets are saved on the module like propagation's.
  bool origins = options.flag("debug-sharding-origins");
  bool edges = options.flag("debug-propagation-edge-sharding");
  if (!origins && !edges &&
      !mayContain(module,
                  {"sdy.sharding_constraint", "sdy.manual_computation"}))
    return markUnchanged(module);
  std::optional<ShardingDebugSession> debug;
  if (origins || edges)
    debug.emplace(module, origins, edges);
  std::vector<Operation *> ops;
  collectPostOrder(module.op(), ops);
  Context &ctx = module.ctx();
  ShardingDebugSession *session = debug ? &*debug : nullptr;
  for (Operation *op : ops) {
    if (op->is("sdy.sharding_constraint"))
      visitConstraint(*op, ctx, session);
    else if (op->is("sdy.manual_computation"))
      visitManualComputation(*op, ctx, session);
  }
  if (debug)
    debug->save();
  return true;
}

} // namespace shardlab
