// Euclidean interpolators over integer grids, with XLA's exact semantics:
// nearest neighbour (user tables), grid snap / "complement" (default
// collective tables) and weighted average of the 2^N bracket corners (GEMM
// tables). Distances are squared Euclidean on raw coordinates (no scaling).
#pragma once

#include "shardlab/support/result.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardlab::cost {

template <size_t N> using GridPoint = std::array<int64_t, N>;

/// Squared Euclidean distance on raw coordinates (XLA's Norm2). Where
/// XLA's int64 arithmetic would overflow, saturates at INT64_MAX.
template <size_t N>
int64_t squaredDistance(const GridPoint<N> &a, const GridPoint<N> &b) {
  constexpr uint64_t kMaxDiff = 3037000499u; // floor(sqrt(INT64_MAX))
  constexpr uint64_t kMax = uint64_t(INT64_MAX);
  uint64_t dist = 0;
  for (size_t i = 0; i < N; ++i) {
    const uint64_t d = a[i] > b[i] ? uint64_t(a[i]) - uint64_t(b[i])
                                   : uint64_t(b[i]) - uint64_t(a[i]);
    if (d > kMaxDiff)
      return INT64_MAX;
    dist += d * d;
    if (dist > kMax)
      return INT64_MAX;
  }
  return int64_t(dist);
}

/// `v` truncated toward zero to int64 (XLA's static_cast), saturating at
/// the int64 range instead of undefined behaviour; NaN gives 0.
inline int64_t saturatingInt64(double v) {
  if (!(v == v))
    return 0;
  if (v >= 9223372036854775807.0)
    return INT64_MAX;
  if (v <= -9223372036854775807.0)
    return INT64_MIN;
  return static_cast<int64_t>(v);
}

/// Smallest power of two >= n (1 for n <= 1).
int64_t nextPowerOfTwo(int64_t n);
/// XLA's PrevPowerOfTwo: nextPowerOfTwo((n >> 1) + 1).
int64_t prevPowerOfTwo(int64_t n);

std::string pointToString(const int64_t *coords, size_t n);
template <size_t N> std::string pointToString(const GridPoint<N> &p) {
  return pointToString(p.data(), N);
}

/// Per-dimension snapping contexts. A dimension uses a step grid when
/// next_step[d] > 0, a power-of-two grid when next_pow2[d] > 0, and is left
/// as is otherwise; the result is clamped to [min, max].
template <size_t N> struct GridContext {
  GridPoint<N> next_step{};
  GridPoint<N> next_pow2{};
  GridPoint<N> min{};
  GridPoint<N> max{};
};

/// The lower and upper grid candidates of x in one dimension (unclamped).
std::pair<int64_t, int64_t> gridBracket(int64_t x, int64_t step, int64_t pow2);

