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
  /// Makes room for `count` queued ops (the initial whole-module queue),
  /// so queueing does not rehash as it grows.
  void reserve(size_t count) {
    worklist_.reserve(count);
    queued_.reserve(count);
  }
  Operation *pop();
  bool empty() const { return worklist_.empty(); }

private:
  void forget(Operation &op);
  Module &module_;
  std::vector<Operation *> worklist_;
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

/// The `-canonicalize` pass.
bool canonicalizePass(Module &module, const PassOptions &options,
                      DiagnosticEngine &diags);

} // namespace shardlab
