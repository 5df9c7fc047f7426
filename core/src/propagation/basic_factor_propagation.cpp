#include "factor_propagation_internal.h"
#include "shardlab/propagation/factor_propagation.h"

#include "shardlab/sharding/axis.h"

#include <numeric>

namespace shardlab {

PropagationDirection unionOfDirections(PropagationDirection a,
                                       PropagationDirection b) {
  using D = PropagationDirection;
  if ((a == D::Forward && b == D::Backward) ||
      (a == D::Backward && b == D::Forward))
    return D::Both;
  return std::max(a, b);
}

PropagationDirection intersectionOfDirections(PropagationDirection a,
                                              PropagationDirection b) {
  using D = PropagationDirection;
  if ((a == D::Forward && b == D::Backward) ||
      (a == D::Backward && b == D::Forward))
    return D::None;
  return std::min(a, b);
}

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

void truncateByConflicts(std::vector<AxisRef> &axes,
                         const RemoveConflictsFn &remove, const Mesh *mesh,
                         bool conservative) {
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

} // namespace detail

namespace {

// Folds `next` into the compatible prefix `acc`; returns whether `acc` may
// still be expanded by later tensors.
bool foldCompatible(std::vector<AxisRef> &acc, const std::vector<AxisRef> &next,
                    bool can_expand) {
  std::vector<AxisRef> out;
  size_t i = 0;
  for (; i < acc.size() && i < next.size(); ++i) {
    const AxisRef &old_axis = acc[i];
    const AxisRef &new_axis = next[i];
    bool stop = false;
    if (new_axis.name != old_axis.name) {
      acc = std::move(out);
      return false;
    }
    if (new_axis.sub == old_axis.sub) {
      out.push_back(new_axis);
    } else if (prefixOf(new_axis, old_axis)) {
      stop = i + 1 < next.size();
      out.push_back(stop ? new_axis : old_axis);
    } else if (prefixOf(old_axis, new_axis)) {
      stop = !can_expand || i + 1 < acc.size();
      out.push_back(stop ? old_axis : new_axis);
    } else {
      acc = std::move(out);
      return false;
    }
    if (stop) {
      acc = std::move(out);
      return false;
    }
  }
  out.insert(out.end(), acc.begin() + i, acc.end());
  if (can_expand && i < next.size())
    out.insert(out.end(), next.begin() + i, next.end());
  acc = std::move(out);
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
  if (direction == PropagationDirection::None)
    return acc;
  bool backward = direction == PropagationDirection::Backward;
  const auto &first = backward ? projection.results : projection.operands;
  const auto &second = backward ? projection.operands : projection.results;
  bool can_expand = true;
  foldRows(acc, can_expand, first, factor);
  if (direction != PropagationDirection::Both)
    can_expand = false;
  foldRows(acc, can_expand, second, factor);
  return acc;
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

TensorUpdates propagateBasic(ShardingProjection &projection,
                             const FactorPropagationInput &in) {
  TensorUpdates updates{std::vector<bool>(projection.operands.size()),
                        std::vector<bool>(projection.results.size())};
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
  return updates;
}

} // namespace detail

TensorUpdates propagateFactors(FactorStrategy strategy,
                               ShardingProjection &projection,
                               const FactorPropagationInput &in) {
  return strategy == FactorStrategy::Basic
             ? detail::propagateBasic(projection, in)
             : detail::propagateAggressive(projection, in);
}

} // namespace shardlab
