// Interpolator semantics: ties, clamping, grid snapping, full-grid errors.
#include "shardlab/cost/interpolator.h"

#include <doctest/doctest.h>

using namespace shardlab::cost;

TEST_CASE("power-of-two helpers follow XLA's definitions") {
  CHECK(NextPowerOfTwo(0) == 1);
  CHECK(NextPowerOfTwo(5) == 8);
  CHECK(NextPowerOfTwo(8) == 8);
  CHECK(PrevPowerOfTwo(8) == 8); // NextPowerOfTwo((8 >> 1) + 1)
  CHECK(PrevPowerOfTwo(9) == 8);
  CHECK(PrevPowerOfTwo(513) == 512);
}

TEST_CASE("nearest neighbour: first inserted point wins a tie") {
  NearestNeighbourInterpolator<int64_t, 2> nn;
  nn.Add({0, 0}, 10);
  nn.Add({2, 0}, 20);
  CHECK(*nn.Eval({1, 0}) == 10);
  NearestNeighbourInterpolator<int64_t, 2> reversed;
  reversed.Add({2, 0}, 20);
  reversed.Add({0, 0}, 10);
  CHECK(*reversed.Eval({1, 0}) == 20);
  CHECK_FALSE(NearestNeighbourInterpolator<int64_t, 1>().Eval({1}));
}

TEST_CASE("nearest neighbour uses raw coordinates, so bytes dominate") {
  NearestNeighbourInterpolator<int64_t, 2> nn;
  nn.Add({1024, 2}, 1);
  nn.Add({1100, 64}, 2);
  // Query (1100, 2): 76 bytes away (76^2) loses to 62 devices away (62^2).
  CHECK(*nn.Eval({1100, 2}) == 2);
}

TEST_CASE("grid snap: ties go to the larger candidate, then clamp") {
  GridContext<1> ctx;
  ctx.next_step = {-1};
  ctx.next_pow2 = {1};
  ctx.min = {4};
  ctx.max = {16};
  GridSnapInterpolator<int64_t, 1> snap(ctx, SnapRule::kGridThenNearest);
  for (int64_t x : {4, 8, 16})
    snap.Add({x}, x * 10);
  CHECK(*snap.Eval({6}) == 80);   // 6-4 == 8-6: tie -> 8
  CHECK(*snap.Eval({5}) == 40);   // closer to 4
  CHECK(*snap.Eval({1}) == 40);   // clamped up to min
  CHECK(*snap.Eval({99}) == 160); // clamped down to max
}

TEST_CASE("grid snap: a later duplicate overwrites in the exact map") {
  GridContext<1> ctx{{-1}, {1}, {1}, {1024}};
  GridSnapInterpolator<int64_t, 1> snap(ctx, SnapRule::kStoredCoordinate);
  snap.Add({8}, 1);
  snap.Add({8}, 2);
  CHECK(*snap.Eval({8}) == 2);
}

TEST_CASE("stored-coordinate snap resolves off-grid tables") {
  GridContext<2> ctx{{-1, -1}, {-1, -1}, {0, 0}, {100, 100}};
  GridSnapInterpolator<int64_t, 2> snap(ctx, SnapRule::kStoredCoordinate);
  snap.Add({10, 3}, 1);
  snap.Add({30, 5}, 2);
  auto hit = snap.Lookup({12, 5});
  REQUIRE(hit);
  CHECK(hit->first == GridPoint<2>{10, 3});
  CHECK(hit->second == 1);
}

TEST_CASE("weighted average: exact corners and missing corners") {
  GridContext<1> ctx{{-1}, {1}, {2}, {8}};
  WeightedAverageInterpolator<1> wa(ctx);
  wa.Add({2}, 1.0);
  wa.Add({4}, 3.0);
  CHECK(*wa.Eval({4}) == doctest::Approx(3.0));
  // 3: corners 4 (d=1, w=1/2) and 4 again? PrevPow2(3)=2, NextPow2(3)=4.
  CHECK(*wa.Eval({3}) == doctest::Approx((1.0 * 0.5 + 3.0 * 0.5) / 1.0));
  Result<double> missing = wa.Eval({7});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("(8)") != std::string::npos);
}
