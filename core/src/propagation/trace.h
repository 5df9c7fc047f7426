// Explainability of sharding propagation: a trace of the decisions
// propagation made, in the order it made them, and the views built on it.
//
// A trace has two parts:
// - seeds: the axes users wrote (func arguments and results, sharding
//   constraints, manual computations), each with the user sharding it
//   belongs to (Shardy's OriginSharding: "input: 0", "constraint_1",
//   "mc_0_output: 2", ...);
// - steps: one per propagation through an op that changed a sharding
//   (Shardy's SourceShardingAction), numbered as Shardy numbers them
//   (`step-N`), with the layer position (user-priority round, op-priority
//   level, strategy) and, per new axis, the tensor that received it, the
//   tensor it came from and the factor of the op's sharding rule.
//
// Views derived from the same records:
// - shardingOrigins: Shardy's `-debug-sharding-origins` view (which user
//   sharding each axis of each value comes from);
// - propagationEdges: Shardy's `-debug-propagation-edge-sharding` view;
// - explainShardings: per value (and func result), every axis with the step,
//   op, factor and layer position that produced it, and its origin;
// - traceToJson: all of the above as JSON for the playground.
#pragma once

#include "propagation/factor_propagation.h"
#include "propagation/propagate.h"
#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlab {

/// An operand or a result of the op of a step (Shardy's EdgeNode).
enum class EdgeNodeType { Operand, Result };
struct EdgeNode {
  EdgeNodeType type = EdgeNodeType::Operand;
  int64_t index = 0;
  bool operator==(const EdgeNode &) const = default;
};
/// `operand-0` / `result-1`, as Shardy prints an edge value ref.
std::string edgeNodeName(const EdgeNode &node);

/// What a step propagated through.
enum class StepKind {
  Op,                 ///< an op with a sharding rule
  DataFlowEdge,       ///< sdy.data_flow_edge: its sources -> the edge
  FuncDataFlowEdge,   ///< sdy.func_data_flow_edge
  PropagationBarrier, ///< sdy.propagation_barrier
  FuncResult,         ///< a value returned by the main func <-> its result
  ShardingConstraint, ///< -sdy-apply-sharding-constraints set an input
};
/// "op", "data_flow_edge", "func_data_flow_edge", "propagation_barrier",
/// "func_result", "sharding_constraint".
std::string stepKindName(StepKind kind);
/// "basic" / "aggressive".
std::string strategyName(FactorStrategy strategy);

/// Where the propagation layers were when a step happened.
struct LayerPosition {
  /// User-priority round: 0 for the first run (priority 0 and unannotated
  /// dims), then the priority p being restored; -1 outside that layer.
  int64_t user_priority = -1;
  /// Op-priority level 0..4; -1 when op priorities are not run.
  int op_priority_level = -1;
  /// The factor propagation strategy of the driver run.
  FactorStrategy strategy = FactorStrategy::Basic;
  bool operator==(const LayerPosition &) const = default;
};

/// Something that holds a sharding: a value (the one Shardy keeps the
/// sharding on, i.e. the sdy.data_flow_edge of an edge target), or result
/// `result` of the func.func `func`.
struct ShardingSlot {
  Value *value = nullptr;
  Operation *func = nullptr;
  int64_t result = -1;
  bool isFuncResult() const { return func != nullptr; }
  bool operator==(const ShardingSlot &) const = default;
};

/// One axis that appeared on a tensor of a step's op.
struct AxisDecision {
  EdgeNode target;     ///< the tensor that received the axis
  EdgeNode source;     ///< the tensor that already had it
  int64_t factor = -1; ///< factor of the op's sharding rule
  /// The axis. Sub-axes that complete each other within one dimension are
  /// reported merged (Shardy's createSourceMap).
  AxisRef axis;
};

/// A sharding-group member that received the new sharding of `from`.
struct GroupCopy {
  ShardingSlot from;
  ShardingSlot to;
  std::vector<AxisRef> axes; ///< the dimension axes of the copied sharding
};

/// One propagation through one op that changed at least one sharding.
struct TraceStep {
  int64_t index = 0; ///< Shardy's `step-N`
  StepKind kind = StepKind::Op;
  Operation *op = nullptr; ///< the op (the func.func for FuncResult)
  LayerPosition position;
  /// The step's tensors as the op's rule numbers them.
  std::vector<ShardingSlot> operands;
  std::vector<ShardingSlot> results;
  std::vector<AxisDecision> decisions; ///< in Shardy's order
  std::vector<GroupCopy> group_copies;

