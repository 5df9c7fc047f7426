#include "factor_propagation_internal.h"
#include "propagation/factor_propagation.h"

#include "shardlab/sharding/axis.h"

#include <numeric>

namespace shardlab {

namespace detail {

std::optional<AxisRef> prefixWithoutOverlap(AxisRef axis,
                                            const std::vector<AxisRef> &list) {
  for (const AxisRef &other : list) {
    std::optional<AxisRef> next = getPrefixWithoutOverlap(axis, other);
    if (!next)
      return std::nullopt;
    axis = std::move(*next);
  }
  return axis;
}

std::optional<AxisRef>
noConflictsAcrossFactors(const AxisRef &axis, const TensorFactorShardings &row,
                         int64_t factor) {
  std::optional<AxisRef> result = axis;
  for (size_t other = 0; other < row.factors.size(); ++other) {
    const FactorSharding &f = row.factors[other];
    if (!f.present || static_cast<int64_t>(other) == factor)
      continue;
    if (!(result = prefixWithoutOverlap(*result, f.overflow)) ||
        !(result = prefixWithoutOverlap(*result, f.axes)))
      return std::nullopt;
  }
  return result;
}

// Whether `factor` can grow by `axis` (already free of replicated/unreduced
// overlaps): open, no overflow, and divisible unless minor-most. Returns the
// (possibly split) axis it can take.
static std::optional<AxisRef>
expandable(const AxisRef &axis, const FactorSharding &f, int64_t prev_sharded,
           int64_t factor_size, const Mesh *mesh) {
  if (f.closed || !f.overflow.empty())
    return std::nullopt;
  if (f.minor_most || !mesh)
    return axis;
  if (factor_size % prev_sharded != 0)
    return std::nullopt;
  int64_t axis_size = axisRefSize(axis, *mesh);
  int64_t g = std::gcd(factor_size / prev_sharded, axis_size);
  if (g == axis_size)
    return axis;
  if (g != 1)
    return subAxis(axis.name, subAxisPreSize(axis), g);
  return std::nullopt;
}

std::optional<AxisRef>
noConflictsWithinFactor(const AxisRef &axis, const TensorFactorShardings &row,
                        const FactorSharding &f, int64_t prev_sharded,
                        int64_t factor_size, const Mesh *mesh) {
  std::optional<AxisRef> result = prefixWithoutOverlap(axis, row.replicated);
  if (!result || !(result = prefixWithoutOverlap(*result, row.unreduced)))
    return std::nullopt;
  for (const AxisRef &existing : f.axes)
    if (contains(existing, *result))
      return result;
  if (std::optional<AxisRef> grown =
          expandable(*result, f, prev_sharded, factor_size, mesh))
    return grown;
  if (!f.axes.empty() && prefixOf(f.axes.back(), *result))
    return f.axes.back();
  return std::nullopt;
}

} // namespace detail

namespace {

// Folds `next` into the compatible prefix `acc` (in place); returns whether
// `acc` may still be expanded by later tensors.
bool foldCompatible(std::vector<AxisRef> &acc, const std::vector<AxisRef> &next,
                    bool can_expand) {
  size_t i = 0;
  for (; i < acc.size() && i < next.size(); ++i) {
    AxisRef &old_axis = acc[i];
    const AxisRef &new_axis = next[i];
    if (new_axis.name != old_axis.name) {
      acc.resize(i);
      return false;
    }
    if (new_axis.sub == old_axis.sub)
      continue;
    if (prefixOf(new_axis, old_axis)) {
      if (i + 1 < next.size()) {
        old_axis = new_axis;
        acc.resize(i + 1);
        return false;
      }
    } else if (prefixOf(old_axis, new_axis)) {
      if (!can_expand || i + 1 < acc.size()) {
        acc.resize(i + 1);
        return false;
      }
      old_axis = new_axis;
    } else {
      acc.resize(i);
      return false;
    }
  }
  if (can_expand && i < next.size())
    acc.insert(acc.end(), next.begin() + static_cast<std::ptrdiff_t>(i),
               next.end());
  return can_expand;
}

void foldRows(std::vector<AxisRef> &acc, bool &can_expand,
              const std::vector<TensorFactorShardings> &rows, int64_t factor) {
  for (const TensorFactorShardings &row : rows)
    if (const FactorSharding *f = row.find(factor))
      can_expand = foldCompatible(acc, f->axes, can_expand);
}

} // namespace

std::vector<AxisRef> compatibleMajorAxes(const ShardingProjection &projection,
                                         int64_t factor,
                                         PropagationDirection direction) {
  std::vector<AxisRef> acc;
  compatibleMajorAxesInto(acc, projection, factor, direction);
  return acc;
}

void compatibleMajorAxesInto(std::vector<AxisRef> &acc,
                             const ShardingProjection &projection,
                             int64_t factor, PropagationDirection direction) {
  acc.clear();
  if (direction == PropagationDirection::None)
    return;
  bool backward = direction == PropagationDirection::Backward;
  const auto &first = backward ? projection.results : projection.operands;
  const auto &second = backward ? projection.operands : projection.results;
  bool can_expand = true;
  foldRows(acc, can_expand, first, factor);
  if (direction != PropagationDirection::Both)
    can_expand = false;
  foldRows(acc, can_expand, second, factor);
}

namespace {

std::optional<AxisRef>
compatiblePrefixInRow(const AxisRef &axis, const TensorFactorShardings &row,
                      int64_t factor, int64_t prev_sharded, int64_t factor_size,
                      const Mesh *mesh) {
  std::optional<AxisRef> result =
      detail::noConflictsAcrossFactors(axis, row, factor);
  if (!result)
    return std::nullopt;
  const FactorSharding *f = row.find(factor);
  if (!f)
    return result;
  return detail::noConflictsWithinFactor(*result, row, *f, prev_sharded,
                                         factor_size, mesh);
}

} // namespace

std::vector<AxisRef>
compatibleMajorShardingAxes(const ShardingProjection &projection,
                            int64_t factor, PropagationDirection direction,
                            const FactorPropagationInput &in) {
  std::vector<AxisRef> axes =
      compatibleMajorAxes(projection, factor, direction);
  if (axes.empty())
    return axes;
  int64_t factor_size = (*in.factor_sizes)[factor];
  auto remove = [&](const AxisRef &axis,
                    int64_t prev_sharded) -> std::optional<AxisRef> {
    std::optional<AxisRef> result = axis;
    for (const auto *rows : {&projection.operands, &projection.results})
      for (const TensorFactorShardings &row : *rows)
        if (!(result = compatiblePrefixInRow(*result, row, factor, prev_sharded,
                                             factor_size, in.mesh)))
          return std::nullopt;
    return result;
  };
  detail::truncateByConflicts(axes, remove, in.mesh, in.conservative);
  return axes;
}

namespace detail {

void propagateBasic(ShardingProjection &projection,
                    const FactorPropagationInput &in, TensorUpdates &updates) {
  updates.operands.assign(projection.operands.size(), false);
  updates.results.assign(projection.results.size(), false);
  for (size_t factor = 0; factor < in.factor_sizes->size(); ++factor) {
    PropagationDirection dir = (*in.direction)(factor);
    std::vector<AxisRef> axes =
        compatibleMajorShardingAxes(projection, factor, dir, in);
    if (axes.empty())
      continue;
    for (size_t i = 0; i < projection.operands.size(); ++i)
      if (projection.operands[i].expand(factor, axes))
        updates.operands[i] = true;
    for (size_t i = 0; i < projection.results.size(); ++i)
      if (projection.results[i].expand(factor, axes))
        updates.results[i] = true;
  }
}

} // namespace detail

void propagateFactorsInto(FactorStrategy strategy,
                          ShardingProjection &projection,
                          const FactorPropagationInput &in,
                          TensorUpdates &updates) {
  if (strategy == FactorStrategy::Basic)
    detail::propagateBasic(projection, in, updates);
  else
    detail::propagateAggressive(projection, in, updates);
}

TensorUpdates propagateFactors(FactorStrategy strategy,
                               ShardingProjection &projection,
                               const FactorPropagationInput &in) {
  TensorUpdates updates;
  propagateFactorsInto(strategy, projection, in, updates);
  return updates;
}

} // namespace shardlab
