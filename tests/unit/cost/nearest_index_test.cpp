// The k-d tree nearest-neighbour index (KdTreeIndex, used by
// NearestNeighbourInterpolator after BuildIndex) returns exactly the brute
// force linear scan's point: squared Euclidean distance on raw coordinates
// (saturating), ties to the first inserted point, duplicates included.
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/interpolator.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

/// The reference: first point at the smallest distance.
template <size_t N>
size_t BruteForce(const std::vector<GridPoint<N>> &points,
                  const GridPoint<N> &q) {
  size_t best = 0;
  for (size_t i = 1; i < points.size(); ++i)
    if (squaredDistance<N>(points[i], q) < squaredDistance<N>(points[best], q))
      best = i;
  return best;
}

/// `count` points with coordinates drawn by `coord(rng, dim)`; queries the
/// same way; every indexed answer must be the brute-force one.
template <size_t N, class Coord>
void CheckAgainstBruteForce(std::mt19937_64 &rng, size_t count, Coord coord) {
  std::vector<GridPoint<N>> points;
  NearestNeighbourInterpolator<int64_t, N> nn;
  for (size_t i = 0; i < count; ++i) {
    GridPoint<N> p;
    for (size_t d = 0; d < N; ++d)
      p[d] = coord(rng, d);
    if (!points.empty() && rng() % 8 == 0)
      p = points[rng() % points.size()]; // exact duplicate of an earlier one
    points.push_back(p);
    nn.add(p, int64_t(i));
  }
  nn.buildIndex();
  for (int i = 0; i < 300; ++i) {
    GridPoint<N> q;
    for (size_t d = 0; d < N; ++d)
      q[d] = coord(rng, d);
    if (rng() % 4 == 0)
      q = points[rng() % points.size()]; // a stored point: distance 0 ties
    REQUIRE(nn.nearestIndex(q) == BruteForce<N>(points, q));
  }
}

} // namespace

TEST_CASE("k-d tree nearest equals brute force: small coordinates, many "
          "ties and duplicates") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 40; ++round) {
    const int64_t range = int64_t(2 + rng() % 6);
    const size_t count = size_t(16 + rng() % 400);
    CheckAgainstBruteForce<4>(rng, count, [range](std::mt19937_64 &r, size_t) {
      return int64_t(r() % uint64_t(range)) - 1;
    });
    CheckAgainstBruteForce<2>(rng, count, [range](std::mt19937_64 &r, size_t) {
      return int64_t(r() % uint64_t(range * 3));
    });
    CheckAgainstBruteForce<1>(rng, count, [range](std::mt19937_64 &r, size_t) {
      return int64_t(r() % uint64_t(range * 10));
    });
  }
}

TEST_CASE("k-d tree nearest equals brute force: GEMM-like power-of-two "
          "grids, byte-scaled, with random queries between them") {
  std::mt19937_64 rng(12);
  for (int round = 0; round < 20; ++round) {
    CheckAgainstBruteForce<4>(
        rng, size_t(100 + rng() % 900), [](std::mt19937_64 &r, size_t d) {
          if (d == 0)
            return int64_t(1 + r() % 4);
          const int64_t bytes = r() % 2 ? 2 : 4;
          return r() % 3 == 0 ? bytes * int64_t(128 + r() % 8000)
                              : bytes * (int64_t{256} << (r() % 5));
        });
  }
}

TEST_CASE("k-d tree nearest equals brute force: huge coordinates where the "
          "squared distance saturates (all far points tie at INT64_MAX)") {
  std::mt19937_64 rng(13);
  for (int round = 0; round < 20; ++round) {
    CheckAgainstBruteForce<4>(
        rng, size_t(16 + rng() % 300), [](std::mt19937_64 &r, size_t d) {
          const int64_t scale = d % 2 ? int64_t{1} << 42 : int64_t{1} << 30;
          return int64_t(r() % 5) * scale + int64_t(r() % 3);
        });
    CheckAgainstBruteForce<3>(
        rng, size_t(16 + rng() % 300), [](std::mt19937_64 &r, size_t) {
          return r() % 2 ? int64_t(r() % 4) : INT64_MAX - int64_t(r() % 4);
        });
  }
}

TEST_CASE("user-table GEMM estimates read the brute-force nearest profile") {
  PerfTable table;
  std::mt19937_64 rng(14);
  std::vector<GridPoint<4>> scaled;
  for (int i = 0; i < 200; ++i) {
    GemmEntry g;
    g.b = int64_t(1 + rng() % 3);
    g.m = int64_t{256} << (rng() % 4);
    g.k = int64_t{256} << (rng() % 4);
    g.n = int64_t{256} << (rng() % 4);
    g.lhs_dtype = g.rhs_dtype = g.out_dtype = rng() % 2 ? "bf16" : "f32";
    g.flop_per_s = 1e12 * double(1 + i);
    const int64_t s = dtypeBytes(g.out_dtype);
    scaled.push_back({g.b, g.m * s, g.k * s, g.n * s});
    table.gemms.push_back(g);
  }
  auto mi = MatmulInterpolator::create(table, GemmTableKind::UserProfiles,
                                       EstimateMode::Compatible);
  REQUIRE(mi);
  for (int i = 0; i < 300; ++i) {
    GemmQuery q;
    q.dims = {int64_t(1 + rng() % 4), int64_t(128 + rng() % 3000),
              int64_t(128 + rng() % 3000), int64_t(128 + rng() % 3000)};
    q.lhs_dtype = q.rhs_dtype = q.out_dtype = rng() % 2 ? "bf16" : "f32";
    const int64_t s = dtypeBytes(q.out_dtype);
    const GridPoint<4> p = {q.dims.b, q.dims.m * s, q.dims.k * s, q.dims.n * s};
    auto e = mi->estimateTime(q);
    REQUIRE(e);
    REQUIRE(e->explanation.neighbours.size() == 1);
    const size_t want = BruteForce<4>(scaled, p);
    CHECK(e->explanation.neighbours[0].point ==
          std::vector<int64_t>(scaled[want].begin(), scaled[want].end()));
    const double ws = double(dtypeBytes(table.gemms[want].out_dtype));
    CHECK(e->explanation.neighbours[0].value ==
          double(int64_t(table.gemms[want].flop_per_s * ws * ws * ws)));
  }
}