/// Exact nearest-neighbour index: a k-d tree over distinct points (of equal
/// points only the first inserted is kept) with a bounding box per node.
/// A node splits its widest dimension between two distinct coordinates near
/// the median (at the median itself when that would leave a side under a
/// quarter, so the depth stays logarithmic); leaves hold up to 8 points. The
/// search visits the nearer child first and skips a subtree whose box is
/// farther than the best distance so far, or as far with no point inserted
/// before the best one, so it returns the linear scan's point: the nearest,
/// ties to the smallest index.
template <size_t N> class KdTreeIndex {
public:
  /// Indexes points[i].first as index i (after the last change to points).
  template <class P> void build(const std::vector<P> &points) {
    items_.clear();
    nodes_.clear();
    std::map<GridPoint<N>, size_t> first;
    for (size_t i = 0; i < points.size(); ++i)
      if (first.emplace(points[i].first, i).second)
        items_.push_back({points[i].first, i});
    if (!items_.empty())
      buildNode(0, items_.size());
  }
  bool empty() const { return nodes_.empty(); }
  /// Index of the nearest point; the index must not be empty.
  size_t nearest(const GridPoint<N> &q) const {
    Best best;
    search(0, q, best);
    return best.index;
  }

private:
  static constexpr size_t kLeafSize = 8;
  struct Item {
    GridPoint<N> point;
    size_t index;
  };
  struct Node {
    size_t begin = 0, end = 0; // items in the subtree
    size_t min_index = 0;      // smallest point index in the subtree
    size_t right = 0; // right child (the left one follows the node); 0: leaf
    GridPoint<N> lo{}, hi{}; // bounding box of the subtree's points
  };
  struct Best {
    size_t index = SIZE_MAX;
    int64_t dist = INT64_MAX;
  };

  void buildNode(size_t begin, size_t end) {
    const size_t id = nodes_.size();
    nodes_.push_back(boxOf(begin, end));
    if (end - begin <= kLeafSize)
      return;
    const size_t mid = splitPoint(id);
    buildNode(begin, mid);
    nodes_[id].right = nodes_.size();
    buildNode(mid, end);
  }
  Node boxOf(size_t begin, size_t end) const {
    Node n;
    n.begin = begin;
    n.end = end;
    n.min_index = items_[begin].index;
    n.lo = n.hi = items_[begin].point;
    for (size_t i = begin; i < end; ++i) {
      n.min_index = std::min(n.min_index, items_[i].index);
      for (size_t d = 0; d < N; ++d) {
        n.lo[d] = std::min(n.lo[d], items_[i].point[d]);
        n.hi[d] = std::max(n.hi[d], items_[i].point[d]);
      }
    }
    return n;
  }
  /// Sorts the node's items along its widest dimension; returns where the
  /// right child starts.
  size_t splitPoint(size_t id) {
    const Node &n = nodes_[id];
    size_t dim = 0;
    for (size_t d = 1; d < N; ++d)
      if (uint64_t(n.hi[d]) - uint64_t(n.lo[d]) >
          uint64_t(n.hi[dim]) - uint64_t(n.lo[dim]))
        dim = d;
    const size_t begin = n.begin, end = n.end, size = end - begin;
    std::sort(items_.begin() + begin, items_.begin() + end,
              [dim](const Item &a, const Item &b) {
                return a.point[dim] < b.point[dim];
              });
    const auto differs = [&](size_t i) {
      return items_[i - 1].point[dim] != items_[i].point[dim];
    };
    const size_t mid = begin + size / 2;
    for (size_t step = 0; step <= size / 4; ++step) {
      if (differs(mid - step))
        return mid - step;
      if (mid + step < end && differs(mid + step))
        return mid + step;
    }
    return mid;
  }
  /// Squared distance from q to the node's box: no point in it is nearer.
  static int64_t boxDistance(const Node &n, const GridPoint<N> &q) {
    GridPoint<N> c;
    for (size_t d = 0; d < N; ++d)
      c[d] = std::clamp(q[d], n.lo[d], n.hi[d]);
    return squaredDistance<N>(q, c);
  }
  static bool mayImprove(const Node &n, int64_t bound, const Best &best) {
    return bound < best.dist ||
           (bound == best.dist && n.min_index < best.index);
  }
  /// Visits the child with the nearer box first, each only if it may hold
  /// a better point than the best so far.
  void search(size_t id, const GridPoint<N> &q, Best &best) const {
    const Node &n = nodes_[id];
    if (n.right == 0) {
      for (size_t i = n.begin; i < n.end; ++i)
        consider(items_[i], q, best);
      return;
    }
    size_t a = id + 1, b = n.right;
    int64_t bound_a = boxDistance(nodes_[a], q);
    int64_t bound_b = boxDistance(nodes_[b], q);
    if (bound_b < bound_a) {
      std::swap(a, b);
      std::swap(bound_a, bound_b);
    }
    if (mayImprove(nodes_[a], bound_a, best))
      search(a, q, best);
    if (mayImprove(nodes_[b], bound_b, best))
      search(b, q, best);
  }
  static void consider(const Item &item, const GridPoint<N> &q, Best &best) {
    const int64_t d = squaredDistance<N>(item.point, q);
    if (d < best.dist || (d == best.dist && item.index < best.index)) {
      best.dist = d;
      best.index = item.index;
    }
  }

  std::vector<Item> items_; // distinct points, in tree order
  std::vector<Node> nodes_; // preorder; node 0 is the root
};

