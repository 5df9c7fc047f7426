// Internal interface between the propagation layers (see propagate.h).
#pragma once

#include "driver.h"

#include <vector>

namespace shardlab::prop {

/// What every layer passes down unchanged.
struct LayerContext {
  std::vector<FactorStrategy> strategies;
  bool conservative = false;
  bool run_op_priority = true;
  const ShardingGroups *groups = nullptr;
  DiagnosticEngine *warnings = nullptr;
  /// Receives the steps and the layer position (tracing); may be null.
  StepObserver *observer = nullptr;
  /// Shared by every driver run of the propagation; may be null.
  NoChangeCache *no_change = nullptr;
  StepMemo *steps = nullptr;
  RuleCache *rules = nullptr;
  const OpIndex *index = nullptr;
};

/// The aggressive layer: one driver run per strategy.
void runStrategies(Module &module, const LayerContext &lc,
                   const OpDirectionFn &direction);
/// The op-priority layer: runStrategies once per level 0..4.
void runOpPriority(Module &module, const LayerContext &lc,
                   const OpDirectionFn &outer);
/// The user-priority layer: runOpPriority once, then once per priority.
void runUserPriority(Module &module, const LayerContext &lc,
                     const OpDirectionFn &outer);

/// Builds the sharding groups of `module` and makes the members' initial
/// shardings identical (warning on a conflict). `group_ops`: the module's
/// sdy.sharding_group ops in walk order, when the caller already has them.
ShardingGroups
buildShardingGroups(Module &module, DiagnosticEngine &diags,
                    const std::vector<Operation *> *group_ops = nullptr);

} // namespace shardlab::prop
