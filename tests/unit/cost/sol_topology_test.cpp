// The S-curve model by topology (the CLI's --nodes K > 1 path) and the
// guards against overflow on huge coordinates and GEMM dims.
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/interpolator.h"
#include "shardlab/cost/sol_model.h"

#include <doctest/doctest.h>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

TEST_CASE("S-curve by topology: communicators from group members per node") {
  const SolConfig h100 = solPlatformDefaults("NVIDIA H100 80GB HBM3");
  // research/xla_lhs.md §d.2: AR of 1 MiB over 2 nodes x 8 GPUs.
  auto ar = solTopologyEstimate(h100, CollectiveOp::AllReduce, 1 << 20, 16, 2);
  REQUIRE(ar);
  CHECK(ar->time_us == doctest::Approx(193.8).epsilon(1e-3));
  CHECK(ar->explanation.model == "s-curve/ring all-reduce");
  // 2 members per node -> 4 communicators; same as RingLatencyUs directly.
  auto ag = solTopologyEstimate(h100, CollectiveOp::AllGather, 4096, 4, 2);
  REQUIRE(ag);
  CHECK(ag->time_us ==
        *ringLatencyUs(h100, 4096, 2, SolCollective::AllGather, 4));
  auto cp =
      solTopologyEstimate(h100, CollectiveOp::CollectivePermute, 4096, 8, 4);
  REQUIRE(cp);
  CHECK(cp->explanation.model == "s-curve/send-recv");
  CHECK(solTopologyEstimate(h100, CollectiveOp::AllToAll, 4096, 16, 2));
}

TEST_CASE("S-curve by topology: impossible topologies are errors") {
  const SolConfig c = solPlatformDefaults("");
  for (auto [g, k] : {std::pair<int64_t, int64_t>{3, 2},
                      {2, 1},
                      {1, 2},
                      {48, 2},
                      {12, 2},
                      {int64_t{1} << 40, 2}}) {
    auto e = solTopologyEstimate(c, CollectiveOp::AllReduce, 1024, g, k);
    CHECK_FALSE(e);
    CHECK_FALSE(e.error().message.empty());
  }
}

TEST_CASE("squared distance saturates instead of overflowing") {
  const GridPoint<2> a = {INT64_MAX, 0}, b = {INT64_MIN + 1, 0};
  CHECK(squaredDistance<2>(a, b) == INT64_MAX);
  CHECK(squaredDistance<2>({int64_t{1} << 40, 0}, {0, 0}) == INT64_MAX);
  CHECK(squaredDistance<2>({3037000499, 0}, {0, 0}) ==
        int64_t{3037000499} * 3037000499);
  CHECK(squaredDistance<2>({3037000499, 3037000499}, {0, 0}) == INT64_MAX);
  CHECK(squaredDistance<2>({3, -4}, {0, 0}) == 25);
}

TEST_CASE("gemm dims beyond 2^40 are refused, not overflowed") {
  PerfTable t;
  t.gemms.push_back({1, 256, 256, 256, "bf16", "bf16", "bf16", {}, 1e12});
  auto mi = MatmulInterpolator::create(t, GemmTableKind::UserProfiles,
                                       EstimateMode::Compatible);
  REQUIRE(mi);
  GemmQuery q;
  q.lhs_dtype = q.rhs_dtype = q.out_dtype = "bf16";
  q.dims = {1, int64_t{1} << 41, 256, 256};
  CHECK_FALSE(mi->estimateTime(q));
  q.dims = {1, 512, 256, 256};
  CHECK(mi->estimateTime(q));
}
