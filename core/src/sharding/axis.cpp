// Axis algebra on AxisRef values (see axis.h).
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <climits>

namespace shardlab {

AxisRef fullAxis(const AxisName &name) { return AxisRef{name, {}}; }

AxisRef subAxis(const AxisName &name, int64_t pre_size, int64_t size) {
  return AxisRef{name, SubAxisInfo{pre_size, size}};
}

int64_t axisRefSize(const AxisRef &axis, const Mesh &mesh) {
  if (axis.sub) {
    return axis.sub->size;
  }
  return mesh.axisSize(axis.name).value_or(1);
}

int64_t subAxisPreSize(const AxisRef &axis) {
  return axis.sub ? axis.sub->pre_size : 1;
}

int64_t nextPreSizeOrFullSize(const AxisRef &axis, const Mesh &mesh) {
  if (axis.sub) {
    return axis.sub->pre_size * axis.sub->size;
  }
  return axisRefSize(axis, mesh);
}

int64_t axesTotalSize(const std::vector<AxisRef> &axes, const Mesh &mesh) {
  int64_t total = 1;
  for (const AxisRef &axis : axes) {
    total *= axisRefSize(axis, mesh);
  }
  return total;
}

bool axisRefLess(const AxisRef &lhs, const AxisRef &rhs) {
  if (lhs.name != rhs.name) {
    return lhs.name < rhs.name;
  }
  if (!lhs.sub) {
    return subAxisPreSize(rhs) > 1;
  }
  if (!rhs.sub) {
    return lhs.sub->pre_size == 1;
  }
  if (lhs.sub->pre_size != rhs.sub->pre_size) {
    return lhs.sub->pre_size < rhs.sub->pre_size;
  }
  return lhs.sub->size < rhs.sub->size;
}

namespace {

int meshRank(const Mesh &mesh, std::string_view name) {
  int index = mesh.axisIndex(name);
  return index < 0 ? INT_MAX : index;
}

int64_t nextPreSize(const SubAxisInfo &info) {
  return info.pre_size * info.size;
}

// Whether two sub-axes [minPre, minNext) / [maxPre, maxNext), given by their
// sorted pre-sizes and next pre-sizes, are consistent splits of one axis.
bool canSubAxesCoexist(int64_t minPre, int64_t maxPre, int64_t minNext,
                       int64_t maxNext) {
  if (minNext > maxPre) {
    return minNext % maxPre == 0 && maxPre % minPre == 0 &&
           maxNext % minNext == 0;
  }
  return maxPre % minNext == 0;
}

} // namespace

bool meshAxisLess(const Mesh &mesh, const AxisRef &lhs, const AxisRef &rhs) {
  if (lhs.name == rhs.name) {
    return axisRefLess(lhs, rhs);
  }
  int lhsRank = meshRank(mesh, lhs.name);
  int rhsRank = meshRank(mesh, rhs.name);
  if (lhsRank != rhsRank) {
    return lhsRank < rhsRank;
  }
  return lhs.name < rhs.name;
}

bool contains(const AxisRef &a, const AxisRef &b) {
  if (a.name != b.name) {
    return false;
  }
  if (!a.sub) {
    return true;
  }
  if (!b.sub) {
    return false;
  }
  return a.sub->pre_size <= b.sub->pre_size &&
         nextPreSize(*a.sub) >= nextPreSize(*b.sub);
}

bool strictlyContains(const AxisRef &a, const AxisRef &b) {
  return !(a == b) && contains(a, b);
}

bool prefixOf(const AxisRef &a, const AxisRef &b) {
  return contains(b, a) && subAxisPreSize(a) == subAxisPreSize(b);
}

bool strictPrefixOf(const AxisRef &a, const AxisRef &b) {
  return !(a == b) && prefixOf(a, b);
}

bool suffixOf(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  return contains(b, a) &&
         nextPreSizeOrFullSize(a, mesh) == nextPreSizeOrFullSize(b, mesh);
}

bool strictSuffixOf(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  return !(a == b) && suffixOf(a, b, mesh);
}

bool overlaps(const AxisRef &a, const AxisRef &b) {
  if (a.name != b.name) {
    return false;
  }
  if (!a.sub || !b.sub) {
    return true;
  }
  return a.sub->pre_size < nextPreSize(*b.sub) &&
         b.sub->pre_size < nextPreSize(*a.sub);
}

bool canCoexist(const AxisRef &a, const AxisRef &b) {
  if (a.name != b.name || !a.sub || !b.sub) {
    return true;
  }
  const int64_t minPre = std::min<int64_t>(a.sub->pre_size, b.sub->pre_size);
  const int64_t maxPre = std::max<int64_t>(a.sub->pre_size, b.sub->pre_size);
  const int64_t minNext =
      std::min<int64_t>(nextPreSize(*a.sub), nextPreSize(*b.sub));
  const int64_t maxNext =
      std::max<int64_t>(nextPreSize(*a.sub), nextPreSize(*b.sub));
  return canSubAxesCoexist(minPre, maxPre, minNext, maxNext);
}

std::optional<AxisRef> getOverlap(const AxisRef &a, const AxisRef &b) {
  if (a.name != b.name) {
    return std::nullopt;
  }
  if (!a.sub) {
    return b;
  }
  if (!b.sub) {
    return a;
  }
  const int64_t minPre = std::min<int64_t>(a.sub->pre_size, b.sub->pre_size);
  const int64_t maxPre = std::max<int64_t>(a.sub->pre_size, b.sub->pre_size);
  const int64_t minNext =
      std::min<int64_t>(nextPreSize(*a.sub), nextPreSize(*b.sub));
  const int64_t maxNext =
      std::max<int64_t>(nextPreSize(*a.sub), nextPreSize(*b.sub));
  if (minNext <= maxPre ||
      !canSubAxesCoexist(minPre, maxPre, minNext, maxNext)) {
    return std::nullopt;
  }
  return subAxis(a.name, maxPre, minNext / maxPre);
}

std::optional<AxisRef> getPrefixWithoutOverlap(const AxisRef &a,
                                               const AxisRef &b) {
  if (!canCoexist(a, b)) {
    return std::nullopt;
  }
  if (!overlaps(a, b)) {
    return a;
  }
  int64_t aPre = subAxisPreSize(a);
  int64_t bPre = subAxisPreSize(b);
  if (aPre >= bPre) {
    return std::nullopt;
  }
  return subAxis(a.name, aPre, bPre / aPre);
}

std::optional<AxisRef>
getSuffixWithoutOverlap(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  if (!canCoexist(a, b)) {
    return std::nullopt;
  }
  if (!overlaps(a, b)) {
    return a;
  }
  int64_t aNext = nextPreSizeOrFullSize(a, mesh);
  int64_t bNext = nextPreSizeOrFullSize(b, mesh);
  if (aNext <= bNext) {
    return std::nullopt;
  }
  return subAxis(a.name, bNext, aNext / bNext);
}

std::optional<AxisRef> getGreatestCommonPrefix(const AxisRef &a,
                                               const AxisRef &b) {
  if (!canCoexist(a, b)) {
    return std::nullopt;
  }
  if (prefixOf(a, b)) {
    return a;
  }
  if (prefixOf(b, a)) {
    return b;
  }
  return std::nullopt;
}

bool canMerge(const AxisRef &a, const AxisRef &b) {
  if (a.name != b.name || !a.sub || !b.sub) {
    return false;
  }
  return nextPreSize(*a.sub) == b.sub->pre_size;
}

AxisRef merge(const AxisRef &a, const AxisRef &b, const Mesh &mesh) {
  if (!canMerge(a, b)) {
    return a;
  }
  int64_t size = a.sub->size * b.sub->size;
  if (a.sub->pre_size == 1 && mesh.axisSize(a.name) == size) {
    return fullAxis(a.name);
  }
  return subAxis(a.name, a.sub->pre_size, size);
}

void addAxisOrMerge(std::vector<AxisRef> &axes, const AxisRef &axis,
                    const Mesh &mesh) {
  if (!axes.empty() && canMerge(axes.back(), axis)) {
    axes.back() = merge(axes.back(), axis, mesh);
  } else {
    axes.push_back(axis);
  }
}

void sortAxes(std::vector<AxisRef> &axes, const Mesh &mesh) {
  std::stable_sort(axes.begin(), axes.end(), MeshAxisOrder{&mesh});
}

void sortAndMergeAxes(std::vector<AxisRef> &axes, const Mesh &mesh) {
  sortAxes(axes, mesh);
  std::vector<AxisRef> merged;
  merged.reserve(axes.size());
  for (const AxisRef &axis : axes) {
    addAxisOrMerge(merged, axis, mesh);
  }
  axes = std::move(merged);
}

namespace {

// First axis of `sorted` (name order, pairwise disjoint) overlapping `axis`.
const AxisRef *firstOverlapping(const AxisRef &axis,
                                const std::vector<AxisRef> &sorted) {
  auto after =
      std::lower_bound(sorted.begin(), sorted.end(), axis, axisRefLess);
  if (after != sorted.begin() && overlaps(axis, *std::prev(after))) {
    return &*std::prev(after);
  }
  if (after != sorted.end() && overlaps(axis, *after)) {
    return &*after;
  }
  return nullptr;
}

} // namespace

std::vector<AxisRef> getAxisSetDiff(const std::vector<AxisRef> &a,
                                    const std::vector<AxisRef> &b,
                                    const Mesh &mesh) {
  if (a.empty() || a == b) {
    return {};
  }
  std::vector<AxisRef> sortedB = b;
  std::sort(sortedB.begin(), sortedB.end(), axisRefLess);
  std::vector<AxisRef> result;
  for (const AxisRef &axisA : a) {
    std::optional<AxisRef> rest = axisA;
    while (rest) {
      const AxisRef *hit = firstOverlapping(*rest, sortedB);
      if (!hit) {
        result.push_back(*rest);
        break;
      }
      if (auto prefix = getPrefixWithoutOverlap(*rest, *hit)) {
        result.push_back(*prefix);
      }
      rest = getSuffixWithoutOverlap(*rest, *hit, mesh);
    }
  }
  return result;
}

} // namespace shardlab
