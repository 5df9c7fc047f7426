// The greedy driver of -canonicalize (MLIR's GreedyPatternRewriteDriver in
// its default top-down mode): ops are queued in pre-order and processed
// first to last; an op whose results are unused and that has no side
// effects is erased, otherwise the patterns of its kind are tried. Every op
// a pattern creates, modifies or frees up is queued again, until the
// worklist is empty.
#include "canonicalize_passes.h"
#include "canonicalize_patterns.h"
#include "passes/pass_utils.h"

namespace shardlab {

void Rewriter::push(Operation *op) {
  if (op && !inInitial(op) && queued_.insert(op).second)
    pushed_.push_back(op);
}

void Rewriter::queuePreOrder(Operation &root) {
  walk(root, [&](Operation &op) {
    op.scratch_index = static_cast<uint32_t>(initial_.size());
    initial_.push_back(&op);
  });
}

Operation *Rewriter::pop() {
  while (!pushed_.empty()) {
    Operation *op = pushed_.back();
    pushed_.pop_back();
    if (queued_.erase(op))
      return op;
  }
  while (next_ < initial_.size())
    if (Operation *op = initial_[next_++])
      return op;
  return nullptr;
}

void Rewriter::forget(Operation &op) {
  auto drop = [&](Operation &erased) {
    if (inInitial(&erased))
      initial_[erased.scratch_index] = nullptr;
    else
      queued_.erase(&erased);
  };
  drop(op);
  walk(op, drop);
}

Operation *Rewriter::insertBefore(Operation &before,
                                  std::unique_ptr<Operation> op) {
  Operation *inserted =
      before.parentBlock()->insertBefore(&before, std::move(op));
  push(inserted);
  return inserted;
}

void Rewriter::replaceAllUses(Value *from, Value *to) {
  for (Operation *user : usersOf(from))
    push(user);
  from->replaceAllUsesWith(to);
}

void Rewriter::replaceOp(Operation &op, const std::vector<Value *> &values) {
  for (size_t i = 0; i < op.numResults(); ++i)
    replaceAllUses(op.result(i), values[i]);
  eraseOp(op);
}

void Rewriter::eraseOp(Operation &op) {
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (Value *operand = op.operand(i); operand && operand->defining_op)
      push(operand->defining_op);
  forget(op);
  shardlab::eraseOp(op);
}

namespace {

bool applyPatterns(Operation &op, Rewriter &rw, unsigned labels) {
  if (op.is("sdy.reshard"))
    return canon::applyReshardPatterns(op, rw, labels);
  if (op.is("sdy.manual_computation"))
    return canon::applyManualComputationPatterns(op, rw, labels);
  if (op.dialect() == "sdy")
    return canon::applyCollectivePatterns(op, rw, labels);
  return false;
}

} // namespace

void applyPatternsGreedily(Module &module, Operation &root,
                           const PatternSet &patterns) {
  Rewriter rw(module);
  rw.queuePreOrder(root);
  while (Operation *op = rw.pop()) {
    if (op->parentBlock() == nullptr)
      continue;
    if (isTriviallyDead(*op)) {
      rw.eraseOp(*op);
      continue;
    }
    patterns(*op, rw);
  }
}

void runCanonicalizer(Module &module, unsigned labels) {
  applyPatternsGreedily(module, module.op(),
                        [labels](Operation &op, Rewriter &rw) {
                          return applyPatterns(op, rw, labels);
                        });
}

bool canonicalizePass(Module &module, const PassOptions &, DiagnosticEngine &) {
  runCanonicalizer(module, kLabelAll);
  return true;
}

} // namespace shardlab
