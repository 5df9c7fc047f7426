// The allocation-free lookup paths (CollectiveInterpolator::Resolve/TimeUs,
// MatmulInterpolator::TimeUs, the precomputed accurate index and the dense
// GEMM grid) give exactly the explained estimates' times.
#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/gemm_model.h"

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

PerfTable BundledTable() {
  auto t = loadPerfTable(std::string(SHARDLAB_SOURCE_DIR) +
                         "/examples/tables/h100_analytical.shardlab.json");
  REQUIRE(t);
  return *t;
}

} // namespace

TEST_CASE("collective TimeUs equals EstimateTime in every mode") {
  const PerfTable table = BundledTable();
  for (EstimateMode mode : {EstimateMode::Compatible, EstimateMode::Accurate})
    for (TableInterpolation interp :
         {TableInterpolation::Nearest, TableInterpolation::GridSnap}) {
      CollectiveInterpolatorOptions options;
      options.mode = mode;
      options.interpolation = interp;
      auto ci = CollectiveInterpolator::create(table, options);
      REQUIRE(ci);
      for (const char *groups :
           {"[4,2]<=[8]", "[1,8]<=[8]", "{{0,1,2},{3,4,5}}"})
        for (int64_t bytes : {int64_t{1}, int64_t{5000}, int64_t{3} << 28}) {
          CollectiveQuery q;
          q.op = CollectiveOp::ReduceScatter;
          q.dtype = "f32";
          q.bytes = bytes;
          q.groups = *parseReplicaGroups(groups);
          auto e = ci->estimateTime(q);
          auto r = ci->resolve(q);
          REQUIRE(e);
          REQUIRE(r);
          CHECK(*ci->timeUs(*r, bytes) == e->time_us);
        }
    }
}

TEST_CASE("the precomputed accurate index matches the per-query build") {
  std::vector<std::pair<GridPoint<2>, double>> pts = {
      {{1024, 2}, 100}, {{4096, 2}, 300}, {{1024, 8}, 50}, {{65536, 8}, 900}};
  const AccurateThroughputIndex index = AccurateThroughputIndex::build(pts);
  for (int64_t bytes : {1, 1024, 2000, 70000})
    for (int64_t devices : {1, 2, 4, 8, 16})
      CHECK(index.throughput(bytes, devices) ==
            accurateThroughput(pts, bytes, devices));
  CHECK(AccurateThroughputIndex::build({}).throughput(10, 2) == 0);
}

TEST_CASE("GEMM TimeUs equals EstimateTime; dense grid equals the map") {
  const PerfTable table = BundledTable();
  for (EstimateMode mode : {EstimateMode::Compatible, EstimateMode::Accurate})
    for (GemmTableKind kind :
         {GemmTableKind::Default, GemmTableKind::UserProfiles}) {
      auto mi = MatmulInterpolator::create(table, kind, mode);
      REQUIRE(mi);
      for (const char *dtype : {"bf16", "f32", "f16"}) {
        GemmQuery q;
        q.dims = {3, 300, 5000, 700};
        q.lhs_dtype = q.rhs_dtype = q.out_dtype = dtype;
        auto e = mi->estimateTime(q);
        REQUIRE(e);
        CHECK(*mi->timeUs(q) == e->time_us);
      }
    }
  WeightedAverageInterpolator<2> dense({{-1, -1}, {1, 1}, {1, 1}, {8, 8}});
  for (int64_t x : {1, 2, 4, 8})
    for (int64_t y : {1, 2, 4, 8})
      dense.add({x, y}, double(x * 10 + y));
  WeightedAverageInterpolator<2> sparse = dense;
  dense.buildIndex();
  for (GridPoint<2> q : {GridPoint<2>{3, 5}, GridPoint<2>{1, 8},
                         GridPoint<2>{100, 0}, GridPoint<2>{6, 6}})
    CHECK(*dense.eval(q) == *sparse.eval(q));
  CHECK(dense.find({2, 4}));
  CHECK_FALSE(dense.find({3, 4}));
}

TEST_CASE("indexed nearest neighbour equals the linear scan, ties included") {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 20; ++round) {
    NearestNeighbourInterpolator<int64_t, 3> linear;
    for (int i = 0; i < 200; ++i)
      linear.add(
          {int64_t(rng() % 9), int64_t(rng() % 50) * 64, int64_t(rng() % 5)},
          i);
    NearestNeighbourInterpolator<int64_t, 3> indexed = linear;
    indexed.buildIndex();
    for (int i = 0; i < 200; ++i) {
      const GridPoint<3> q = {int64_t(rng() % 12) - 2,
                              int64_t(rng() % 3500) - 100, int64_t(rng() % 7)};
      CHECK(indexed.nearestIndex(q) == linear.nearestIndex(q));
    }
  }
}
