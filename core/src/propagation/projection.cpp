#include "propagation/projection.h"

#include "shardlab/sharding/axis.h"

#include <numeric>
#include <optional>

namespace shardlab {

PrefixStatus axisListPrefixStatus(const std::vector<AxisRef> &first,
                                  const std::vector<AxisRef> &second) {
  if (first.empty())
    return second.empty() ? PrefixStatus::Equal : PrefixStatus::StrictPrefix;
  if (first.size() > second.size())
    return PrefixStatus::NotAPrefix;
  size_t last = first.size() - 1;
  for (size_t i = 0; i < last; ++i)
    if (!(first[i] == second[i]))
      return PrefixStatus::NotAPrefix;
  if (first.size() == second.size() && first.back() == second.back())
    return PrefixStatus::Equal;
  return prefixOf(first[last], second[last]) ? PrefixStatus::StrictPrefix
                                             : PrefixStatus::NotAPrefix;
}

bool TensorFactorShardings::expand(int64_t factor,
                                   const std::vector<AxisRef> &axes) {
  FactorSharding &f = factors[factor];
  if (!f.present || !isStrictPrefix(f.axes, axes))
    return false;
  f.axes = axes;
  return true;
}

namespace {

// The part of a dimension's axis list not yet given to a factor: the axis at
// `index`, of which only the sub-axis (pre)size is left.
struct AxisCursor {
  const std::vector<AxisRef> *axes;
  size_t index = 0;
  int64_t size = 1;
  std::optional<int64_t> pre;

  bool valid() const { return index < axes->size(); }
  void load(const Mesh &mesh) {
    if (!valid())
      return;
    const AxisRef &axis = (*axes)[index];
    size = axisRefSize(axis, mesh);
    pre = axis.sub ? std::optional<int64_t>(axis.sub->pre_size) : std::nullopt;
  }
  void advance(const Mesh &mesh) {
    ++index;
    load(mesh);
  }
  AxisRef current() const {
    const AxisName &name = (*axes)[index].name;
    return pre ? subAxis(name, *pre, size) : fullAxis(name);
  }
};

void takeRemaining(std::vector<AxisRef> &out, AxisCursor &cursor,
                   const Mesh &mesh) {
  while (cursor.valid()) {
    addAxisOrMerge(out, cursor.current(), mesh);
    cursor.advance(mesh);
  }
}

// Gives a non-minor-most factor of size `factor_size` the axes of `cursor`
// that divide it, splitting an axis where only a part divides.
void takeDividing(FactorSharding &f, AxisCursor &cursor, int64_t factor_size,
                  const Mesh &mesh) {
  int64_t remaining = factor_size;
  int64_t g = 1;
  while (cursor.valid() &&
         (cursor.size == 1 || (g = std::gcd(remaining, cursor.size)) > 1)) {
    const AxisName &name = (*cursor.axes)[cursor.index].name;
    if (cursor.size > g) {
      int64_t pre = cursor.pre.value_or(1);
      f.axes.push_back(subAxis(name, pre, g));
      cursor.pre = pre * g;
      cursor.size /= g;
      remaining /= g;
    } else {
      f.axes.push_back(cursor.current());
      remaining /= cursor.size;
      cursor.advance(mesh);
    }
  }
  if (remaining > 1 && cursor.valid())
    takeRemaining(f.overflow, cursor, mesh);
}

} // namespace

void projectTensorInto(TensorFactorShardings &row,
                       const OpShardingRule::TensorMapping &mapping,
                       const TensorSharding *sharding,
                       const std::vector<int64_t> &factor_sizes,
                       const Mesh &mesh, bool closed_if_missing) {
  static const std::vector<AxisRef> kNoAxes;
  row.factors.resize(factor_sizes.size());
  for (FactorSharding &f : row.factors) {
    f.axes.clear();
    f.overflow.clear();
    f.present = f.closed = f.minor_most = false;
  }
  for (size_t dim = 0; dim < mapping.size(); ++dim) {
    bool has_dim = sharding && dim < sharding->dims.size();
    AxisCursor cursor{has_dim ? &sharding->dims[dim].axes : &kNoAxes};
    cursor.load(mesh);
    bool closed = has_dim ? sharding->dims[dim].closed : closed_if_missing;
    bool overflowed = false;
    const std::vector<int64_t> &factors = mapping[dim];
    for (size_t k = 0; k < factors.size(); ++k) {
      FactorSharding &f = row.factors[factors[k]];
      f.present = true;
      f.minor_most = k + 1 == factors.size();
      if (overflowed) {
        f.closed = true;
        break;
      }
      f.closed = closed;
      if (f.minor_most) {
        takeRemaining(f.axes, cursor, mesh);
        break;
      }
      takeDividing(f, cursor, factor_sizes[factors[k]], mesh);
      overflowed = !f.overflow.empty();
    }
  }
  if (sharding) {
    row.replicated = sharding->replicated;
    row.unreduced = sharding->unreduced;
    row.unreduced_kind = sharding->unreduced_kind;
  } else {
    row.replicated.clear();
    row.unreduced.clear();
    row.unreduced_kind = ReductionKind::Sum;
  }
}

TensorFactorShardings
projectTensor(const OpShardingRule::TensorMapping &mapping,
              const TensorSharding *sharding,
              const std::vector<int64_t> &factor_sizes, const Mesh &mesh,
              bool closed_if_missing) {
  TensorFactorShardings row;
  projectTensorInto(row, mapping, sharding, factor_sizes, mesh,
                    closed_if_missing);
  return row;
}

void buildProjectionInto(ShardingProjection &out,
                         const std::vector<const TensorSharding *> &operands,
                         const std::vector<const TensorSharding *> &results,
                         const OpShardingRule &rule, const Mesh &mesh) {
  auto side = [&](std::vector<TensorFactorShardings> &rows,
                  const std::vector<OpShardingRule::TensorMapping> &maps,
                  const std::vector<const TensorSharding *> &shardings) {
    rows.resize(maps.size());
    for (size_t i = 0; i < maps.size(); ++i)
      projectTensorInto(rows[i], maps[i],
                        i < shardings.size() ? shardings[i] : nullptr,
                        rule.factor_sizes, mesh, false);
  };
  side(out.operands, rule.operands, operands);
  side(out.results, rule.results, results);
}

ShardingProjection
buildProjection(const std::vector<const TensorSharding *> &operands,
                const std::vector<const TensorSharding *> &results,
                const OpShardingRule &rule, const Mesh &mesh) {
  ShardingProjection projection;
  buildProjectionInto(projection, operands, results, rule, mesh);
  return projection;
}

namespace {

int64_t appendAxes(std::vector<AxisRef> &dim, const std::vector<AxisRef> &axes,
                   const Mesh &mesh) {
  int64_t total = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    total *= axisRefSize(axes[i], mesh);
    if (i == 0)
      addAxisOrMerge(dim, axes[i], mesh);
    else
      dim.push_back(axes[i]);
  }
  return total;
}

} // namespace

