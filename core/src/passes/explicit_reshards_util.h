// Helpers of -sdy-insert-explicit-reshards (used by its pass file only):
// the sharding of a value as Shardy reads it there, and findCommonAxes, the
// choice of one axis list per factor that every operand and result of an op
// is then resharded to (Shardy's explicit_reshards_util).
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/propagation/projection.h"

#include <optional>
#include <vector>

namespace shardlab {

using AxesPerFactor = std::vector<std::vector<AxisRef>>;

/// The sharding of `value` seen through sdy.propagation_barrier ops, with a
/// data-flow block argument reading its edge owner's sharding.
std::optional<TensorSharding> shardingBypassingBarriers(Value *value);

/// The axes every tensor of the op gets per factor: the factor shardings
/// when all tensors agree, else the larger tensor's axes for two-tensor
/// ops, else Shardy's candidate heuristic (biggest source tensors first).
/// `tensor_sizes` lists operands then results (elements, 0 if dynamic).
AxesPerFactor findCommonAxes(const ShardingProjection &projection,
                             const OpShardingRule &rule,
                             const std::vector<int64_t> &tensor_sizes,
                             const Mesh &mesh);

/// Shardy's candidate heuristic alone (used by findCommonAxes).
AxesPerFactor
findCommonAxesHeuristic(const std::vector<const TensorFactorShardings *> &rows,
                        const OpShardingRule &rule,
                        const std::vector<int64_t> &tensor_sizes,
                        const Mesh &mesh);

/// Cuts `axes` before the first axis overlapping `other`, keeping the
/// non-overlapping major part of that axis; returns whether it changed.
bool truncateWithoutOverlap(std::vector<AxisRef> &axes,
                            const std::vector<AxisRef> &other);

} // namespace shardlab
