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

/// What one driver run needs besides the module.
struct DriverConfig {
  FactorStrategy strategy = FactorStrategy::Aggressive;
  bool conservative = false;
  OpDirectionFn direction;
  const ShardingGroups *groups = nullptr;
  DiagnosticEngine *warnings = nullptr;
  /// Receives every step that changed a sharding (tracing); may be null.
  StepObserver *observer = nullptr;
};

/// Runs propagation to a fixed point over `module`.
void runDriver(Module &module, const DriverConfig &config);

/// The main function: `@main`, else the only func.func; null otherwise.
Operation *mainFunc(Module &module);
/// Whether `op` is elementwise in Shardy's sense (aggressive tie-breaks and
/// op-priority level 0).
bool isElementwise(const Operation &op);

} // namespace shardlab::prop