TensorSharding unproject(const TensorFactorShardings &row,
                         const OpShardingRule::TensorMapping &mapping,
                         const std::vector<int64_t> &factor_sizes,
                         const MeshRef &mesh_ref, const Mesh &mesh) {
  TensorSharding out;
  unprojectInto(out, row, mapping, factor_sizes, mesh_ref, mesh);
  return out;
}

void unprojectInto(TensorSharding &out, const TensorFactorShardings &row,
                   const OpShardingRule::TensorMapping &mapping,
                   const std::vector<int64_t> &factor_sizes,
                   const MeshRef &mesh_ref, const Mesh &mesh) {
  if (!(out.mesh == mesh_ref))
    out.mesh = mesh_ref;
  out.dims.resize(mapping.size());
  for (size_t d = 0; d < mapping.size(); ++d) {
    const OpShardingRule::DimMapping &factors = mapping[d];
    DimSharding &dim = out.dims[d];
    dim.axes.clear();
    dim.priority.reset();
    dim.closed = false;
    for (int64_t factor : factors) {
      const FactorSharding &f = row.factors[factor];
      dim.closed |= f.closed;
      int64_t sharded = appendAxes(dim.axes, f.axes, mesh);
      if (!f.overflow.empty()) {
        appendAxes(dim.axes, f.overflow, mesh);
        break;
      }
      if (sharded < factor_sizes[factor])
        break;
    }
  }
  out.replicated = row.replicated;
  out.unreduced = row.unreduced;
  out.unreduced_kind = row.unreduced_kind;
}

} // namespace shardlab
