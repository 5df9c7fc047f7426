// Collective interpolator: exact vs fallback keys, quirks, accurate mode.
#include "shardlab/cost/collective_model.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

CollectiveEntry Entry(const char *op, const char *groups, int64_t bytes,
                      double throughput) {
  CollectiveEntry e;
  e.op = op;
  e.dtype = "f32";
  e.replica_groups = *parseReplicaGroups(groups);
  e.devices_per_group = e.replica_groups->group_size();
  e.comm_type = *classifyCommType(*e.replica_groups, 8);
  e.bytes = bytes;
  e.throughput_bytes_per_s = throughput;
  return e;
}

CollectiveQuery Query(CollectiveOp op, const char *groups, int64_t bytes) {
  CollectiveQuery q;
  q.op = op;
  q.dtype = "f32";
  q.groups = *parseReplicaGroups(groups);
  q.bytes = bytes;
  return q;
}

PerfTable Table() {
  PerfTable t;
  t.metadata.source = "analytical";
  t.collectives = {Entry("all-reduce", "[1,8]<=[8]", 1024, 1e6),
                   Entry("all-reduce", "[1,8]<=[8]", 1 << 20, 1e9),
                   Entry("all-reduce", "[2,4]<=[8]", 1024, 5e5),
                   Entry("all-reduce", "[2,4]<=[8]", 1 << 20, 5e8)};
  return t;
}

} // namespace

TEST_CASE("byte conventions per collective") {
  const CollectiveShapes s{100, 800};
  CHECK(bytesTransferred(CollectiveOp::AllGather, s) == 800);
  CHECK(bytesTransferred(CollectiveOp::ReduceScatter, {800, 100}) == 800);
  CHECK(bytesTransferred(CollectiveOp::CollectivePermuteStart, s) == 100);
  CHECK(hbmBytesAccessed(CollectiveOp::AllGatherStart, {50, 800}, 16) ==
        50 * 31 + 50 * 16);
}

TEST_CASE("exact key hit: time is bytes / throughput") {
  auto ci = CollectiveInterpolator::create(Table(), {});
  REQUIRE(ci);
  auto e = ci->estimateTime(Query(CollectiveOp::AllReduce, "[1,8]<=[8]", 2048));
  REQUIRE(e);
  CHECK(e->time_us == doctest::Approx(2048 / 1e6 * 1e6));
  CHECK(e->explanation.model == "collective-table/exact");
}

TEST_CASE("async starts miss the exact map and use the fallback") {
  auto ci = CollectiveInterpolator::create(Table(), {});
  auto e =
      ci->estimateTime(Query(CollectiveOp::AllReduceStart, "[1,8]<=[8]", 2048));
  REQUIRE(e);
  CHECK(e->explanation.model == "collective-table/fallback");
  // nearest (bytes, devices) to (2048, 8) is (1024, 8) at 1e6 B/s.
  CHECK(e->time_us == doctest::Approx(2048 / 1e6 * 1e6));
  // With 4 devices per group the (1024, 4) entry at 5e5 B/s wins.
  auto four =
      ci->estimateTime(Query(CollectiveOp::AllReduceStart, "[2,4]<=[8]", 2048));
  CHECK(four->time_us == doctest::Approx(2048 / 5e5 * 1e6));
}

TEST_CASE("a message past the table's largest is costed at its throughput") {
  auto ci = CollectiveInterpolator::create(Table(), {});
  REQUIRE(ci);
  // 4 GB: in raw coordinates every squared distance overflows int64, so
  // all points would tie and the first, (1024, 8) at 1e6 B/s, would win
  // (4,000 s); the largest message measured, 1 MiB at 1e9 B/s, is what a
  // bandwidth-bound message of 4 GB runs at.
  const int64_t huge = int64_t(4) << 30;
  for (CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllReduceStart}) {
    auto e = ci->estimateTime(Query(op, "[1,8]<=[8]", huge));
    REQUIRE(e);
    CHECK(e->time_us == doctest::Approx(huge / 1e9 * 1e6));
    CHECK(e->explanation.extrapolated ==
          "4294967296 B > 1048576 B, the largest");
  }
  // Past the largest message but short of the overflow, XLA's nearest
  // point is the same one; inside the table nothing is extrapolated.
  auto near = ci->estimateTime(
      Query(CollectiveOp::AllReduceStart, "[1,8]<=[8]", 4 << 20));
  CHECK(near->time_us == doctest::Approx((4 << 20) / 1e9 * 1e6));
  CHECK(near->explanation.extrapolated == "4194304 B > 1048576 B, the largest");
  auto inside =
      ci->estimateTime(Query(CollectiveOp::AllReduce, "[1,8]<=[8]", 2048));
  CHECK(inside->explanation.extrapolated.empty());
}

TEST_CASE("missing keys are errors") {
  auto ci = CollectiveInterpolator::create(Table(), {});
  CHECK_FALSE(
      ci->estimateTime(Query(CollectiveOp::AllGather, "[1,8]<=[8]", 1024)));
  CollectiveQuery permute;
  permute.op = CollectiveOp::CollectivePermute;
  permute.pairs = {{0, 1}};
  permute.bytes = 10;
  CHECK_FALSE(ci->estimateTime(permute));
  CHECK_FALSE(
      ci->estimateTime(Query(CollectiveOp::AllReduce, "[1,8]<=[8]", 0)));
}

TEST_CASE("accurate mode: monotone, saturating, constant time below range") {
  CollectiveInterpolatorOptions opts;
  opts.mode = EstimateMode::Accurate;
  auto ci = CollectiveInterpolator::create(Table(), opts);
  auto at = [&](int64_t bytes) {
    return ci->estimateTime(Query(CollectiveOp::AllReduce, "[1,8]<=[8]", bytes))
        ->time_us;
  };
  CHECK(at(512) == doctest::Approx(at(1024)));            // latency floor
  CHECK(at(4 << 20) == doctest::Approx(4 * at(1 << 20))); // saturated
  const double mid = at(32 << 10);
  CHECK(mid > at(1024));
  CHECK(mid < at(1 << 20));
  // Geometric midpoint in log(bytes) -> geometric mean of throughputs.
  CHECK((32 << 10) / (mid * 1e-6) == doctest::Approx(std::sqrt(1e6 * 1e9)));
}

TEST_CASE("accurate throughput interpolates across device counts") {
  std::vector<std::pair<GridPoint<2>, double>> pts = {{{1024, 2}, 100},
                                                      {{1024, 8}, 400}};
  CHECK(accurateThroughput(pts, 1024, 4, nullptr) == doctest::Approx(200));
  CHECK(accurateThroughput(pts, 1024, 16, nullptr) == doctest::Approx(400));
}
