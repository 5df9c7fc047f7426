// Interpolator semantics: ties, clamping, grid snapping, full-grid errors.
#include "shardlab/cost/interpolator.h"

#include <doctest/doctest.h>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

TEST_CASE("power-of-two helpers follow XLA's definitions") {
  CHECK(nextPowerOfTwo(0) == 1);
  CHECK(nextPowerOfTwo(5) == 8);
  CHECK(nextPowerOfTwo(8) == 8);
  CHECK(prevPowerOfTwo(8) == 8); // nextPowerOfTwo((8 >> 1) + 1)
  CHECK(prevPowerOfTwo(9) == 8);
  CHECK(prevPowerOfTwo(513) == 512);
}

TEST_CASE("nearest neighbour: first inserted point wins a tie") {
  NearestNeighbourInterpolator<int64_t, 2> nn;
  nn.add({0, 0}, 10);
  nn.add({2, 0}, 20);
  CHECK(*nn.eval({1, 0}) == 10);
  NearestNeighbourInterpolator<int64_t, 2> reversed;
  reversed.add({2, 0}, 20);
  reversed.add({0, 0}, 10);
  CHECK(*reversed.eval({1, 0}) == 20);
  CHECK_FALSE(NearestNeighbourInterpolator<int64_t, 1>().eval({1}));
}

TEST_CASE("nearest neighbour uses raw coordinates, so bytes dominate") {
  NearestNeighbourInterpolator<int64_t, 2> nn;
  nn.add({1024, 2}, 1);
  nn.add({1100, 64}, 2);
  // Query (1100, 2): 76 bytes away (76^2) loses to 62 devices away (62^2).
  CHECK(*nn.eval({1100, 2}) == 2);
}

TEST_CASE("grid snap: ties go to the larger candidate, then clamp") {
  GridContext<1> ctx;
  ctx.next_step = {-1};
  ctx.next_pow2 = {1};
  ctx.min = {4};
  ctx.max = {16};
  GridSnapInterpolator<int64_t, 1> snap(ctx, SnapRule::GridThenNearest);
  for (int64_t x : {4, 8, 16})
    snap.add({x}, x * 10);
  CHECK(*snap.eval({6}) == 80);   // 6-4 == 8-6: tie -> 8
  CHECK(*snap.eval({5}) == 40);   // closer to 4
  CHECK(*snap.eval({1}) == 40);   // clamped up to min
  CHECK(*snap.eval({99}) == 160); // clamped down to max
}

TEST_CASE("grid snap: a later duplicate overwrites in the exact map") {
  GridContext<1> ctx{{-1}, {1}, {1}, {1024}};
  GridSnapInterpolator<int64_t, 1> snap(ctx, SnapRule::StoredCoordinate);
  snap.add({8}, 1);
  snap.add({8}, 2);
  CHECK(*snap.eval({8}) == 2);
}

TEST_CASE("stored-coordinate snap resolves off-grid tables") {
  GridContext<2> ctx{{-1, -1}, {-1, -1}, {0, 0}, {100, 100}};
  GridSnapInterpolator<int64_t, 2> snap(ctx, SnapRule::StoredCoordinate);
  snap.add({10, 3}, 1);
  snap.add({30, 5}, 2);
  auto hit = snap.lookup({12, 5});
  REQUIRE(hit);
  CHECK(hit->first == GridPoint<2>{10, 3});
  CHECK(hit->second == 1);
}

TEST_CASE("weighted average: exact corners and missing corners") {
  GridContext<1> ctx{{-1}, {1}, {2}, {8}};
  WeightedAverageInterpolator<1> wa(ctx);
  wa.add({2}, 1.0);
  wa.add({4}, 3.0);
  CHECK(*wa.eval({4}) == doctest::Approx(3.0));
  // 3: corners 4 (d=1, w=1/2) and 4 again? PrevPow2(3)=2, NextPow2(3)=4.
  CHECK(*wa.eval({3}) == doctest::Approx((1.0 * 0.5 + 3.0 * 0.5) / 1.0));
  Result<double> missing = wa.eval({7});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("(8)") != std::string::npos);
}