/// Nearest neighbour: the first inserted point wins ties. A linear scan,
/// or after BuildIndex an exact k-d tree search (same result).
template <class R, size_t N> class NearestNeighbourInterpolator {
public:
  void add(const GridPoint<N> &p, R value) {
    points_.push_back({p, value});
    index_ = {};
  }
  bool empty() const { return points_.empty(); }
  const std::vector<std::pair<GridPoint<N>, R>> &points() const {
    return points_;
  }
  /// Builds the k-d tree (after the last Add); small tables stay linear.
  void buildIndex() {
    if (points_.size() >= 16)
      index_.build(points_);
  }
  /// Index of the nearest point; points() must not be empty.
  size_t nearestIndex(const GridPoint<N> &q) const {
    return index_.empty() ? linearNearest(q) : index_.nearest(q);
  }
  std::optional<R> eval(const GridPoint<N> &q) const {
    if (points_.empty())
      return std::nullopt;
    return points_[nearestIndex(q)].second;
  }

private:
  size_t linearNearest(const GridPoint<N> &q) const {
    size_t best = 0;
    int64_t best_dist = squaredDistance<N>(points_[0].first, q);
    for (size_t i = 1; i < points_.size(); ++i) {
      const int64_t d = squaredDistance<N>(points_[i].first, q);
      if (d < best_dist) {
        best_dist = d;
        best = i;
      }
    }
    return best;
  }

  std::vector<std::pair<GridPoint<N>, R>> points_;
  KdTreeIndex<N> index_; // built by BuildIndex
};

/// Which of XLA's two grid-snap revisions to follow.
enum class SnapRule {
  /// Snap each coordinate to its grid (ties to the larger candidate), clamp,
  /// look up exactly, else fall back to nearest neighbour.
  GridThenNearest,
  /// Per dimension in order, snap to the nearest stored coordinate among the
  /// points sharing the already-snapped prefix (ties to the larger one).
  StoredCoordinate,
};

/// Grid snap ("EuclideanComplementInterpolator"). A later point with the same
/// coordinates overwrites the earlier one in the exact map.
template <class R, size_t N> class GridSnapInterpolator {
public:
  GridSnapInterpolator(GridContext<N> context, SnapRule rule)
      : context_(context), rule_(rule) {}
  void add(const GridPoint<N> &p, R value) {
    nearest_.add(p, value);
    exact_[p] = value;
  }
  bool empty() const { return exact_.empty(); }
  /// The stored point a query resolves to and its value.
  std::optional<std::pair<GridPoint<N>, R>>
  lookup(const GridPoint<N> &q) const {
    if (exact_.empty())
      return std::nullopt;
    if (rule_ == SnapRule::StoredCoordinate) {
      const GridPoint<N> p = snapToStored(q);
      return std::make_pair(p, exact_.at(p));
    }
    auto it = exact_.find(snapToGrid(q));
    if (it != exact_.end())
      return *it;
    return nearest_.points()[nearest_.nearestIndex(q)];
  }
  std::optional<R> eval(const GridPoint<N> &q) const {
    auto hit = lookup(q);
    if (!hit)
      return std::nullopt;
    return hit->second;
  }

private:
  GridPoint<N> snapToGrid(const GridPoint<N> &q) const {
    GridPoint<N> out = q;
    for (size_t d = 0; d < N; ++d) {
      auto [lo, hi] =
          gridBracket(q[d], context_.next_step[d], context_.next_pow2[d]);
      int64_t v = (q[d] - lo < hi - q[d]) ? lo : hi;
      if (v < context_.min[d])
        v = context_.min[d];
      if (v > context_.max[d])
        v = context_.max[d];
      out[d] = v;
    }
    return out;
  }
  GridPoint<N> snapToStored(const GridPoint<N> &q) const {
    GridPoint<N> out = q;
    for (size_t d = 0; d < N; ++d) {
      bool found = false;
      int64_t best = 0;
      for (const auto &[p, value] : exact_) {
        if (!sharesPrefix(p, out, d))
          continue;
        const int64_t dist = p[d] > q[d] ? p[d] - q[d] : q[d] - p[d];
        const int64_t best_dist = best > q[d] ? best - q[d] : q[d] - best;
        if (!found || dist < best_dist || (dist == best_dist && p[d] > best))
          best = p[d];
        found = true;
      }
      out[d] = best;
    }
    return out;
  }
  static bool sharesPrefix(const GridPoint<N> &a, const GridPoint<N> &b,
                           size_t len) {
    for (size_t i = 0; i < len; ++i)
      if (a[i] != b[i])
        return false;
    return true;
  }

  GridContext<N> context_;
  SnapRule rule_;
  NearestNeighbourInterpolator<R, N> nearest_;
  std::map<GridPoint<N>, R> exact_;
};

