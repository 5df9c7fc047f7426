// The ops XLA's collective pipeliner moves across loop iterations (see
// collective_pipeliner.h).
#include "shardlab/fusion/collective_pipeliner.h"

#include <string_view>

namespace shardlab::fusion {
namespace {

bool isTerminator(const Operation &op) { return op.is("stablehlo.return"); }

// Ops that only format or store a value: what may follow a sunk
// collective.
bool isFormatting(const Operation &op) {
  for (std::string_view name :
       {"stablehlo.reshape", "stablehlo.convert", "stablehlo.transpose",
        "stablehlo.bitcast_convert", "stablehlo.copy",
        "stablehlo.dynamic_update_slice", "sdy.sharding_constraint"})
    if (op.is(name))
      return true;
  return false;
}

// Body arguments the loop does not change (yielded as they came in) and
// its counters (yielded as argument + a value from outside the body).
std::unordered_set<const Value *> invariantArguments(Block &body) {
  std::unordered_set<const Value *> invariant;
  Operation *yield = body.back();
  if (!yield || !isTerminator(*yield))
    return invariant;
  for (size_t i = 0; i < body.numArguments() && i < yield->numOperands(); ++i) {
    Value *arg = body.argument(i);
    Value *next = yield->operand(i);
    if (next == arg) {
      invariant.insert(arg);
      continue;
    }
    Operation *step = next->defining_op;
    if (step && step->is("stablehlo.add") && step->numOperands() == 2) {
      Value *other = step->operand(0) == arg   ? step->operand(1)
                     : step->operand(1) == arg ? step->operand(0)
                                               : nullptr;
      // The increment: a constant of the body or a value from outside it.
      if (other &&
          (other->defining_op ? other->defining_op->is("stablehlo.constant") ||
                                    other->defining_op->parentBlock() != &body
                              : other->owner_block != &body))
        invariant.insert(arg);
    }
  }
  return invariant;
}

bool definedOutside(const Value *value, const Block &body) {
  return value->defining_op ? value->defining_op->parentBlock() != &body
                            : value->owner_block != &body;
}

void addPrefetched(Block &body, PipelinedOps &out) {
  const std::unordered_set<const Value *> args = invariantArguments(body);
  std::unordered_set<const Operation *> invariant_ops;
  for (Operation &op : body) {
    if (op.numRegions() || isTerminator(op))
      continue;
    bool invariant = true;
    for (size_t i = 0; i < op.numOperands() && invariant; ++i) {
      const Value *v = op.operand(i);
      invariant = args.count(v) || definedOutside(v, body) ||
                  (v->defining_op && invariant_ops.count(v->defining_op));
    }
    if (invariant)
      invariant_ops.insert(&op);
  }
  // An all-gather of loop-invariant data, and what computes its operand.
  for (Operation &op : body) {
    if (!op.is("stablehlo.all_gather") || !invariant_ops.count(&op))
      continue;
    std::vector<const Operation *> stack{&op};
    while (!stack.empty()) {
      const Operation *at = stack.back();
      stack.pop_back();
      if (!invariant_ops.count(at) || !out.prefetched.insert(at).second)
        continue;
      for (size_t i = 0; i < at->numOperands(); ++i)
        if (const Operation *def = at->operand(i)->defining_op)
          stack.push_back(def);
    }
  }
}

// The ops a collective's result flows through, when every one of them is
// formatting and the flow ends in the terminator (a loop output); empty
// otherwise.
std::vector<const Operation *> storedOnly(Operation &collective) {
  std::vector<const Operation *> chain;
  std::vector<Operation *> stack{&collective};
  std::unordered_set<const Operation *> seen{&collective};
  bool reaches_yield = false;
  while (!stack.empty()) {
    Operation *at = stack.back();
    stack.pop_back();
    for (size_t r = 0; r < at->numResults(); ++r)
      for (OpOperand *use = at->result(r)->firstUse(); use;
           use = use->next_use) {
        Operation *user = use->owner;
        if (isTerminator(*user)) {
          reaches_yield = true;
          continue;
        }
        if (!isFormatting(*user) || user->parentBlock() != at->parentBlock())
          return {};
        if (seen.insert(user).second) {
          chain.push_back(user);
          stack.push_back(user);
        }
      }
  }
  return reaches_yield ? chain : std::vector<const Operation *>{};
}

// A collective_permute whose result the body does not read: a send, whose
// reader is another device's next iteration.
bool isUnreadSend(Operation &op) {
  return op.is("stablehlo.collective_permute") && op.numResults() == 1 &&
         !op.result(0)->hasUses();
}

void addSunk(Block &body, PipelinedOps &out) {
  for (Operation &op : body) {
    if (isUnreadSend(op)) {
      out.sunk.insert(&op);
      continue;
    }
    if (!op.is("stablehlo.reduce_scatter") && !op.is("stablehlo.all_reduce"))
      continue;
    const std::vector<const Operation *> chain = storedOnly(op);
    if (chain.empty())
      continue;
    out.sunk.insert(&op);
    out.sunk.insert(chain.begin(), chain.end());
  }
}

} // namespace

PipelinedOps pipelinedOps(Operation &while_op) {
  PipelinedOps out;
  if (!while_op.is("stablehlo.while") || while_op.numRegions() < 2 ||
      while_op.region(1).empty())
    return out;
  Block &body = while_op.region(1).front();
  addPrefetched(body, out);
  addSunk(body, out);
  return out;
}

} // namespace shardlab::fusion
