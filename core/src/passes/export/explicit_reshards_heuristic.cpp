// Shardy's findCommonAxesHeuristic: every prefix of every factor sharding is
// a candidate, scored by the total size of the tensors it already shards,
// then the factor kind, then the sharding size; the best is taken, the
// others are cut so they no longer overlap it, until none is left. A factor
// that follows another in a dimension waits until that one is full.
#include "explicit_reshards_util.h"
#include "export_passes.h"

#include "propagation/projection.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace shardlab {

namespace {

using Rows = std::vector<const TensorFactorShardings *>;

struct Candidate {
  int64_t factor = -1;
  std::vector<AxisRef> axes;
  int64_t source_size = 0;
  int64_t precedence = 0;
  int64_t sharding_size = 0;
};

bool axesLess(const std::vector<AxisRef> &a, const std::vector<AxisRef> &b) {
  if (a.size() != b.size())
    return a.size() < b.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i]))
      return axisRefLess(a[i], b[i]);
  return false;
}

bool candidateLess(const Candidate &a, const Candidate &b) {
  auto key = [](const Candidate &c) {
    return std::make_tuple(c.source_size, c.precedence, c.sharding_size,
                           c.factor);
  };
  if (key(a) != key(b))
    return key(a) < key(b);
  return axesLess(a.axes, b.axes);
}

// `a` starts `b`, its last axis possibly a sub-axis prefix of `b`'s
// ("x":(1)2 starts "x"), as Shardy's prefix test has it.
bool isStrictAxesPrefix(const std::vector<AxisRef> &a,
                        const std::vector<AxisRef> &b) {
  return isStrictPrefix(a, b);
}

int64_t precedenceOf(const OpShardingRule &rule, int64_t factor) {
  auto has = [&](const std::vector<int64_t> &list) {
    return std::find(list.begin(), list.end(), factor) != list.end();
  };
  if (has(rule.need_replication))
    return 0;
  if (has(rule.permutation))
    return 1;
  if (has(rule.reduction))
    return 2;
  return 3;
}

std::vector<Candidate> collectCandidates(const Rows &rows,
                                         const OpShardingRule &rule,
                                         const std::vector<int64_t> &sizes,
                                         const Mesh &mesh) {
  std::vector<Candidate> candidates;
  auto known = [&](int64_t f, const std::vector<AxisRef> &axes) {
    for (const Candidate &c : candidates)
      if (c.factor == f && c.axes == axes)
        return true;
    return false;
  };
  for (const TensorFactorShardings *row : rows)
    for (size_t f = 0; f < row->factors.size(); ++f) {
      if (!row->factors[f].present)
        continue;
      std::vector<AxisRef> axes = row->factors[f].axes;
      for (; !axes.empty(); axes.pop_back())
        if (!known(f, axes))
          candidates.push_back({static_cast<int64_t>(f), axes, 0,
                                precedenceOf(rule, f),
                                axesTotalSize(axes, mesh)});
    }
  for (size_t t = 0; t < rows.size(); ++t)
    for (size_t f = 0; f < rows[t]->factors.size(); ++f)
      if (rows[t]->factors[f].present)
        for (Candidate &c : candidates)
          if (c.factor == static_cast<int64_t>(f) &&
              (c.axes == rows[t]->factors[f].axes ||
               isStrictAxesPrefix(c.axes, rows[t]->factors[f].axes)))
            c.source_size += sizes[t];
  return candidates;
}

// factor -> the factors right before it in some dimension.
std::map<int64_t, std::vector<int64_t>>
factorDependencies(const OpShardingRule &rule) {
  std::map<int64_t, std::vector<int64_t>> deps;
  for (const auto *list : {&rule.operands, &rule.results})
    for (const auto &mapping : *list)
      for (const auto &dim : mapping)
        for (size_t i = 1; i < dim.size(); ++i)
          deps[dim[i]].push_back(dim[i - 1]);
  return deps;
}

// Updates the other candidates after `best` was chosen.
void refine(std::vector<Candidate> &candidates, const Candidate &best,
            const AxesPerFactor &chosen, const Mesh &mesh) {
  for (size_t i = 0; i < candidates.size();) {
    Candidate &c = candidates[i];
    const std::vector<AxisRef> &base = chosen[c.factor];
    bool drop = false;
    if (c.factor == best.factor)
      drop = !isStrictAxesPrefix(best.axes, c.axes);
    else if (truncateWithoutOverlap(c.axes, best.axes))
      drop = c.axes == base;
    if (drop) {
      candidates[i] = candidates.back();
      candidates.pop_back();
      continue;
    }
    c.sharding_size = axesTotalSize(c.axes, mesh) /
                      std::max<int64_t>(1, axesTotalSize(base, mesh));
    ++i;
  }
}

} // namespace

AxesPerFactor findCommonAxesHeuristic(const Rows &rows,
                                      const OpShardingRule &rule,
                                      const std::vector<int64_t> &sizes,
                                      const Mesh &mesh) {
  AxesPerFactor chosen(rule.factor_sizes.size());
  std::vector<Candidate> candidates =
      collectCandidates(rows, rule, sizes, mesh);
  std::map<int64_t, std::vector<int64_t>> deps = factorDependencies(rule);
  while (!candidates.empty()) {
    const Candidate *best = nullptr;
    for (const Candidate &c : candidates)
      if ((!deps.count(c.factor) || deps[c.factor].empty()) &&
          (!best || candidateLess(*best, c)))
        best = &c;
    if (!best)
      break;
    Candidate picked = *best;
    chosen[picked.factor] = picked.axes;
    if (axesTotalSize(picked.axes, mesh) == rule.factor_sizes[picked.factor])
      for (auto &entry : deps)
        entry.second.erase(std::remove(entry.second.begin(), entry.second.end(),
                                       picked.factor),
                           entry.second.end());
    refine(candidates, picked, chosen, mesh);
  }
  return chosen;
}

} // namespace shardlab
