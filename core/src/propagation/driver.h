// The fixed-point driver of one propagation run (Shardy's
// BasicPropagationPassImpl::propagate): a LIFO worklist of ops, seeded in
// pre-order, that propagates through every op with a sharding rule, every
// data-flow edge and propagation barrier, and re-enqueues the ops a changed
// sharding affects, keeping sharding groups identical.
#pragma once

#include "propagation/factor_propagation.h"
#include "rules/registry.h"
#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "trace_recorder.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

namespace shardlab::prop {

/// Narrows the direction along each factor of `op` as a layer decides it:
/// `directions[f]` comes in as what the layers below allow (Both at the
/// bottom) and leaves as its intersection with what this layer allows. One
/// call per op visit, not per factor: most of a layer's answer depends on
/// the op alone.
using OpDirectionFn = std::function<void(
    Operation &op, std::span<PropagationDirection> directions)>;

/// Values that must carry identical shardings (sdy.sharding_group).
struct ShardingGroups {
  std::unordered_map<Value *, size_t> group_of;
  std::vector<std::vector<Value *>> members;
  /// Building the groups inserted sharding constraints (conflicting
  /// initial shardings).
  bool inserted_ops = false;

  const std::vector<Value *> *groupOf(Value *value) const {
    auto it = group_of.find(value);
    return it == group_of.end() ? nullptr : &members[it->second];
  }
};

/// The ops of the module's functions in pre-order, numbered through
/// Operation::scratch_index (position + 1), and the func.call ops per
/// callee. Propagation neither creates nor erases ops, so one index serves
/// every driver run of a propagation.
struct OpIndex {
  std::vector<Operation *> order;
  std::unordered_map<std::string_view, std::vector<Operation *>> callers;

  /// Numbers the ops of `module` (after anything that adds ops, such as the
  /// sharding-group sync).
  void build(Module &module);
  void clear() {
    order.clear();
    callers.clear();
    elementwise_.clear();
    rules_.clear();
    rule_known_.clear();
  }
  /// Numbers `op` next (build's walk, or a caller's own walk).
  void add(Operation &op, Context &ctx);
  /// The position + 1 of `op`, or 0 when it is not indexed.
  uint32_t indexOf(const Operation *op) const {
    uint32_t i = op->scratch_index;
    return i && i <= order.size() && order[i - 1] == op ? i : 0;
  }
  /// isElementwise(op), computed once per indexed op.
  bool elementwise(const Operation &op) const;
  /// The sharding rule the driver propagates the op numbered `i` with (null:
  /// none, or one that does not fit the op), once `known`. Rules depend on
  /// the op alone and stay attached, so one lookup serves every driver run
  /// (looking the attached rule up reads the op's attributes, a cache miss
  /// per op at 100k ops).
  const OpShardingRule *cachedRule(uint32_t i, bool &known) const {
    known = i < rule_known_.size() && rule_known_[i];
    return known ? rules_[i] : nullptr;
  }
  void cacheRule(uint32_t i, const OpShardingRule *rule) const;

private:
  /// Per number: 0 not computed yet, 1 not elementwise, 2 elementwise.
  mutable std::vector<uint8_t> elementwise_;
  mutable std::vector<const OpShardingRule *> rules_;
  mutable std::vector<uint8_t> rule_known_;
};

/// Ops whose last propagation changed nothing, with what that propagation
/// read: the addresses of the shardings of its tensors (attributes are
/// immutable, uniqued and never freed during propagation, so an address
/// stands for a value), the directions of its factors and the strategy.
/// Propagating through an op is a pure function of these (and of its rule,
/// mesh and the run's options), so an op that would read the same again can
/// be skipped: it would change nothing again. Shared by all driver runs of
/// one propagation; entries are per OpIndex number.
class NoChangeCache {
public:
  static constexpr size_t kMaxKey = 10;
  struct Key {
    uintptr_t words[kMaxKey];
    uint8_t size = 0; ///< 0: no entry
    bool operator==(const Key &other) const {
      return size == other.size && std::equal(words, words + size, other.words);
    }
  };
  explicit NoChangeCache(size_t ops) : entries_(ops + 1) {}
  bool unchanged(uint32_t index, const Key &key) const {
    return index && index < entries_.size() && entries_[index].size &&
           entries_[index] == key;
  }
  void remember(uint32_t index, const Key &key) {
    if (index && index < entries_.size())
      entries_[index] = key;
  }
  void forget(uint32_t index) {
    if (index && index < entries_.size())
      entries_[index].size = 0;
  }

private:
  std::vector<Key> entries_;
};

/// Outcomes of propagation steps through ops with a sharding rule, shared by
/// every driver run of one propagation. A step's outcome (the new sharding
/// of each of its tensors) is a pure function of what NoChangeCache keys on,
/// of the rule (rules are shared by equal ops, so its address stands for it),
/// of the run's conservative option and of whether the op is elementwise:
/// the meshes cannot change during propagation and the mesh a step uses is
/// named by its shardings. Modules repeat layers, so most steps have been
/// taken before by an equal op; the driver then applies the remembered
/// shardings instead of projecting, propagating and unprojecting again.
///
///   layer 3's dot_general reads (s0, s1 | null) with rule R -> (-, -, s2)
///   layer 7's dot_general reads the same -> sets its result to s2 as well
class StepMemo {
public:
  struct Key {
    NoChangeCache::Key reads;
    const void *rule = nullptr;
    uint8_t flags = 0; ///< bit 0 conservative, bit 1 elementwise
    bool operator==(const Key &other) const {
      return rule == other.rule && flags == other.flags && reads == other.reads;
    }
  };
  /// The new sharding of each tensor (operands, then results; null:
  /// unchanged) of the step with `key`; empty when no such step was taken.
  std::span<const TensorSharding *const> find(const Key &key) const;
  /// Remembers a step's outcome; the shardings must be interned.
  void insert(const Key &key, std::span<const TensorSharding *const> outcome);
  size_t size() const { return entries_.size(); }

private:
  struct Hash {
    size_t operator()(const Key &key) const;
  };
  struct Slice {
    uint32_t offset = 0;
    uint32_t size = 0;
  };
  std::unordered_map<Key, Slice, Hash> entries_;
  std::vector<const TensorSharding *> outcomes_;
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
  /// Shares the rules of equal ops; may be null.
  RuleCache *rules = nullptr;
  /// The numbered ops; null: the driver numbers them itself.
  const OpIndex *index = nullptr;
  /// Outcomes of steps taken before; may be null. Not used while an
  /// observer records steps (it needs each step's projections).
  StepMemo *steps = nullptr;
};

/// Runs propagation to a fixed point over `module`.
void runDriver(Module &module, const DriverConfig &config);

} // namespace shardlab::prop
