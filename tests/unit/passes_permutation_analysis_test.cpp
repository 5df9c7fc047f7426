// Which devices need their neighbours' rows for a pad, slice or reshape
// (passes/export/permutation_analysis.h), on the shapes of Shardy's
// resolve_permutation_factors tests, and when the pass may exchange halos.
#include "passes/export/permutation_analysis.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

TensorSharding sharded(std::vector<std::vector<AxisRef>> dims) {
  TensorSharding s;
  s.mesh.symbol = "m";
  for (auto &axes : dims)
    s.dims.push_back({std::move(axes), true, std::nullopt});
  return s;
}

} // namespace

TEST_CASE("A pad shifting rows left needs the right neighbour") {
  // tensor<4> over 2 shards, low = -1, high = 4 -> tensor<7>: device 0's
  // output rows 0..3 are input rows 1..4, rows 2 and 3 on device 1.
  const DimShift shift = analyzeDimShift(4, -1, 4, 0, 2);
  CHECK(shift.out_size == 7);
  CHECK(shift.in_local == 2);
  CHECK(shift.out_local == 4);
  CHECK(shift.left_hops == 0);
  CHECK(shift.right_hops == 1);
  CHECK_FALSE(shift.isIdentity());
}

TEST_CASE("A pad that only adds rows where devices end moves nothing") {
  // tensor<8> over 2, low = high = 4 -> 16: device 0 holds 4 padding rows
  // and its own 4, device 1 its own 4 and 4 padding rows.
  const DimShift shift = analyzeDimShift(8, 4, 4, 0, 2);
  CHECK_FALSE(shift.needsCommunication());
  // A slice [0:3] of tensor<4> over 2: each device keeps its rows.
  CHECK_FALSE(analyzeDimShift(4, 0, -1, 0, 2).needsCommunication());
  // Unsharded: never.
  CHECK_FALSE(analyzeDimShift(4, -3, 7, 0, 1).needsCommunication());
}

TEST_CASE("Hops count how many devices away the rows are") {
  // tensor<4> over 4, low = -3, high = 7: device 0 needs row 3 (device 3).
  CHECK(analyzeDimShift(4, -3, 7, 0, 4).right_hops == 3);
  // tensor<4> over 4, low = 9 -> 13: device 2 needs rows 0..2.
  CHECK(analyzeDimShift(4, 9, 0, 0, 4).left_hops == 2);
}

TEST_CASE("Interior padding exchanges as far on both sides") {
  // tensor<3> over 2 with interior 2 -> tensor<7>: device 1's window
  // starts in the gap after row 1 (device 0's).
  const DimShift shift = analyzeDimShift(3, 0, 0, 2, 2);
  CHECK(shift.out_size == 7);
  CHECK(shift.left_hops == 1);
  CHECK(shift.right_hops == 1);
}

TEST_CASE("Reshape groups pair input and output dimensions") {
  const auto groups = reshapeGroups({12, 24}, {4, 3, 4, 6});
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].isSplit());
  CHECK(groups[0].out_end == 2);
  CHECK(groups[1].in_begin == 1);
  CHECK(groups[1].out_begin == 2);
  REQUIRE(reshapeGroups({6}, {1, 6}).size() == 1);
  CHECK(reshapeGroups({6}, {1, 6})[0].isSplit());
  const auto merge = reshapeGroups({2, 3, 5}, {30});
  REQUIRE(merge.size() == 1);
  CHECK_FALSE(merge[0].isSplit());
  CHECK(reshapeGroups({6, 8}, {4, 12}).size() == 1);
  CHECK(reshapeGroups({4, 8}, {4, 8}).size() == 2);
}

TEST_CASE("A non-divisible split needs the left neighbour's last row") {
  // tensor<6> over "a"=4 (2 rows each, padded to 8) -> tensor<2x3> sharded
  // [{"a":(1)2}, {"a":(2)2}] (blocks of 1x2): device 2 holds row 1,
  // columns 0..1 = flat 3, 4; flat 3 is device 1's.
  const Mesh mesh{{{"a", 4}}, {}};
  const ReshapeGroup group = reshapeGroups({6}, {2, 3})[0];
  const ReshapeMove move = analyzeReshapeGroup(
      group, {6}, sharded({{fullAxis("a")}}), {2, 3},
      sharded({{subAxis("a", 1, 2)}, {subAxis("a", 2, 2)}}), mesh);
  CHECK(move.needs_communication);
  CHECK(move.contiguous);
  CHECK(move.left_hops == 1);
  CHECK(move.right_hops == 0);
  CHECK(move.out_flat_local == 2);
  CHECK(move.flat_start == std::vector<int64_t>{0, 2, 3, 5});
  CHECK(move.in_index == std::vector<int64_t>{0, 1, 2, 3});
}

TEST_CASE("A split that keeps each device's elements moves nothing") {
  // tensor<6> over "a"=4 -> tensor<1x6> [{}, {"a"}]: same flat blocks.
  const Mesh mesh{{{"a", 4}}, {}};
  const ReshapeGroup group = reshapeGroups({6}, {1, 6})[0];
  CHECK_FALSE(analyzeReshapeGroup(group, {6}, sharded({{fullAxis("a")}}),
                                  {1, 6}, sharded({{}, {fullAxis("a")}}), mesh)
                  .needs_communication);
  // tensor<8> [{"a"}] over "a"=2 -> tensor<2x4> [{}, {"a"}]: device 0
  // holds flat 0..3 but must produce columns 0..1 of both rows.
  const Mesh two{{{"a", 2}}, {}};
  CHECK(analyzeReshapeGroup(reshapeGroups({8}, {2, 4})[0], {8},
                            sharded({{fullAxis("a")}}), {2, 4},
                            sharded({{}, {fullAxis("a")}}), two)
            .needs_communication);
}

