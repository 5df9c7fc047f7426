// findCommonAxes of -sdy-insert-explicit-reshards: compatible factor
// shardings, the two-tensor rule, and the candidate heuristic.
#include "explicit_reshards_util.h"
#include "export_passes.h"

#include "passes/data_flow_edges.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace shardlab {

std::optional<TensorSharding> shardingOf(Value *value) {
  if (value->isBlockArgument())
    if (Value *owner = edgeOwnerFromTarget(value))
      return edgeOwnerSharding(owner);
  if (const TensorSharding *sharding = getSharding(value))
    return *sharding;
  return std::nullopt;
}

const TensorSharding *
shardingBypassingBarriers(Value *value, std::deque<TensorSharding> &owned) {
  while (value->defining_op &&
         value->defining_op->is("sdy.propagation_barrier"))
    value = value->defining_op->operand(0);
  if (value->isBlockArgument())
    if (Value *owner = edgeOwnerFromTarget(value)) {
      std::optional<TensorSharding> sharding = edgeOwnerSharding(owner);
      return sharding ? &owned.emplace_back(std::move(*sharding)) : nullptr;
    }
  return getSharding(value);
}

namespace {

using Rows = std::vector<const TensorFactorShardings *>;

Rows allRows(const ShardingProjection &projection) {
  Rows rows;
  for (const auto &row : projection.operands)
    rows.push_back(&row);
  for (const auto &row : projection.results)
    rows.push_back(&row);
  return rows;
}

bool contains(const std::vector<int64_t> &list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool anyOverlap(const std::vector<AxisRef> &a, const std::vector<AxisRef> &b) {
  for (const AxisRef &x : a)
    for (const AxisRef &y : b)
      if (overlaps(x, y))
        return true;
  return false;
}

const std::vector<AxisRef> kNoAxes;

// The factor's axes when every tensor that has it agrees (kNoAxes when none
// has it), else null; points into the projection.
const std::vector<AxisRef> *compatibleAxes(const Rows &rows, int64_t factor) {
  const std::vector<AxisRef> *found = nullptr;
  for (const TensorFactorShardings *row : rows) {
    const FactorSharding *f = row->find(factor);
    if (!f)
      continue;
    if (found && *found != f->axes)
      return nullptr;
    found = &f->axes;
  }
  return found ? found : &kNoAxes;
}

// Whether some factor before `factor` (all compatible) overlaps `axes`.
bool overlapsEarlierFactor(
    const std::vector<const std::vector<AxisRef> *> &axes, size_t factor) {
  for (size_t f = 0; f < factor; ++f)
    if (axes[f] && anyOverlap(*axes[factor], *axes[f]))
      return true;
  return false;
}

AxesPerFactor compatibleFactorShardings(const Rows &rows,
                                        const OpShardingRule &rule) {
  // Compared first without copying: most ops have compatible shardings.
  std::vector<const std::vector<AxisRef> *> axes(rule.factor_sizes.size());
  for (size_t f = 0; f < axes.size(); ++f) {
    axes[f] = compatibleAxes(rows, static_cast<int64_t>(f));
    if (!axes[f])
      return {};
    if (contains(rule.need_replication, static_cast<int64_t>(f))) {
      if (!axes[f]->empty())
        return {};
      axes[f] = nullptr;
      continue;
    }
    if (!axes[f]->empty() && overlapsEarlierFactor(axes, f))
      return {};
  }
  AxesPerFactor common(axes.size());
  for (size_t f = 0; f < axes.size(); ++f)
    if (axes[f])
      common[f] = *axes[f];
  return common;
}

int64_t shardingSize(const Rows &rows, size_t i, const Mesh &mesh) {
  int64_t total = 1;
  for (const FactorSharding &f : rows[i]->factors)
    if (f.present)
      total *= axesTotalSize(f.axes, mesh);
  return total;
}

bool hasShardedPermutation(const TensorFactorShardings &row,
                           const OpShardingRule &rule) {
  for (int64_t f : rule.permutation)
    if (row.find(f) && !row.find(f)->axes.empty())
      return true;
  return false;
}

std::vector<size_t> nonScalarTensors(const OpShardingRule &rule) {
  std::vector<size_t> indices;
  size_t i = 0;
  for (const auto *list : {&rule.operands, &rule.results})
    for (const auto &mapping : *list) {
      if (!mapping.empty())
        indices.push_back(i);
      ++i;
    }
  return indices;
}

bool hasMultiFactorDims(const OpShardingRule &rule) {
  for (const auto *list : {&rule.operands, &rule.results})
    for (const auto &mapping : *list)
      for (const auto &dim : mapping)
        if (dim.size() > 1)
          return true;
  return false;
}

AxesPerFactor commonAxesOnUnary(const Rows &rows, const OpShardingRule &rule,
                                const std::vector<int64_t> &sizes,
                                const Mesh &mesh) {
  std::vector<size_t> tensors = nonScalarTensors(rule);
  auto key = [&](size_t i) {
    return std::make_tuple(!hasShardedPermutation(*rows[i], rule), sizes[i],
                           shardingSize(rows, i, mesh));
  };
  size_t preferred = tensors[0], other = tensors[1];
  if (key(preferred) < key(other))
    std::swap(preferred, other);
  AxesPerFactor common(rule.factor_sizes.size());
  std::vector<AxisRef> used;
  for (size_t f = 0; f < common.size(); ++f)
    if (const FactorSharding *fs = rows[preferred]->find(f)) {
      common[f] = fs->axes;
      used.insert(used.end(), fs->axes.begin(), fs->axes.end());
    }
  for (size_t f = 0; f < common.size(); ++f)
    if (!rows[preferred]->find(f) && rows[other]->find(f)) {
      common[f] = rows[other]->find(f)->axes;
      truncateWithoutOverlap(common[f], used);
    }
  return common;
}

bool inAllNonScalarTensors(const OpShardingRule &rule, int64_t factor) {
  for (const auto *list : {&rule.operands, &rule.results})
    for (const auto &mapping : *list) {
      bool found = mapping.empty();
      for (const auto &dim : mapping)
        found = found || contains(dim, factor);
      if (!found)
        return false;
    }
  return true;
}

bool isBatching(const OpShardingRule &rule, int64_t f) {
  return !contains(rule.reduction, f) && !contains(rule.need_replication, f) &&
         !contains(rule.permutation, f) && inAllNonScalarTensors(rule, f);
}

// Moves the axes of need-replication factors onto batching factors while
// they divide them (Shardy's distributeAxisRefsToBatchingFactors).
void distributeToBatching(const OpShardingRule &rule, const Mesh &mesh,
                          AxesPerFactor &common) {
  for (int64_t nr : rule.need_replication) {
    std::vector<AxisRef> pending = common[nr];
    common[nr].clear();
    if (!inAllNonScalarTensors(rule, nr))
      continue;
    size_t next = 0;
    for (size_t f = 0; f < common.size() && next < pending.size(); ++f) {
      int64_t size = rule.factor_sizes[f];
      int64_t sharded = axesTotalSize(common[f], mesh);
      if (!isBatching(rule, f) || size == 0 || size % sharded != 0)
        continue;
      int64_t capacity = size / sharded;
      for (; next < pending.size(); ++next) {
        int64_t axis_size = axisRefSize(pending[next], mesh);
        if (capacity % axis_size != 0)
          break;
        addAxisOrMerge(common[f], pending[next], mesh);
        capacity /= axis_size;
      }
    }
  }
}

} // namespace

// `axes` cut before the first axis overlapping `other` (keeping the
// non-overlapping major part of that axis); whether anything changed.
bool truncateWithoutOverlap(std::vector<AxisRef> &axes,
                            const std::vector<AxisRef> &other) {
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<AxisRef> prefix = axes[i];
    for (const AxisRef &o : other)
      if (prefix)
        prefix = getPrefixWithoutOverlap(*prefix, o);
    if (prefix == std::optional<AxisRef>(axes[i]))
      continue;
    axes.resize(i);
    if (prefix)
      axes.push_back(*prefix);
    return true;
  }
  return false;
}

std::optional<std::vector<AxisRef>>
compatibleFactorAxes(const ShardingProjection &projection, int64_t factor) {
  const std::vector<AxisRef> *axes =
      compatibleAxes(allRows(projection), factor);
  if (!axes)
    return std::nullopt;
  return *axes;
}

AxesPerFactor findCommonAxes(const ShardingProjection &projection,
                             const OpShardingRule &rule,
                             const std::vector<int64_t> &tensor_sizes,
                             const Mesh &mesh) {
  Rows rows = allRows(projection);
  AxesPerFactor compatible = compatibleFactorShardings(rows, rule);
  if (!compatible.empty() || rule.factor_sizes.empty())
    return compatible;
  if (nonScalarTensors(rule).size() == 2 && rule.need_replication.empty() &&
      !hasMultiFactorDims(rule))
    return commonAxesOnUnary(rows, rule, tensor_sizes, mesh);
  AxesPerFactor common =
      findCommonAxesHeuristic(rows, rule, tensor_sizes, mesh);
  distributeToBatching(rule, mesh, common);
  return common;
}

} // namespace shardlab
