// Conflict-removal steps shared by basic and aggressive factor propagation
// (Shardy's compatiblePrefixNoConflicts* and truncateAxesByRemovingConflicts).
#pragma once

#include "shardlab/propagation/factor_propagation.h"

#include <functional>
#include <optional>

namespace shardlab::detail {

/// `axis` without the parts overlapping any axis of `list`, or nullopt.
std::optional<AxisRef> prefixWithoutOverlap(AxisRef axis,
                                            const std::vector<AxisRef> &list);
/// The prefix of `axis` overlapping no other factor's axes or overflow axes.
std::optional<AxisRef>
noConflictsAcrossFactors(const AxisRef &axis, const TensorFactorShardings &row,
                         int64_t factor);
/// The prefix of `axis` that factor `f` of `row` can hold (replicated and
/// unreduced axes, closedness, overflow, divisibility).
std::optional<AxisRef>
noConflictsWithinFactor(const AxisRef &axis, const TensorFactorShardings &row,
                        const FactorSharding &f, int64_t prev_sharded,
                        int64_t factor_size, const Mesh *mesh);

using RemoveConflictsFn = std::function<std::optional<AxisRef>(
    const AxisRef &axis, int64_t prev_sharded_size)>;
/// Cuts `axes` at the first axis `remove` rejects or shortens.
void truncateByConflicts(std::vector<AxisRef> &axes,
                         const RemoveConflictsFn &remove, const Mesh *mesh,
                         bool conservative);

TensorUpdates propagateBasic(ShardingProjection &projection,
                             const FactorPropagationInput &in);
TensorUpdates propagateAggressive(ShardingProjection &projection,
                                  const FactorPropagationInput &in);

} // namespace shardlab::detail
