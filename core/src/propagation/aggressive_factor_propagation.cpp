#include "factor_propagation_internal.h"
#include "shardlab/propagation/factor_propagation.h"

#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <tuple>

namespace shardlab::detail {

namespace {

struct SourceTensor {
  int64_t index = -1;
  int64_t size = -1;
};

// For each factor, the largest tensor whose axes along it extend the
// factor's compatible axes (Shardy's getFactorToSourceTensor).
std::vector<SourceTensor>
sourceTensors(const ShardingProjection &projection,
              const std::vector<int64_t> &sizes,
              const std::vector<std::vector<AxisRef>> &axes_per_factor) {
  std::vector<SourceTensor> sources(sizes.size());
  int64_t index = 0;
  for (const auto *rows : {&projection.operands, &projection.results})
    for (const TensorFactorShardings &row : *rows) {
      int64_t tensor_size = 1;
      for (size_t f = 0; f < row.factors.size(); ++f)
        if (row.factors[f].present)
          tensor_size *= sizes[f];
      for (size_t f = 0; f < row.factors.size(); ++f) {
        const FactorSharding &fs = row.factors[f];
        bool source = fs.present && !axes_per_factor[f].empty() &&
                      axisListPrefixStatus(axes_per_factor[f], fs.axes) !=
                          PrefixStatus::NotAPrefix;
        if (source && tensor_size > sources[f].size)
          sources[f] = {index, tensor_size};
      }
      ++index;
    }
  return sources;
}

std::vector<int64_t>
sortedFactors(const ShardingProjection &projection,
              const std::vector<std::vector<AxisRef>> &axes_per_factor,
              const FactorPropagationInput &in) {
  std::vector<SourceTensor> sources =
      sourceTensors(projection, *in.factor_sizes, axes_per_factor);
  std::vector<int64_t> sharding_size(axes_per_factor.size(), 0);
  if (in.elementwise && in.mesh)
    for (size_t f = 0; f < axes_per_factor.size(); ++f)
      sharding_size[f] = axesTotalSize(axes_per_factor[f], *in.mesh);
  std::vector<int64_t> order(axes_per_factor.size());
  for (size_t f = 0; f < order.size(); ++f)
    order[f] = static_cast<int64_t>(f);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::make_tuple(-sources[a].size, -sharding_size[a],
                           sources[a].index, a) <
           std::make_tuple(-sources[b].size, -sharding_size[b],
                           sources[b].index, b);
  });
  return order;
}

// The axes factor `factor` of `row` takes from `candidate`, given the row's
// current (partly updated) state; empty when nothing.
std::vector<AxisRef> propagatedAxes(int64_t factor,
                                    const TensorFactorShardings &row,
                                    const std::vector<AxisRef> &candidate,
                                    const FactorPropagationInput &in) {
  const FactorSharding *f = row.find(factor);
  if (!f || candidate.empty())
    return {};
  std::vector<AxisRef> axes = candidate;
  int64_t factor_size = (*in.factor_sizes)[factor];
  truncateByConflicts(
      axes,
      [&](const AxisRef &axis, int64_t prev) {
        return noConflictsWithinFactor(axis, row, *f, prev, factor_size,
                                       in.mesh);
      },
      in.mesh, in.conservative);
  if (!isStrictPrefix(f->axes, axes))
    return {};
  truncateByConflicts(
      axes,
      [&](const AxisRef &axis, int64_t) {
        return noConflictsAcrossFactors(axis, row, factor);
      },
      in.mesh, in.conservative);
  return axes;
}

// Elementwise ops do not push an axis sideways into an operand when a result
// already settled for less along that factor.
void capByResults(const ShardingProjection &projection, int64_t factor,
                  std::vector<AxisRef> &axes) {
  for (const TensorFactorShardings &result : projection.results) {
    const FactorSharding *f = result.find(factor);
    if (f && isStrictPrefix(f->axes, axes))
      axes = f->axes;
  }
}

} // namespace

TensorUpdates propagateAggressive(ShardingProjection &projection,
                                  const FactorPropagationInput &in) {
  TensorUpdates updates{std::vector<bool>(projection.operands.size()),
                        std::vector<bool>(projection.results.size())};
  size_t num_factors = in.factor_sizes->size();
  std::vector<std::vector<AxisRef>> axes_per_factor(num_factors);
  bool any = false;
  for (size_t f = 0; f < num_factors; ++f) {
    axes_per_factor[f] = compatibleMajorAxes(projection, f, (*in.direction)(f));
    any |= !axes_per_factor[f].empty();
  }
  if (!any)
    return updates;
  std::vector<int64_t> order = sortedFactors(projection, axes_per_factor, in);
  auto run = [&](std::vector<TensorFactorShardings> &rows,
                 std::vector<bool> &updated, bool operands) {
    for (size_t t = 0; t < rows.size(); ++t)
      for (int64_t factor : order) {
        std::vector<AxisRef> axes =
            propagatedAxes(factor, rows[t], axes_per_factor[factor], in);
        if (axes.empty())
          continue;
        if (operands && in.elementwise)
          capByResults(projection, factor, axes);
        if (rows[t].expand(factor, axes))
          updated[t] = true;
      }
  };
  run(projection.results, updates.results, false);
  run(projection.operands, updates.operands, true);
  return updates;
}

} // namespace shardlab::detail