TEST_CASE("Merged dimensions stay local only when each device's output "
          "rows are inside its input block") {
  const Mesh two{{{"a", 2}}, {}};
  const Mesh six{{{"a", 2}, {"b", 3}}, {}};
  auto needs = [](const std::vector<int64_t> &in, const TensorSharding &s_in,
                  const std::vector<int64_t> &out, const TensorSharding &s_out,
                  const Mesh &mesh) {
    return analyzeReshapeGroup(reshapeGroups(in, out)[0], in, s_in, out, s_out,
                               mesh)
        .needs_communication;
  };
  // tensor<4x6> rows over "a" -> tensor<24> over "a": device 0 holds rows
  // 0..1 = flat 0..11, and its output is flat 0..11.
  CHECK_FALSE(needs({4, 6}, sharded({{fullAxis("a")}, {}}), {24},
                    sharded({{fullAxis("a")}}), two));
  // Columns over "a": device 0 holds columns 0..2 but must produce flat
  // 0..11, which has columns 3..5 of rows 0 and 1.
  CHECK(needs({4, 6}, sharded({{}, {fullAxis("a")}}), {24},
              sharded({{fullAxis("a")}}), two));
  // Both dims over "a", "b" -> the flat dim over {"a", "b"}: device (0, 0)
  // holds row 0..1, columns 0..1; its output flat 0..3 is row 0, columns
  // 0..3.
  CHECK(needs({4, 6}, sharded({{fullAxis("a")}, {fullAxis("b")}}), {24},
              sharded({{fullAxis("a"), fullAxis("b")}}), six));
  // Rows then columns each whole on the minor side: tensor<2x6> rows over
  // "a", columns over "b" -> tensor<12> over {"a", "b"}: device (i, j)
  // holds row i, columns 2j..2j+1 = flat 6i+2j..6i+2j+1, its output block.
  CHECK_FALSE(needs({2, 6}, sharded({{fullAxis("a")}, {fullAxis("b")}}), {12},
                    sharded({{fullAxis("a"), fullAxis("b")}}), six));
  // Padding: tensor<3x4> rows over "a" (2 rows each, device 1 holds row 2)
  // -> tensor<12> over "a" (6 each): device 1's flat 6..7 are device 0's.
  CHECK(needs({3, 4}, sharded({{fullAxis("a")}, {}}), {12},
              sharded({{fullAxis("a")}}), two));
  // Several output dims: tensor<6x4> rows over "a" (flat 0..11 on device 0)
  // -> tensor<4x6> rows over "a" (flat 0..11) stays; columns over "a"
  // (flat 0..2, 6..8, 12..14, 18..20 on device 0) does not.
  CHECK_FALSE(needs({6, 4}, sharded({{fullAxis("a")}, {}}), {4, 6},
                    sharded({{fullAxis("a")}, {}}), two));
  CHECK(needs({6, 4}, sharded({{fullAxis("a")}, {}}), {4, 6},
              sharded({{}, {fullAxis("a")}}), two));
}

namespace {

/// The pad below through -sdy-resolve-permutation-factors with `options`,
/// its padding value `pad_value` made by `constant_op`.
std::string
resolvedWithHalo(const std::string &pad_value,
                 const std::string &options = "enable-halo-exchange=true",
                 const std::string &constant_op = "stablehlo.constant") {
  const std::string text = R"(sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<7x8xf32> {
  %c = )" + constant_op + R"( dense<)" +
                           pad_value +
                           R"(> : tensor<f32>
  %0 = stablehlo.pad %arg0, %c, low = [-1, 0], high = [4, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<7x8xf32>
  return %0 : tensor<7x8xf32>
})";
  DiagnosticEngine diags;
  LoadedModule loaded = loadModule(text, diags);
  REQUIRE(loaded.module);
  PassPipeline pipeline;
  REQUIRE(
      appendPass(pipeline, "sdy-resolve-permutation-factors", options).ok());
  REQUIRE(runPassPipeline(*loaded.module, pipeline, diags));
  return printModule(*loaded.module);
}

} // namespace

TEST_CASE("Halo exchange pads only with a zero padding value") {
  // A device without a right neighbour receives zeros from the collective
  // permute, and those rows are padding in the pad's output: exact for a
  // zero padding value only. Any other value is replicated instead.
  const std::string zero = resolvedWithHalo("0.000000e+00");
  CHECK(zero.find("sdy.manual_computation") != std::string::npos);
  CHECK(zero.find("collective_permute") != std::string::npos);
  const std::string one = resolvedWithHalo("1.000000e+00");
  CHECK(one.find("sdy.manual_computation") == std::string::npos);
  CHECK(one.find("sdy.reshard") != std::string::npos);
}

TEST_CASE("Halo exchange is the default, as Shardy's, and reads either "
          "constant") {
  // sdy_opt exchanges halos unless told enable-halo-exchange=false;
  // propagation's import spells the padding value sdy.constant, which is
  // as much a zero as stablehlo.constant.
  const auto exchanges = [](const std::string &text) {
    return text.find("collective_permute") != std::string::npos;
  };
  CHECK(exchanges(resolvedWithHalo("0.000000e+00", "")));
  CHECK(exchanges(resolvedWithHalo("0.000000e+00", "", "sdy.constant")));
  const std::string replicated =
      resolvedWithHalo("0.000000e+00", "enable-halo-exchange=false");
  CHECK_FALSE(exchanges(replicated));
  CHECK(replicated.find("sdy.reshard") != std::string::npos);
}
