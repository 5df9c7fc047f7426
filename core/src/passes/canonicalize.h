// MLIR's -canonicalize for the ops shardlab models: a greedy, top-down
// worklist driver with trivial dead-code elimination, and the sdy
// canonicalization patterns (reshard folding and CSE, collective
// simplification and fusion, manual-computation cleanup). Pipelines run it
// restricted to one pattern label, as Shardy's export pipeline does.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/passes/pass_registry.h"

#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

namespace shardlab {

/// Which patterns run: Shardy labels some patterns "sdy-reshard" and
/// "sdy-collective"; the rest carry no label.
enum PatternLabel : unsigned {
  kLabelReshard = 1,
  kLabelCollective = 2,
  kLabelUnlabelled = 4,
  kLabelAll = 7,
};

/// What a pattern uses to change the IR, so that the driver revisits the
/// ops touched (as MLIR's PatternRewriter notifies its listener).
class Rewriter {
public:
  explicit Rewriter(Module &module) : module_(module) {}
  Module &module() { return module_; }
  Context &ctx() { return module_.ctx(); }

  /// Inserts `op` before `before` and queues it.
  Operation *insertBefore(Operation &before, std::unique_ptr<Operation> op);
  /// Redirects the uses of `from` to `to`, queueing the users.
  void replaceAllUses(Value *from, Value *to);
  /// Replaces op's results by `values` and erases it.
  void replaceOp(Operation &op, const std::vector<Value *> &values);
  /// Erases `op` (no uses left), queueing its operands' definitions.
  void eraseOp(Operation &op);
  /// Queues `op` again (it was modified in place).
  void notifyModified(Operation &op) { push(&op); }

  void push(Operation *op);
  /// Queues the ops nested in `root` in pre-order (the first pops first,
  /// after any op queued later by push). Uses their scratch_index.
  void queuePreOrder(Operation &root);
  /// The next queued op: the last one pushed, else the next of the
  /// pre-order queue; null when none is left.
  Operation *pop();

private:
  void forget(Operation &op);
  /// Whether `op` waits in the pre-order queue (not popped, not erased).
  bool inInitial(const Operation *op) const {
    uint32_t i = op->scratch_index;
    return i >= next_ && i < initial_.size() && initial_[i] == op;
  }
  Module &module_;
  // A stack whose bottom part is the pre-order queue, kept apart so that
  // queueing the whole module costs no hashing: `initial_` (entries before
  // `next_` popped, null once erased; each op's scratch_index is its
  // position) and, above it, the ops pushed since (`pushed_`, members in
  // `queued_`). Popping order is that of one stack with a set of queued ops.
  std::vector<Operation *> initial_;
  size_t next_ = 0;
  std::vector<Operation *> pushed_;
  std::unordered_set<Operation *> queued_;
};

/// A set of rewrite patterns: tries them on `op`; true when one applied.
using PatternSet = std::function<bool(Operation &op, Rewriter &rw)>;

/// MLIR's applyPatternsGreedily (top-down, no folding) over the ops nested
/// in `root`: an op that is trivially dead is erased, any other is offered
/// to `patterns`, until the worklist is empty.
void applyPatternsGreedily(Module &module, Operation &root,
                           const PatternSet &patterns);

/// Runs the canonicalizer with the patterns of `labels` over `module`.
void runCanonicalizer(Module &module, unsigned labels);

} // namespace shardlab
