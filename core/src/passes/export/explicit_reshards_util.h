// Helpers of -sdy-insert-explicit-reshards (used by its pass file only):
// the sharding of a value as Shardy reads it there, and findCommonAxes, the
// choice of one axis list per factor that every operand and result of an op
// is then resharded to (Shardy's explicit_reshards_util).
#pragma once

#include "propagation/projection.h"
#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardlab {

using AxesPerFactor = std::vector<std::vector<AxisRef>>;
using OptionalSharding = std::optional<TensorSharding>;

/// Shardy's getSharding: a data-flow block argument reads its edge owner's
/// sharding as seen from inside (a manual computation's without the manual
/// axes).
std::optional<TensorSharding> shardingOf(Value *value);
/// The sharding of `value` seen through sdy.propagation_barrier ops, with a
/// data-flow block argument reading its edge owner's sharding; null when it
/// has none. Points into the attribute (the arena keeps it while the pass
/// changes the IR) or, for a derived edge-owner sharding, into `owned`.
const TensorSharding *
shardingBypassingBarriers(Value *value, std::deque<TensorSharding> &owned);

/// The axes every tensor of the op gets per factor: the factor shardings
/// when all tensors agree, else the larger tensor's axes for two-tensor
/// ops, else Shardy's candidate heuristic (biggest source tensors first).
/// `tensor_sizes` lists operands then results (elements, 0 if dynamic).
AxesPerFactor findCommonAxes(const ShardingProjection &projection,
                             const OpShardingRule &rule,
                             const std::vector<int64_t> &tensor_sizes,
                             const Mesh &mesh);

/// The factor's axes when every tensor that has it agrees (empty when none
/// has it), else nothing (Shardy's getCompatibleFactorSharding).
std::optional<std::vector<AxisRef>>
compatibleFactorAxes(const ShardingProjection &projection, int64_t factor);

/// Shardy's candidate heuristic alone (used by findCommonAxes).
AxesPerFactor
findCommonAxesHeuristic(const std::vector<const TensorFactorShardings *> &rows,
                        const OpShardingRule &rule,
                        const std::vector<int64_t> &tensor_sizes,
                        const Mesh &mesh);

/// Whether some present factor of some row has overflow axes.
bool hasOverflowAxes(const ShardingProjection &projection);
/// A reshape with overflow axes (explicit_reshards_reshape.cpp): deals the
/// more sharded side's axes out again over each side's factors and sets
/// every factor to their greatest common prefix on both sides, which it
/// returns (Shardy's processReshapeWithOverflowAxes).
AxesPerFactor alignReshapeOverflowAxes(ShardingProjection &projection,
                                       const OpShardingRule &rule,
                                       const MeshRef &mesh_ref,
                                       const Mesh &mesh);

/// Cuts `axes` before the first axis overlapping `other`, keeping the
/// non-overlapping major part of that axis; returns whether it changed.
bool truncateWithoutOverlap(std::vector<AxisRef> &axes,
                            const std::vector<AxisRef> &other);

/// Where new ops go: before `before` in `block` (at its end when null).
/// Inserting several ops at one point keeps them in creation order.
struct InsertPoint {
  Block *block = nullptr;
  Operation *before = nullptr;
};
InsertPoint pointBefore(Operation &op);
InsertPoint pointAfter(Operation &op);
/// Right after the definition of `value` (the start of its block for a
/// block argument), Shardy's setInsertionPointAfterValue.
InsertPoint pointAfterValue(Value *value);
Operation *insertAt(const InsertPoint &point, std::unique_ptr<Operation> op);
/// A new `sdy.reshard %input <sharding>` at `point`.
Operation *createReshard(Context &ctx, const InsertPoint &point, Value *input,
                         const TensorSharding &sharding);

/// Unreduced-axis collectives of the pass (explicit_reshards_unreduced.cpp).
/// If `source` has unreduced axes that `user` lacks, all-reduces `use`'s
/// value over them at `point`; returns the sharding `use` then has.
std::optional<TensorSharding> allReduceIfUnreducedToReplicated(
    Module &module, OpOperand &use, const std::optional<TensorSharding> &source,
    const TensorSharding *user, const InsertPoint &point);
/// Replicated/sharded-to-unreduced collectives bringing `use`'s value to the
/// unreduced axes of `target`; the sharding it then has, if any was added.
std::optional<TensorSharding>
insertUnreducedCollectives(Module &module, OpOperand &use,
                           const TensorSharding *target,
                           const InsertPoint &point);
/// An sdy.reshard that only adds unreduced axes becomes those collectives.
bool convertReshardToUnreducedCollectives(Module &module, Operation &op);
/// All-reduces operands whose unreduced axes the op's results lack.
void allReduceOperandsIfUnreducedToReplicated(Module &module, Operation &op);
/// All-reduces every result over `reduction_axes` minus the unreduced axes
/// of the first result.
void allReduceResults(Module &module, Operation &op,
                      std::vector<AxisRef> reduction_axes, const Mesh &mesh,
                      const MeshRef &mesh_ref);

/// Rule-free parts (explicit_reshards_edges.cpp). Brings `use` to
/// `target`: unreduced collectives, then (with `full`) a reshard unless the
/// shardings are equivalent (Shardy's insertExplicitReshardsToTargetSharding).
void reshardToTarget(Module &module, OpOperand &use,
                     const TensorSharding *target, const InsertPoint &point,
                     bool full);
/// Every source of every data-flow edge of `op` to its owner's sharding.
void reshardDataFlowSources(Module &module, Operation &op, bool full);
/// Call operands to the callee's argument shardings.
void reshardCallOperands(Module &module, Operation &call, bool full);
/// The func's return operands to its result shardings.
void reshardFuncResults(Module &module, Operation &func, bool full);

/// Single-device ops (explicit_reshards_single_device.cpp).
bool isSingleDeviceSharding(const Module &module,
                            const TensorSharding &sharding);
/// Reshards operands to the device and results back; false (with an
/// error) when results name different devices.
bool processSingleDeviceOp(Module &module, Operation &op,
                           const std::vector<const TensorSharding *> &out,
                           DiagnosticEngine &diags);
/// Func arguments and results must not be on a maximal mesh.
bool verifyNoSingleDeviceFuncShardings(Module &module, Operation &func,
                                       DiagnosticEngine &diags);

} // namespace shardlab
