// The fixed-point driver of one propagation run (Shardy's
// BasicPropagationPassImpl::propagate): a LIFO worklist of ops, seeded in
// pre-order, that propagates through every op with a sharding rule, every
// data-flow edge and propagation barrier, and re-enqueues the ops a changed
// sharding affects, keeping sharding groups identical.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/propagation/factor_propagation.h"
#include "shardlab/text/diagnostics.h"
#include "trace_recorder.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace shardlab::prop {

/// Direction along a factor of an op, as a layer decides it.
using OpDirectionFn =
    std::function<PropagationDirection(Operation &op, int64_t factor)>;

/// Values that must carry identical shardings (sdy.sharding_group).
struct ShardingGroups {
  std::unordered_map<Value *, size_t> group_of;
  std::vector<std::vector<Value *>> members;

  const std::vector<Value *> *groupOf(Value *value) const {
    auto it = group_of.find(value);
    return it == group_of.end() ? nullptr : &members[it->second];
  }
};

/// Ops whose last propagation changed nothing, with what that propagation
/// read: the addresses of the shardings of its tensors (attributes are
/// immutable and never freed during propagation, so an address stands for
/// a value), the directions of its factors and the strategy. Propagating
/// through an op is a pure function of these (and of its rule, mesh and the
/// run's options), so an op that would read the same again can be skipped:
/// it would change nothing again. Shared by all driver runs of one
/// propagation.
class NoChangeCache {
public:
  static constexpr size_t kMaxKey = 10;
  struct Key {
    uintptr_t words[kMaxKey];
    uint8_t size = 0;
    bool operator==(const Key &other) const {
      return size == other.size && std::equal(words, words + size, other.words);
    }
  };
  bool unchanged(const Operation *op, const Key &key) const {
    auto it = entries_.find(op);
    return it != entries_.end() && it->second == key;
  }
  void remember(const Operation *op, const Key &key) { entries_[op] = key; }
  void forget(const Operation *op) { entries_.erase(op); }

private:
  std::unordered_map<const Operation *, Key> entries_;
};

/// What one driver run needs besides the module.
struct DriverConfig {
  FactorStrategy strategy = FactorStrategy::Aggressive;
  bool conservative = false;
  OpDirectionFn direction;
  const ShardingGroups *groups = nullptr;
  DiagnosticEngine *warnings = nullptr;
  /// Receives every step that changed a sharding (tracing); may be null.
  StepObserver *observer = nullptr;
  /// Skips ops that would read what they read when they last changed
  /// nothing; may be null.
  NoChangeCache *no_change = nullptr;
};

/// Runs propagation to a fixed point over `module`.
void runDriver(Module &module, const DriverConfig &config);

/// The main function: `@main`, else the only func.func; null otherwise.
Operation *mainFunc(Module &module);
/// Whether `op` is elementwise in Shardy's sense (aggressive tie-breaks and
/// op-priority level 0).
bool isElementwise(const Operation &op);

} // namespace shardlab::prop
