// A reshape whose operand or result sharding has overflow axes (axes that do
// not divide a non-minor-most factor) in -sdy-insert-explicit-reshards'
// full version, as Shardy's processReshapeWithOverflowAxes: the axes of the
// more sharded side are dealt out again over each side's factors, axis
// first (each axis, or the part of it that divides, goes to the first factor
// with room), both sides are projected again, and every factor takes the
// greatest common prefix of its axes on the two sides.
#include "explicit_reshards_util.h"
#include "export_passes.h"

#include "shardlab/sharding/axis.h"

#include <numeric>

namespace shardlab {

namespace {

// The next (sub-)axis of a list being dealt out: `axes[index]`, of which
// `size` is left, starting at `pre` when it was split.
struct AxisCursor {
  const std::vector<AxisRef> &axes;
  const Mesh &mesh;
  size_t index = 0;
  int64_t size = 0;
  std::optional<int64_t> pre;

  bool done() const { return index >= axes.size(); }
  void load() {
    if (done())
      return;
    size = axisRefSize(axes[index], mesh);
    pre = axes[index].sub ? std::optional<int64_t>(axes[index].sub->pre_size)
                          : std::nullopt;
  }
  AxisRef current() const {
    return pre ? subAxis(axes[index].name, *pre, size) : axes[index];
  }
  void next() {
    ++index;
    load();
  }
};

int64_t shardingSize(const TensorFactorShardings &row, const Mesh &mesh) {
  int64_t size = 1;
  for (const FactorSharding &fs : row.factors)
    if (fs.present)
      size *= axesTotalSize(fs.axes, mesh) * axesTotalSize(fs.overflow, mesh);
  return size;
}

// Gives `cursor`'s current axis (or its part dividing a factor's room) to
// the first factor with room; false when none can take any of it.
bool placeAxis(std::vector<FactorSharding *> &factors,
               std::vector<int64_t> &room, AxisCursor &cursor) {
  for (size_t i = 0; i < factors.size(); ++i) {
    if (room[i] <= 1)
      continue;
    int64_t gcd = std::gcd(room[i], cursor.size);
    if (gcd == 1 && cursor.size != 1)
      continue;
    if (cursor.size > gcd) {
      int64_t pre = cursor.pre.value_or(1);
      addAxisOrMerge(factors[i]->axes,
                     subAxis(cursor.axes[cursor.index].name, pre, gcd),
                     cursor.mesh);
      cursor.pre = pre * gcd;
      cursor.size /= gcd;
      room[i] /= gcd;
      continue;
    }
    addAxisOrMerge(factors[i]->axes, cursor.current(), cursor.mesh);
    room[i] /= cursor.size;
    cursor.next();
    return true;
  }
  return false;
}

// Shardy's distributeAxesAcrossFactors over the row's present factors in
// dimension order; what no factor can take becomes the last one's overflow.
void redistribute(TensorFactorShardings &row,
                  const OpShardingRule::TensorMapping &mapping,
                  const std::vector<int64_t> &factor_sizes,
                  const std::vector<AxisRef> &all, const Mesh &mesh) {
  std::vector<FactorSharding *> factors;
  std::vector<int64_t> room;
  for (const auto &dim : mapping)
    for (int64_t f : dim)
      if (row.factors[f].present) {
        row.factors[f].axes.clear();
        row.factors[f].overflow.clear();
        factors.push_back(&row.factors[f]);
        room.push_back(factor_sizes[f]);
      }
  AxisCursor cursor{all, mesh};
  cursor.load();
  while (!factors.empty() && !cursor.done()) {
    int64_t size_before = cursor.size;
    size_t index_before = cursor.index;
    if (placeAxis(factors, room, cursor))
      continue;
    if (cursor.index == index_before && cursor.size != size_before)
      continue; // part of the axis was placed; offer the rest again
    for (; !cursor.done(); cursor.next())
      addAxisOrMerge(factors.back()->overflow, cursor.current(), mesh);
  }
}

// Per factor, the greatest common prefix of its axes over all rows.
AxesPerFactor commonPrefixAxes(const ShardingProjection &projection,
                               size_t num_factors) {
  AxesPerFactor axes(num_factors);
  std::vector<bool> seen(num_factors, false);
  for (const auto *rows : {&projection.operands, &projection.results})
    for (const TensorFactorShardings &row : *rows)
      for (size_t f = 0; f < row.factors.size() && f < num_factors; ++f) {
        const FactorSharding &fs = row.factors[f];
        if (!fs.present)
          continue;
        if (!seen[f]) {
          axes[f] = fs.axes;
          seen[f] = true;
          continue;
        }
        size_t n = 0;
        std::vector<AxisRef> prefix;
        for (; n < axes[f].size() && n < fs.axes.size(); ++n) {
          std::optional<AxisRef> common =
              getGreatestCommonPrefix(axes[f][n], fs.axes[n]);
          if (!common)
            break;
          prefix.push_back(*common);
          if (!(*common == axes[f][n]) || !(*common == fs.axes[n]))
            break;
        }
        axes[f] = std::move(prefix);
      }
  return axes;
}

} // namespace

bool hasOverflowAxes(const ShardingProjection &projection) {
  for (const auto *rows : {&projection.operands, &projection.results})
    for (const TensorFactorShardings &row : *rows)
      for (const FactorSharding &fs : row.factors)
        if (fs.present && !fs.overflow.empty())
          return true;
  return false;
}

AxesPerFactor alignReshapeOverflowAxes(ShardingProjection &projection,
                                       const OpShardingRule &rule,
                                       const MeshRef &mesh_ref,
                                       const Mesh &mesh) {
  TensorFactorShardings &in = projection.operands[0];
  TensorFactorShardings &out = projection.results[0];
  const TensorFactorShardings &best =
      shardingSize(in, mesh) >= shardingSize(out, mesh) ? in : out;
  std::vector<AxisRef> all;
  for (const FactorSharding &fs : best.factors)
    if (fs.present) {
      all.insert(all.end(), fs.axes.begin(), fs.axes.end());
      all.insert(all.end(), fs.overflow.begin(), fs.overflow.end());
    }
  redistribute(in, rule.operands[0], rule.factor_sizes, all, mesh);
  redistribute(out, rule.results[0], rule.factor_sizes, all, mesh);
  TensorSharding in_built =
      unproject(in, rule.operands[0], rule.factor_sizes, mesh_ref, mesh);
  TensorSharding out_built =
      unproject(out, rule.results[0], rule.factor_sizes, mesh_ref, mesh);
  AxesPerFactor common =
      commonPrefixAxes(buildProjection({&in_built}, {&out_built}, rule, mesh),
                       rule.factor_sizes.size());
  for (auto *rows : {&projection.operands, &projection.results})
    for (TensorFactorShardings &row : *rows)
      for (size_t f = 0; f < row.factors.size() && f < common.size(); ++f)
        if (row.factors[f].present) {
          row.factors[f].axes = common[f];
          row.factors[f].overflow.clear();
        }
  return common;
}

} // namespace shardlab