  const ShardingSlot &slot(const EdgeNode &node) const {
    return node.type == EdgeNodeType::Operand ? operands[node.index]
                                              : results[node.index];
  }
};

/// The kind of user sharding an axis comes from (Shardy's
/// OriginShardingType).
enum class OriginKind { Input, Constraint, Output, ManualInput, ManualOutput };
struct Origin {
  OriginKind kind = OriginKind::Input;
  int64_t index = 0;     ///< argument / result / operand number
  int64_t source_id = 0; ///< n of constraint_n / mc_n
  bool operator==(const Origin &) const = default;
};
/// "input: 0", "output: 1", "constraint_2", "mc_0_input: 1",
/// "mc_0_output: 0".
std::string originName(const Origin &origin);

/// An axis a user wrote, before propagation.
struct TraceSeed {
  ShardingSlot slot;
  AxisRef axis;
  Origin origin;
  /// User priority of the dimension holding the axis (0 when none): the
  /// user-priority layer makes the axis available in that round.
  int64_t priority = 0;
};

/// Everything one propagation run (or one -sdy-apply-sharding-constraints
/// run) decided.
struct PropagationTrace {
  std::vector<TraceSeed> seeds; ///< in Shardy's seeding order
  std::vector<TraceStep> steps; ///< in decision order
};

// ---- Running propagation with a trace

/// propagateShardings, recording the trace of the run in `trace`.
bool propagateShardingsWithTrace(Module &module,
                                 const PropagationOptions &options,
                                 DiagnosticEngine &diags,
                                 PropagationTrace &trace);

// ---- Views

/// The value standing for a slot in Shardy's debug maps: the slot's value,
/// or for a func result the value the func returns there (nullptr if none).
Value *debugValue(const ShardingSlot &slot);

/// One value's axes and the user shardings they come from, in the order
/// Shardy's map inserts them.
struct ValueOrigins {
  Value *value = nullptr;
  std::vector<std::pair<AxisRef, Origin>> axes;
};
/// Shardy's sharding-origins map after replaying the seeds and every step
/// (values in order of first appearance).
std::vector<ValueOrigins> shardingOrigins(const PropagationTrace &trace);

/// Shardy's PropagationEdge: an axis moved from `source` to `target` of an
/// op in step `step`.
struct PropagationEdge {
  EdgeNode source;
  EdgeNode target;
  int64_t step = 0;
};
/// The edges recorded for one op or one func result, per axis.
struct AxisEdges {
  AxisRef axis;
  std::vector<PropagationEdge> edges;
};
struct OpEdges {
  Operation *op = nullptr;     ///< the op (or func.func)
  int64_t func_result = -1;    ///< >= 0: the edges of that func result
  std::vector<AxisEdges> axes; ///< axes in order of first appearance
};
/// Shardy's propagation-edges maps: per op, and per func result (Shardy
/// files every func-result step under result 0).
std::vector<OpEdges> propagationEdges(const PropagationTrace &trace);
/// `#sdy.propagation_edges<[{step-0 = [{"a" = result-0 -> [operand-0]}]}]>`
/// for one op's edges ("" when there are none).
std::string propagationEdgesText(const std::vector<AxisEdges> &axes);

/// How one axis of a slot's sharding came to be there.
struct AxisExplanation {
  AxisRef axis;
  /// The step that added it; nullptr when the user wrote it (a seed) or a
  /// sharding group copied it (`group_copy`).
  const TraceStep *step = nullptr;
  const AxisDecision *decision = nullptr;
  const GroupCopy *group_copy = nullptr;
  const TraceStep *group_step = nullptr; ///< the step of `group_copy`
  /// The user sharding it traces back to, when known.
  std::optional<Origin> origin;
  int64_t priority = 0; ///< seeds: the user priority of the dimension
};
struct SlotExplanation {
  ShardingSlot slot;
  std::vector<AxisExplanation> axes; ///< in decision order
};
/// For every slot that was seeded or changed: its axes, in the order they
/// appeared, each with the step, op, factor, layer position (through
/// `step`) and user sharding behind it.
std::vector<SlotExplanation> explainShardings(const PropagationTrace &trace);

/// The trace and its views as JSON (values named as the printer names
/// them). Shape: {"seeds": [...], "steps": [...], "values": [...]};
/// see docs in trace_json.cpp.
nlohmann::json traceToJson(const PropagationTrace &trace, Module &module);

} // namespace shardlab
