// Conflict-removal steps shared by basic and aggressive factor propagation
// (Shardy's compatiblePrefixNoConflicts* and truncateAxesByRemovingConflicts).
#pragma once

#include "propagation/factor_propagation.h"
#include "shardlab/sharding/axis.h"

#include <functional>
#include <optional>

namespace shardlab {

struct FactorScratch {
  std::vector<std::vector<AxisRef>> axes_per_factor;
  std::vector<AxisRef> axes;
  std::vector<int64_t> order;
  std::vector<int64_t> sharding_size;
  std::vector<std::pair<int64_t, int64_t>> sources; ///< (tensor, size)
};

} // namespace shardlab

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

/// Cuts `axes` at the first axis `remove(axis, prev_sharded_size)` rejects
/// (nullopt) or shortens. A template, so the hot callers pass lambdas
/// without a std::function allocation.
template <typename RemoveFn>
void truncateByConflicts(std::vector<AxisRef> &axes, const RemoveFn &remove,
                         const Mesh *mesh, bool conservative) {
  int64_t prev_sharded = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<AxisRef> next = remove(axes[i], prev_sharded);
    if (!next || (conservative && next->isSubAxis())) {
      axes.resize(i);
      return;
    }
    if (!(axes[i] == *next)) {
      axes[i] = std::move(*next);
      axes.resize(i + 1);
      return;
    }
    if (mesh)
      prev_sharded *= axisRefSize(*next, *mesh);
  }
}

void propagateBasic(ShardingProjection &projection,
                    const FactorPropagationInput &in, TensorUpdates &updates);
void propagateAggressive(ShardingProjection &projection,
                         const FactorPropagationInput &in,
                         TensorUpdates &updates);

} // namespace shardlab::detail
