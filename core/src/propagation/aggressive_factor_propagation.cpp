#include "factor_propagation_internal.h"
#include "propagation/factor_propagation.h"

#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <tuple>

namespace shardlab::detail {

namespace {

// For each factor, the largest tensor whose axes along it extend the
// factor's compatible axes (Shardy's getFactorToSourceTensor), as
// (tensor index, tensor size); (-1, -1) when none.
void sourceTensors(const ShardingProjection &projection,
                   const std::vector<int64_t> &sizes,
                   const std::vector<std::vector<AxisRef>> &axes_per_factor,
                   std::vector<std::pair<int64_t, int64_t>> &sources) {
  sources.assign(sizes.size(), {-1, -1});
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
        if (source && tensor_size > sources[f].second)
          sources[f] = {index, tensor_size};
      }
      ++index;
    }
}

void sortFactors(const ShardingProjection &projection,
                 const std::vector<std::vector<AxisRef>> &axes_per_factor,
                 const FactorPropagationInput &in, FactorScratch &scratch) {
  std::vector<std::pair<int64_t, int64_t>> &sources = scratch.sources;
  sourceTensors(projection, *in.factor_sizes, axes_per_factor, sources);
  size_t num_factors = in.factor_sizes->size();
  std::vector<int64_t> &sharding_size = scratch.sharding_size;
  sharding_size.assign(num_factors, 0);
  if (in.elementwise && in.mesh)
    for (size_t f = 0; f < num_factors; ++f)
      sharding_size[f] = axesTotalSize(axes_per_factor[f], *in.mesh);
  std::vector<int64_t> &order = scratch.order;
  order.resize(num_factors);
  for (size_t f = 0; f < order.size(); ++f)
    order[f] = static_cast<int64_t>(f);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::make_tuple(-sources[a].second, -sharding_size[a],
                           sources[a].first, a) <
           std::make_tuple(-sources[b].second, -sharding_size[b],
                           sources[b].first, b);
  });
}

// The axes factor `factor` of `row` takes from `candidate`, given the row's
// current (partly updated) state, into `axes`; false when nothing.
bool propagatedAxes(int64_t factor, const TensorFactorShardings &row,
                    const std::vector<AxisRef> &candidate,
                    const FactorPropagationInput &in,
                    std::vector<AxisRef> &axes) {
  const FactorSharding *f = row.find(factor);
  // Conflict removal only shortens the candidate, so unless the factor's
  // axes are a strict prefix of it nothing can be added.
  if (!f || candidate.empty() || !isStrictPrefix(f->axes, candidate))
    return false;
  axes = candidate;
  int64_t factor_size = (*in.factor_sizes)[factor];
  truncateByConflicts(
      axes,
      [&](const AxisRef &axis, int64_t prev) {
        return noConflictsWithinFactor(axis, row, *f, prev, factor_size,
                                       in.mesh);
      },
      in.mesh, in.conservative);
  if (!isStrictPrefix(f->axes, axes))
    return false;
  truncateByConflicts(
      axes,
      [&](const AxisRef &axis, int64_t) {
        return noConflictsAcrossFactors(axis, row, factor);
      },
      in.mesh, in.conservative);
  return !axes.empty();
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

void propagateAggressive(ShardingProjection &projection,
                         const FactorPropagationInput &in,
                         TensorUpdates &updates) {
  updates.operands.assign(projection.operands.size(), false);
  updates.results.assign(projection.results.size(), false);
  FactorScratch local;
  FactorScratch &scratch = in.scratch ? *in.scratch : local;
  size_t num_factors = in.factor_sizes->size();
  std::vector<std::vector<AxisRef>> &axes_per_factor = scratch.axes_per_factor;
  if (axes_per_factor.size() < num_factors)
    axes_per_factor.resize(num_factors);
  bool any = false;
  for (size_t f = 0; f < num_factors; ++f) {
    compatibleMajorAxesInto(axes_per_factor[f], projection,
                            static_cast<int64_t>(f), (*in.direction)(f));
    any |= !axes_per_factor[f].empty();
  }
  if (!any)
    return;
  // Only the first `num_factors` entries of the scratch belong to this call.
  const std::vector<std::vector<AxisRef>> *per_factor = &axes_per_factor;
  sortFactors(projection, axes_per_factor, in, scratch);
  std::vector<AxisRef> &axes = scratch.axes;
  auto run = [&](std::vector<TensorFactorShardings> &rows,
                 std::vector<bool> &updated, bool operands) {
    for (size_t t = 0; t < rows.size(); ++t)
      for (int64_t factor : scratch.order) {
        if (!propagatedAxes(factor, rows[t], (*per_factor)[factor], in, axes))
          continue;
        if (operands && in.elementwise)
          capByResults(projection, factor, axes);
        if (rows[t].expand(factor, axes))
          updated[t] = true;
      }
  };
  run(projection.results, updates.results, false);
  run(projection.operands, updates.operands, true);
}

} // namespace shardlab::detail