/// One corner used by a weighted-average evaluation (for explanations).
template <size_t N> struct WeightedCorner {
  GridPoint<N> point;
  double value;
  float weight;
};

/// Weighted average of the 2^N bracket corners, weight 1/(d^2 + 1) in
/// float32, duplicates kept. Every corner must be stored (full grid).
template <size_t N> class WeightedAverageInterpolator {
public:
  explicit WeightedAverageInterpolator(GridContext<N> context)
      : context_(context) {}
  void add(const GridPoint<N> &p, double value) {
    values_[p] = value;
    coords_ = {};
    dense_.clear();
  }
  bool empty() const { return values_.empty(); }
  const std::map<GridPoint<N>, double> &values() const { return values_; }

  /// Builds a dense array over the distinct coordinates of each dimension
  /// (after the last Add) when the points nearly fill that grid, so corner
  /// lookups are a few binary searches instead of map walks.
  void buildIndex() {
    std::array<std::vector<int64_t>, N> coords;
    for (const auto &[p, value] : values_)
      for (size_t d = 0; d < N; ++d)
        coords[d].push_back(p[d]);
    size_t cells = 1;
    for (auto &c : coords) {
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
      if (c.empty() || cells > (values_.size() * 2 + 64) / c.size())
        return; // sparse: keep the map
      cells *= c.size();
    }
    coords_ = std::move(coords);
    dense_.assign(cells, {0.0, false});
    for (const auto &[p, value] : values_)
      dense_[*denseIndex(p)] = {value, true};
  }

  /// The value stored at `p`, or nullptr.
  const double *find(const GridPoint<N> &p) const {
    if (!dense_.empty()) {
      const std::optional<size_t> i = denseIndex(p);
      return i && dense_[*i].second ? &dense_[*i].first : nullptr;
    }
    auto it = values_.find(p);
    return it == values_.end() ? nullptr : &it->second;
  }

  Result<double> eval(const GridPoint<N> &q,
                      std::vector<WeightedCorner<N>> *corners = nullptr) const {
    std::array<std::pair<int64_t, int64_t>, N> bracket;
    for (size_t d = 0; d < N; ++d)
      bracket[d] = clampedBracket(q[d], d);
    double sum = 0.0;
    double weight_sum = 0.0;
    for (size_t mask = 0; mask < (size_t{1} << N); ++mask) {
      GridPoint<N> c;
      for (size_t d = 0; d < N; ++d)
        c[d] = (mask >> d) & 1 ? bracket[d].second : bracket[d].first;
      const double *value = find(c);
      if (!value)
        return makeError("table has no entry at grid corner " +
                         pointToString<N>(c) + " needed for query " +
                         pointToString<N>(q) + " (a full grid is required)");
      const float weight =
          1.0f / (static_cast<float>(squaredDistance<N>(c, q)) + 1.0f);
      sum += *value * weight;
      weight_sum += weight;
      if (corners)
        corners->push_back({c, *value, weight});
    }
    return sum / weight_sum;
  }

private:
  std::pair<int64_t, int64_t> clampedBracket(int64_t x, size_t d) const {
    int64_t lo = x;
    int64_t hi = x;
    if (context_.next_pow2[d] > 0) {
      lo = prevPowerOfTwo(x);
      hi = nextPowerOfTwo(x);
    } else if (context_.next_step[d] > 0) {
      std::tie(lo, hi) = gridBracket(x, context_.next_step[d], 0);
    }
    return {clamp(lo, d), clamp(hi, d)};
  }
  int64_t clamp(int64_t v, size_t d) const {
    if (v < context_.min[d])
      return context_.min[d];
    if (v > context_.max[d])
      return context_.max[d];
    return v;
  }

  std::optional<size_t> denseIndex(const GridPoint<N> &p) const {
    size_t index = 0;
    for (size_t d = 0; d < N; ++d) {
      const std::vector<int64_t> &c = coords_[d];
      auto it = std::lower_bound(c.begin(), c.end(), p[d]);
      if (it == c.end() || *it != p[d])
        return std::nullopt;
      index = index * c.size() + size_t(it - c.begin());
    }
    return index;
  }

  GridContext<N> context_;
  std::map<GridPoint<N>, double> values_;
  std::array<std::vector<int64_t>, N> coords_; // distinct, ascending
  std::vector<std::pair<double, bool>> dense_; // (value, present)
};

} // namespace shardlab::cost
