// Open sharding constraints on the free variables of while loops (the
// import step XLA's stablehlo and round-trip import pipelines share).
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "xla_passes.h"

#include <algorithm>
#include <map>

namespace shardlab {

namespace {

bool isConstant(const Value *value) {
  const Operation *def =
      value->isBlockArgument() ? nullptr : value->defining_op;
  return def && (def->is("stablehlo.constant") || def->is("sdy.constant"));
}

bool isInside(const Operation *op, const Operation *ancestor) {
  for (const Operation *p = op; p; p = p->parentOp())
    if (p == ancestor)
      return true;
  return false;
}

} // namespace

void openConstraintsOnWhileFreeVariables(Module &module) {
  std::vector<Operation *> loops;
  walk(module.op(), [&](Operation &op) {
    if (op.is("stablehlo.while"))
      loops.push_back(&op);
  });
  Context &ctx = module.ctx();
  for (Operation *loop : loops) {
    std::vector<Value *> free;
    walk(*loop, [&](Operation &inner) {
      for (size_t i = 0; i < inner.numOperands(); ++i) {
        Value *value = inner.operand(i);
        const Operation *owner =
            value->isBlockArgument()
                ? (value->owner_block && value->owner_block->parent
                       ? value->owner_block->parent->parent
                       : nullptr)
                : value->defining_op;
        if (owner && isInside(owner, loop))
          continue;
        if (isConstant(value) || !getSharding(value) ||
            !value->type->isRankedTensor())
          continue;
        if (std::find(free.begin(), free.end(), value) == free.end())
          free.push_back(value);
      }
    });
    for (Value *value : free) {
      auto constraint = makeOp(ctx, "sdy.sharding_constraint", {value},
                               {value->type}, loop->loc);
      setOpSharding(*constraint,
                    fullyOpenSharding(getSharding(value)->mesh,
                                      size_t(value->type->rank())),
                    ctx);
      Operation *inserted =
          loop->parentBlock()->insertBefore(loop, std::move(constraint));
      for (Operation *user : usersOf(value))
        if (user != inserted && isInside(user, loop) && user != loop)
          for (size_t i = 0; i < user->numOperands(); ++i)
            if (user->operand(i) == value)
              user->setOperand(i, inserted->result(0));
    }
  }
}

} // namespace shardlab
