// Shardy's propagation debugging attributes, written from a propagation
// trace (see trace.h):
// - `-debug-sharding-origins`: `sdy.sharding_origins` dictionaries
//   (`{a = "self", c = "input: 1"}`) on func arguments and results, sharding
//   constraints, data-flow edges, and as per-result arrays on other ops;
//   `sdy.sharding_origin_name` ("constraint_0", "mc_0") on constraints and
//   manual computations;
// - `-debug-propagation-edge-sharding`: `sdy.propagation_edges`
//   (`#sdy.propagation_edges<[{step-0 = [{"a" = result-0 -> [operand-0]}]}]>`)
//   on ops and func results;
// - `-sdy-sink-data-flow-edges="sink-debug-..."`: the edges' dictionaries
//   gathered onto the data-flow op as `sdy.{block_arg,result}_sharding_origins`
//   and `sdy.{block_arg,result}_propagation_edges`.
// One session per pass run, as Shardy's ShardingDebugMappings and
// SourceShardingHandler.
#pragma once

#include "propagation/trace.h"

#include <functional>
#include <memory>
#include <vector>

namespace shardlab {

namespace prop {
class TraceRecorder;
class StepObserver;
} // namespace prop

class ShardingDebugSession {
public:
  /// Shardy's prepareHandler: seeds the trace from the user shardings of
  /// `module` (constraints, manual computations, then func arguments and
  /// results) and numbers steps after the largest `step-N` already on an op.
  /// With `origins`, names every sharding constraint and manual computation
  /// (`sdy.sharding_origin_name`).
  ShardingDebugSession(Module &module, bool origins, bool edges);
  ~ShardingDebugSession();
  ShardingDebugSession(const ShardingDebugSession &) = delete;
  ShardingDebugSession &operator=(const ShardingDebugSession &) = delete;

  bool origins() const { return origins_; }
  bool edges() const { return edges_; }
  PropagationTrace &trace() { return trace_; }
  /// Where the propagation driver reports its steps.
  prop::StepObserver &observer();

  /// -sdy-apply-sharding-constraints: `apply` sets the sharding of the input
  /// of the sharding constraint `constraint`; the change is recorded as a
  /// step (Shardy runs it as a SourceShardingAction).
  void recordConstraint(Operation &constraint,
                        const std::function<void()> &apply);

  /// Shardy's saveOnModule: writes the attributes of the enabled options.
  void save();

private:
  Module &module_;
  bool origins_ = false;
  bool edges_ = false;
  PropagationTrace trace_;
  std::unique_ptr<prop::TraceRecorder> recorder_;
};

/// The largest `step-N` of the `sdy.propagation_edges` attributes on ops of
/// `module`, or -1.
int64_t maximumPropagationStep(Module &module);

/// Shardy's saveDebugInfoDictsFromDataFlowEdges: puts the debug attributes
/// of the `sdy.data_flow_edge`s of `owners` (block arguments when
/// `block_args`, else results of `op`) on `op`.
void sinkEdgeDebugInfo(Operation &op, const std::vector<Value *> &owners,
                       bool block_args, bool origins, bool edges, Context &ctx);

} // namespace shardlab
