// Internal: how the propagation driver reports its steps to a trace
// (Shardy's SourceShardingAction and SourceShardingHandler).
#pragma once

#include "propagation/projection.h"
#include "propagation/trace.h"

#include <vector>

namespace shardlab::prop {

/// One propagation through one op, as the driver saw it.
struct StepEvent {
  StepKind kind = StepKind::Op;
  Operation *op = nullptr;
  int64_t func_result = -1; ///< FuncResult: the func result index
  /// The step's tensors (not yet mapped to their shardable values).
  const std::vector<Value *> *operands = nullptr;
  const std::vector<Value *> *results = nullptr;
  const OpShardingRule *rule = nullptr;
  const Mesh *mesh = nullptr;
  const ShardingProjection *before = nullptr; ///< before factor propagation
  const ShardingProjection *after = nullptr;  ///< after it
};

/// Receives the driver's steps. `position` is kept up to date by the
/// propagation layers.
class StepObserver {
public:
  virtual ~StepObserver() = default;
  /// Called after a step that updated at least one sharding.
  virtual void onStep(const StepEvent &event) = 0;
  /// Called when a sharding-group member receives the sharding of `from`
  /// (before onStep of the step that updated `from`).
  virtual void onGroupCopy(Value *from, Value *to,
                           const TensorSharding &sharding) = 0;

  LayerPosition position;
};

/// The new axes of a step, as Shardy's createSourceMap finds them: for every
/// factor whose axes changed in a tensor, the first operand (then result)
/// that already had the new axes is the source.
std::vector<AxisDecision> diffProjections(const ShardingProjection &before,
                                          const ShardingProjection &after,
                                          const OpShardingRule &rule,
                                          const Mesh &mesh);

/// Records steps into a PropagationTrace, numbering them from `next_step`.
class TraceRecorder : public StepObserver {
public:
  TraceRecorder(PropagationTrace &trace, int64_t next_step)
      : trace_(trace), next_step_(next_step) {}

  void onStep(const StepEvent &event) override;
  void onGroupCopy(Value *from, Value *to,
                   const TensorSharding &sharding) override;
  int64_t nextStep() const { return next_step_; }

private:
  PropagationTrace &trace_;
  int64_t next_step_;
  std::vector<GroupCopy> pending_copies_;
};

} // namespace shardlab::prop
