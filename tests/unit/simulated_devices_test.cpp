// Simulated devices against answers worked by hand from the StableHLO
// specification's collectives (process groups from replica_groups,
// channel_handle and use_global_device_ids), the shards of a sharding and
// their assembly, and the partition check: a faithful per-device program
// matches, a program that drops a collective or slices the wrong rows does
// not.
#include "shardlab/interpreter/interpreter.h"
#include "shardlab/interpreter/shards.h"
#include "shardlab/partition_check/partition_check.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

using namespace shardlab;
using interpreter::Tensor;

namespace {

struct Program {
  std::unique_ptr<Module> module;
  Type f32x2;
};

// A module whose @main takes one tensor<2xf32> per device.
Program parse(const std::string &text) {
  DiagnosticEngine diags;
  Program p;
  p.module = parseModule(text, diags);
  REQUIRE(p.module);
  TypeContext &types = p.module->ctx().types;
  p.f32x2 = types.rankedTensor({2}, types.element("f32"));
  return p;
}

Tensor pair(Type type, double a, double b) {
  Tensor t = Tensor::zeros(type);
  t.setReal(0, a);
  t.setReal(1, b);
  return t;
}

// Device d holds [10d, 10d + 1].
std::vector<std::vector<Tensor>> perDevice(Type type, int devices) {
  std::vector<std::vector<Tensor>> args;
  for (int d = 0; d < devices; ++d)
    args.push_back({pair(type, 10.0 * d, 10.0 * d + 1)});
  return args;
}

const char *kCollectives = R"(
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<ui32>) {
  %sum = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2xf32>) -> tensor<2xf32>
  %gathered = "stablehlo.all_gather"(%x) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> : (tensor<2xf32>) -> tensor<4xf32>
  %scattered = "stablehlo.reduce_scatter"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<2xf32>) -> tensor<1xf32>
  %swapped = "stablehlo.all_to_all"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<2xf32>) -> tensor<2xf32>
  %shifted = "stablehlo.collective_permute"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3]]> : tensor<3x2xi64>}> : (tensor<2xf32>) -> tensor<2xf32>
  %id = stablehlo.partition_id : tensor<ui32>
  return %sum, %gathered, %scattered, %swapped, %shifted, %id : tensor<2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<ui32>
})";

} // namespace

TEST_CASE("Simulated devices: each collective exchanges as the spec says") {
  Program p = parse(kCollectives);
  const interpreter::DevicesRunResult r =
      interpreter::runOnDevices(*p.module, perDevice(p.f32x2, 4));
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.results.size() == 4);
  // all_reduce over {0, 2}: [0, 1] + [20, 21].
  CHECK(r.results[0][0].real(0) == 20);
  CHECK(r.results[2][0].real(1) == 22);
  CHECK(r.results[1][0].real(0) == 40); // {1, 3}: 10 + 30
  // all_gather over {2, 3}, in group order.
  CHECK(r.results[3][1].real(0) == 20);
  CHECK(r.results[3][1].real(3) == 31);
  // reduce_scatter (max) over {0, 1}: device 1 gets the second half.
  CHECK(r.results[0][2].real(0) == 10);
  CHECK(r.results[1][2].real(0) == 11);
  // all_to_all over {0, 1}: device 0 gets both first halves.
  CHECK(r.results[0][3].real(0) == 0);
  CHECK(r.results[0][3].real(1) == 10);
  CHECK(r.results[1][3].real(0) == 1);
  CHECK(r.results[1][3].real(1) == 11);
  // collective_permute: 0 has no source (zeros), 3 gets 2's.
  CHECK(r.results[0][4].real(0) == 0);
  CHECK(r.results[3][4].real(1) == 21);
  CHECK(r.results[2][5].integer(0) == 2);
}

TEST_CASE("Simulated devices: a collective naming a missing device is an "
          "error, not a crash") {
  Program p = parse(kCollectives);
  const interpreter::DevicesRunResult r =
      interpreter::runOnDevices(*p.module, perDevice(p.f32x2, 2));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("device 2") != std::string::npos);
}

TEST_CASE("Simulated devices: a loop whose condition differs between "
          "devices is named") {
  Program p = parse(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<ui32> {
  %id = stablehlo.partition_id : tensor<ui32>
  %zero = stablehlo.constant dense<0> : tensor<ui32>
  %r = stablehlo.while(%i = %zero) : tensor<ui32>
  cond {
    %go = stablehlo.compare LT, %i, %id : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    stablehlo.return %go : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<ui32>
    %n = stablehlo.add %i, %one : tensor<ui32>
    stablehlo.return %n : tensor<ui32>
  }
  return %r : tensor<ui32>
})");
  const interpreter::DevicesRunResult r =
      interpreter::runOnDevices(*p.module, perDevice(p.f32x2, 2));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("disagree on the loop condition") != std::string::npos);
}

TEST_CASE("Shards: offsets follow the mesh, sub-axes and padding") {
  Mesh mesh;
  mesh.axes = {{AxisName("a"), 2}, {AxisName("b"), 4}};
  TensorSharding s;
  s.dims.resize(2);
  s.dims[0].axes = {AxisRef{AxisName("b"), SubAxisInfo{2, 2}}}; // "b":(2)2
  s.dims[1].axes = {AxisRef{AxisName("a"), std::nullopt}};
  // "b":(2)2 is the minor half of b = [2, 2]: b 3 -> 1, b 2 -> 0, b 1 -> 1.
  auto at = interpreter::shardOffsets(s, mesh, 7, {3, 5}); // (a 1, b 3)
  REQUIRE(at);
  CHECK(*at == std::vector<int64_t>{3, 5});
  auto two = interpreter::shardOffsets(s, mesh, 2, {3, 5}); // (a 0, b 2)
  REQUIRE(two);
  CHECK(*two == std::vector<int64_t>{0, 0});
  auto one = interpreter::shardOffsets(s, mesh, 1, {3, 5}); // (a 0, b 1)
  REQUIRE(one);
  CHECK(*one == std::vector<int64_t>{3, 0});
  s.dims[0].axes = {AxisRef{AxisName("b"), SubAxisInfo{1, 2}}}; // major half
  auto major = interpreter::shardOffsets(s, mesh, 1, {3, 5});
  REQUIRE(major);
  CHECK(*major == std::vector<int64_t>{0, 0});
  CHECK_FALSE(interpreter::shardOffsets(s, mesh, 8, {3, 5}));
}

TEST_CASE("Shards: assembly takes padding off and catches disagreeing "
          "replicas") {
  Program p = parse("func.func @main() -> () {\n return\n}\n");
  TypeContext &types = p.module->ctx().types;
  Type global = types.rankedTensor({3}, types.element("f32"));
  Tensor whole = Tensor::zeros(global);
  for (int i = 0; i < 3; ++i)
    whole.setReal(i, i + 1);
  // Two shards of 2 over 3 elements: the second holds one and padding.
  Tensor a = interpreter::shardOf(whole, p.f32x2, {0});
  Tensor b = interpreter::shardOf(whole, p.f32x2, {2});
  CHECK(b.real(0) == 3);
  CHECK(b.real(1) == 0); // padding reads as zero
  b.setReal(1, 99);      // and is ignored coming back
  auto back = interpreter::assemble({a, b}, {{0}, {2}}, global);
  REQUIRE(back);
  CHECK(*back == whole);
  Tensor wrong = a;
  wrong.setReal(0, 7);
  auto disagree = interpreter::assemble({a, wrong}, {{0}, {0}}, global);
  CHECK_FALSE(disagree);
}

TEST_CASE("Partition check: a module's own shardings and random ones match "
          "the global run") {
  const std::string text = R"(
sdy.mesh @mesh = <["a"=2, "b"=3]>
func.func @main(%x: tensor<7x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}, %w: tensor<6x4xf32>) -> (tensor<7x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) {
  %n = stablehlo.negate %x : tensor<7x6xf32>
  %r = stablehlo.reverse %n, dims = [0] : tensor<7x6xf32>
  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : (tensor<7x6xf32>, tensor<6x4xf32>) -> tensor<7x4xf32>
  return %d : tensor<7x4xf32>
})";
  partition_check::Options own;
  const partition_check::Outcome a =
      partition_check::checkPartitioned(text, own);
  CHECK_MESSAGE(a.status == partition_check::Status::Match, a.message);
  CHECK(a.devices == 6);
  for (uint64_t seed : {1u, 2u, 3u}) {
    partition_check::Options random;
    random.seed = seed;
    const partition_check::Outcome b =
        partition_check::checkPartitioned(text, random);
    CHECK_MESSAGE(b.status == partition_check::Status::Match,
                  "seed " << seed << ": " << b.message);
    CHECK_FALSE(b.mesh.empty());
  }
}

TEST_CASE("Partition check: a tolerance floor judges a small result on the "
          "scale of the largest") {
  // Results 1024 and 1e-3 in every element (and two more constants). The
  // devices' program is changed after partitioning to return in place of
  // 1e-3 either 1.0001e-3 (off by 1e-4 of itself, 1e-7 of the large result)
  // or 2e-3 (off by 1e-3 of the large result).
  const std::string text = R"(
sdy.mesh @mesh = <["a"=2]>
func.func @main() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %big = stablehlo.constant dense<1.024000e+03> : tensor<4xf32>
  %small = stablehlo.constant dense<1.000000e-03> : tensor<4xf32>
  %near = stablehlo.constant dense<1.000100e-03> : tensor<4xf32>
  %far = stablehlo.constant dense<2.000000e-03> : tensor<4xf32>
  return %big, %small, %near, %far : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
})";
  enum Returned { kNear = 2, kFar = 3 };
  auto check = [&](Returned returned, double floor) {
    partition_check::Options options;
    options.tolerance_floor = floor;
    options.after_partition = [returned](Module &module) {
      walk(module.op(), [&](Operation &op) {
        if (op.is("func.return"))
          op.setOperand(1, op.operand(returned));
      });
    };
    return partition_check::checkPartitioned(text, options).status;
  };
  using partition_check::Status;
  // Relative to itself the small result is off by far more than rounding.
  CHECK(check(kNear, 0) == Status::Mismatch);
  // On the large result's scale (a floor of 1e-3 of it) it is not.
  CHECK(check(kNear, 1e-3) == Status::Match);
  // An error on that scale is still caught.
  CHECK(check(kFar, 1e-3) == Status::Mismatch);
  // A floor of 1 judges every result at the largest one's scale, where
  // 1e-3 of 1024 is rounding (32 units of f32's precision are 4e-3).
  CHECK(check(kFar, 1) == Status::Match);
}

TEST_CASE("Partition check: a module that cannot run is not run, not a "
          "match") {
  partition_check::Options options;
  options.seed = 1;
  const partition_check::Outcome out = partition_check::checkPartitioned(
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  return %x : tensor<?xf32>\n}\n",
      options);
  CHECK(out.status == partition_check::Status::NotRun);
  CHECK(out.message.find("dynamic") != std::string::npos);
}

TEST_CASE("Partition check: a reshape reads a size-1 dimension split over "
          "devices whole") {
  // Only the first device of "b" holds the column; the reshape's result is
  // replicated, so the others must not read their padding as the column.
  const std::string text = R"(
sdy.mesh @mesh = <["b"=2]>
func.func @main() -> tensor<3x1x1xi32> {
  %c = stablehlo.constant dense<[[7], [8], [9]]> : tensor<3x1xi32>
  %s = sdy.sharding_constraint %c <@mesh, [{}, {"b"}]> : tensor<3x1xi32>
  %r = stablehlo.reshape %s : (tensor<3x1xi32>) -> tensor<3x1x1xi32>
  %want = stablehlo.constant dense<[[[7]], [[8]], [[9]]]> : tensor<3x1x1xi32>
  stablehlo.custom_call @check.expect_eq(%r, %want) {has_side_effect = true} : (tensor<3x1x1xi32>, tensor<3x1x1xi32>) -> ()
  return %r : tensor<3x1x1xi32>
})";
  partition_check::Options own;
  own.keep_program = true;
  const partition_check::Outcome out =
      partition_check::checkPartitioned(text, own);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  CHECK(out.devices == 2);
  CHECK(out.checks_passed == 2);
  CHECK(out.program.find("stablehlo.all_gather") != std::string::npos);
}

TEST_CASE("Partition check: a split dimension padded for finer shards "
          "keeps each row") {
  // 128 columns in 2 shards of 64 ("tp"); the reshape's result splits them
  // 6 ways (["tp", "dp"]), 22 each with padding: 132 in 2 shards of 66, so
  // the first shard's last two columns (64, 65) are on the other device.
  // They were read as padding (zeros) before.
  const std::string text = R"(
sdy.mesh @mesh = <["dp"=3, "tp"=2]>
func.func @main(%x: tensor<2x128xf32>) -> (tensor<2x2x66xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"tp"}, {"dp"}]>}) {
  %r = stablehlo.reshape %x : (tensor<2x128xf32>) -> tensor<2x2x64xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %r, %z, low = [0, 0, 0], high = [0, 0, 2], interior = [0, 0, 0] : (tensor<2x2x64xf32>, tensor<f32>) -> tensor<2x2x66xf32>
  return %p : tensor<2x2x66xf32>
})";
  partition_check::Options own;
  const partition_check::Outcome out =
      partition_check::checkPartitioned(text, own);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  CHECK(out.devices == 6);
}

TEST_CASE("Partition check: a dynamic_slice of a split dimension slices "
          "the device's part") {
  // Rows of [4, 8] split 2 ways over "b" (4 columns each); the slice takes
  // one row and every column: on a device, sizes [1, 4], not the global
  // [1, 8] (an op the StableHLO verifier rejects).
  const std::string text = R"(
sdy.mesh @mesh = <["b"=2]>
func.func @main(%x: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}, %i: tensor<i32>) -> (tensor<1x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %s = stablehlo.dynamic_slice %x, %i, %c0, sizes = [1, 8] : (tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<1x8xf32>
  return %s : tensor<1x8xf32>
})";
  partition_check::Options own;
  own.keep_program = true;
  const partition_check::Outcome out =
      partition_check::checkPartitioned(text, own);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  CHECK(out.program.find("sizes = [1, 4]") != std::string::npos);
  CHECK(out.program.find("sizes = [1, 8]") == std::string::npos);
}

TEST_CASE("Partition check: a max over a split dimension from any init "
          "value is one all-reduce") {
  // max(-3e38, partial maxima) is the max whatever -3e38 is: read once per
  // device it still counts once, so each device reduces its columns and
  // the partial maxima are all-reduced; a sum from 1 is not (1 would count
  // twice), so its columns are gathered first.
  const std::string text = R"(
sdy.mesh @mesh = <["b"=2]>
func.func @main(%x: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) -> (tensor<4xf32>, tensor<4xf32>) {
  %low = stablehlo.constant dense<-3.0e38> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %s = stablehlo.reduce(%x init: %one) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %m, %s : tensor<4xf32>, tensor<4xf32>
})";
  partition_check::Options own;
  own.keep_program = true;
  const partition_check::Outcome out =
      partition_check::checkPartitioned(text, own);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  auto count = [&](std::string_view what) {
    size_t n = 0;
    for (size_t at = out.program.find(what); at != std::string::npos;
         at = out.program.find(what, at + 1))
      ++n;
    return n;
  };
  CHECK(count("\"stablehlo.all_reduce\"") == 1);
  CHECK(count("\"stablehlo.all_gather\"") == 1);
}

TEST_CASE("Interpreter: a manual computation runs its body on every device "
          "of the mesh in a global run") {
  // Rows 0..7 of [[0, 1], [2, 3], ...] over x=4: each device sums its two
  // rows, the psum (all_reduce) adds the four partial sums: the column
  // sums 56 and 64 on every device; out_shardings [{}] puts them together.
  const std::string text = R"(
sdy.mesh @mesh = <["x"=4]>
func.func @main() -> tensor<2xi32> {
  %c = stablehlo.iota dim = 0 : tensor<16xi32>
  %m = stablehlo.reshape %c : (tensor<16xi32>) -> tensor<8x2xi32>
  %0 = sdy.manual_computation(%m) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x"} (%arg1: tensor<2x2xi32>) {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.reduce(%arg1 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<2x2xi32>, tensor<i32>) -> tensor<2xi32>
    %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %3 = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %3 : tensor<i32>
    }) : (tensor<2xi32>) -> tensor<2xi32>
    sdy.return %2 : tensor<2xi32>
  } : (tensor<8x2xi32>) -> tensor<2xi32>
  %want = stablehlo.constant dense<[56, 64]> : tensor<2xi32>
  stablehlo.custom_call @check.expect_eq(%0, %want) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
  return %0 : tensor<2xi32>
})";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  interpreter::RunResult r = interpreter::run(*module);
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.checks.size() == 1);
  CHECK(r.checks[0].passed);
  // And the module partitioned by its own shardings matches that run.
  partition_check::Options own;
  const partition_check::Outcome out =
      partition_check::checkPartitioned(text, own);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

// The per-device programs the differential's values found wrong (shardlab's
// partition pipeline on sharded variants of JAX's corpus, 2026-12-01): each
// module below computed other values on some device before its fix.
namespace {

partition_check::Outcome partitioned(const std::string &text) {
  partition_check::Options own;
  own.keep_program = true;
  return partition_check::checkPartitioned(text, own);
}

} // namespace

TEST_CASE("Partition check: an update into a split dimension lands on the "
          "devices whose rows it covers") {
  // 16 rows over 4 devices (4 each); 3 rows written at 6 cover rows 6-8,
  // on the second and third devices; at 15 the start clamps to 13.
  for (const char *start : {"6", "15", "-2", "3"}) {
    CAPTURE(start);
    const std::string text = R"(
sdy.mesh @mesh = <["a"=4]>
func.func @main(%x: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %u: tensor<3x2xf32>) -> (tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
  %i = stablehlo.constant dense<)" +
                             std::string(start) +
                             R"(> : tensor<i64>
  %z = stablehlo.constant dense<0> : tensor<i64>
  %d = stablehlo.dynamic_update_slice %x, %u, %i, %z : (tensor<16x2xf32>, tensor<3x2xf32>, tensor<i64>, tensor<i64>) -> tensor<16x2xf32>
  return %d : tensor<16x2xf32>
})";
    const partition_check::Outcome out = partitioned(text);
    CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
    // Written on the device, no gather of the 16 rows.
    CHECK(out.program.find("all_gather") == std::string::npos);
  }
}

TEST_CASE("Partition check: a broadcast of a size-1 dimension split over "
          "devices reads its one row whole") {
  // The row is on the first device of "a"; the others hold padding. (A
  // result split along "a" too would make Shardy reshard the operand; an
  // argument's split of a size-1 dimension is dropped on import.)
  const std::string text = R"(
sdy.mesh @mesh = <["a"=4]>
func.func @main() -> (tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %c = call @row() : () -> tensor<1x3xf32>
  %s = sdy.sharding_constraint %c <@mesh, [{"a"}, {}]> : tensor<1x3xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<8x3xf32>
  return %b : tensor<8x3xf32>
}
func.func private @row() -> tensor<1x3xf32> {
  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  return %c : tensor<1x3xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

TEST_CASE("Partition check: a multiplying scatter's partial products are "
          "multiplied, through the padding of a split dimension") {
  // One element split 2 ways (padded), the updates split 2 other ways: the
  // all-reduce after the scatter multiplies, though a pad stands between.
  const std::string text = R"(
sdy.mesh @mesh = <["a"=4]>
func.func @main() -> (tensor<1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %x = stablehlo.constant dense<3.0> : tensor<1xf32>
  %xs = sdy.sharding_constraint %x <@mesh, [{"a":(1)2}]> : tensor<1xf32>
  %u = stablehlo.constant dense<[5.0, 7.0]> : tensor<2xf32>
  %us = sdy.sharding_constraint %u <@mesh, [{"a":(2)2}]> : tensor<2xf32>
  %i = stablehlo.constant dense<0> : tensor<2x1xi64>
  %r = "stablehlo.scatter"(%xs, %i, %us) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<1xf32>
  return %r : tensor<1xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  CHECK(out.program.find("stablehlo.multiply %arg") != std::string::npos);
}

TEST_CASE("Partition check: a gather that slices a padded split dimension "
          "whole keeps every device's rows") {
  // 10 rows over 8 devices (2 each, padded to 16), sliced whole: the rows
  // stay split, none is masked as if only the first shard had it.
  const std::string text = R"(
sdy.mesh @mesh = <["a"=8]>
func.func @main(%x: tensor<10x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<10x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
  %i = stablehlo.constant dense<[[3], [1]]> : tensor<2x1xi64>
  %g = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, slice_sizes = array<i64: 10, 1>}> : (tensor<10x4xf32>, tensor<2x1xi64>) -> tensor<10x2xf32>
  return %g : tensor<10x2xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

TEST_CASE("Partition check: a grouped convolution over a padded batch keeps "
          "its kernel's input features") {
  // 3 feature groups: the kernel has 1 input feature for the input's 3;
  // padding the batch (2 over 8 devices) must not pad the kernel to 3.
  const std::string text = R"(
sdy.mesh @mesh = <["a"=8]>
func.func @main(%x: tensor<2x3x5x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}, {}, {}]>}, %k: tensor<6x1x3x3xf32>) -> (tensor<2x6x3x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}, {}, {}]>}) {
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<2x3x5x5xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x3x3xf32>
  return %c : tensor<2x6x3x3xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  CHECK(out.program.find("6x3x3x3") == std::string::npos);
}

TEST_CASE("Partition check: a reduce_window of two results gathers the "
          "windowed dimension of both inputs") {
  const std::string text = R"(
sdy.mesh @mesh = <["a"=2]>
func.func @main(%x: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %y: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<3x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
  %inf = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r:2 = "stablehlo.reduce_window"(%x, %y, %inf, %zero) <{window_dimensions = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
    %le = stablehlo.compare LE, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %le, %a, %c : tensor<i1>, tensor<f32>
    %w = stablehlo.select %le, %b, %d : tensor<i1>, tensor<f32>
    stablehlo.return %v, %w : tensor<f32>, tensor<f32>
  }) : (tensor<4x6xf32>, tensor<4x6xf32>, tensor<f32>, tensor<f32>) -> (tensor<3x5xf32>, tensor<3x5xf32>)
  return %r#1 : tensor<3x5xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

TEST_CASE("Partition check: an op without a rule whose result is split "
          "runs whole and then takes its shard") {
  // top_k has no Shardy rule; propagation split its indices by rows. The
  // values must not be computed from one device's rows alone.
  const std::string text = R"(
sdy.mesh @mesh = <["a"=2]>
func.func @main() -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<4x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
  %c = stablehlo.constant dense<[[1.0, 5.0, 3.0], [4.0, 2.0, 6.0], [9.0, 8.0, 7.0], [0.0, 1.0, 2.0]]> : tensor<4x3xf32>
  %s = sdy.sharding_constraint %c <@mesh, [{"a"}, {}]> : tensor<4x3xf32>
  %v, %i = chlo.top_k(%s, k = 2) : tensor<4x3xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
  return %v, %i : tensor<4x2xf32>, tensor<4x2xi32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

TEST_CASE("Partition check: a manual computation's result is read by the "
          "collectives after it with its out sharding") {
  // Inside, the body's value is split over "y" alone ("x" is manual);
  // outside it is split over {"x", "y"}. The permute to {"y", "x"} that
  // resharding to {"y"} needs swaps devices 1 and 2: read with the body's
  // sharding it kept every shard in place.
  const std::string text = R"(
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", "y"}]>] out_shardings=[<@mesh, [{"x", "y"}]>] manual_axes={"x"} (%arg1: tensor<4xf32>) {
    %1 = stablehlo.abs %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} : tensor<4xf32>
    sdy.return %1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

TEST_CASE("Partition check: a global-view gather and a move to the host "
          "keep their values") {
  // Globally the all_gather only changes where the value lives and
  // MoveToHost where it is kept (the global run used to stop at both); each
  // device's program, where the gather is a StableHLO all_gather, must give
  // the same values.
  const std::string text = R"(
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = stablehlo.multiply %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x4xf32>
  %1 = sdy.all_gather [{"x"}, {}] %0 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x4xf32>
  %2 = stablehlo.custom_call @MoveToHost(%1) {backend_config = ""} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %3 = stablehlo.add %2, %arg0 : tensor<8x4xf32>
  return %3 : tensor<8x4xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  CHECK(out.global.ok);
}

TEST_CASE("Partition check: a split onto a sub-axis that cannot coexist "
          "with the held one gathers first") {
  // "a":(1)2 is a device's index / 3, "a":(3)2 its index % 2. Sliced first,
  // device 3 would hold row 1, column 1, and the gather over "a":(1)2 would
  // pair it with device 0's row 0, column 0: a 2x1 column of two columns.
  const std::string text = R"(
sdy.mesh @mesh = <["a"=6]>
func.func @main(%arg0: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)2}, {}]>}) -> (tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a":(3)2}]>}) {
  %0 = sdy.reshard %arg0 <@mesh, [{}, {"a":(3)2}]> : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

TEST_CASE("Partition check: partial sums are added once") {
  // Had the propagation pipeline's export reduced the unreduced input before
  // the reshard, the partition pipeline's own export would see an all_reduce
  // whose operand is unreduced and whose result is not, and add another.
  const std::string text = R"(
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}], unreduced={"x"}>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
  %0 = sdy.reshard %arg0 <@mesh, [{"y"}, {}]> : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

TEST_CASE("Partition check: a result unreduced by max holds partial maxima") {
  // Each device's maximum over its 4 rows; the result is their maximum.
  const std::string text = R"(
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced=max{"x"}>}) {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced=max{"x"}>]>} : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
}

TEST_CASE("Partition check: a replicated value made unreduced is held once "
          "per group") {
  // sdy.replicated_to_unreduced {"x"}: the first device along "x" keeps the
  // value, the other holds zeros; the all_reduce after it gives it back.
  const std::string text = R"(
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = sdy.reshard %arg0 <@mesh, [{"y"}, {}], unreduced={"x"}> : tensor<8x4xf32>
  %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}], unreduced={"x"}>]>} : tensor<8x4xf32>
  %2 = sdy.reshard %1 <@mesh, [{}, {}]> : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
})";
  const partition_check::Outcome out = partitioned(text);
  CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  CHECK(out.program.find("sdy.replicated_to_unreduced") == std::string::npos);
}

TEST_CASE("Partition check: a split value made unreduced keeps its shard in "
          "place among zeros") {
  // sdy.sharded_to_unreduced [{"y"}, {}] on rows split over {"x", "y"}:
  // each device's 2 rows at 2 * (its index along "y") in 4 rows of zeros.
  for (const char *result : {R"([{"x"}, {}], unreduced={"y"})", "[{}, {}]"}) {
    const std::string tail =
        std::string(result) == "[{}, {}]"
            ? R"(  %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : tensor<8x4xf32>
  %2 = sdy.reshard %1 <@mesh, [{}, {}]> : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>)"
            : "  return %0 : tensor<8x4xf32>";
    const std::string text = R"(
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, )" +
                             std::string(result) + R"(>}) {
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}], unreduced={"y"}> : tensor<8x4xf32>
)" + tail + "\n}";
    CAPTURE(result);
    const partition_check::Outcome out = partitioned(text);
    CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
    CHECK(out.program.find("sdy.sharded_to_unreduced") == std::string::npos);
  }
}

TEST_CASE("Partition check: a result unreduced over an axis its op does not "
          "reduce over is held once per group") {
  // The dot's contraction is not split over "y", yet its result is
  // unreduced over "y": each device along "y" computes the whole product,
  // and only one of them may keep it.
  const std::string dot = R"(
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
})";
  // The reduced dimension is split over "x":(1)2 and "y"; the result is
  // unreduced over all of "x" (4): "x":(2)2 holds copies. The all-reduce
  // over "y" happens once (the propagation pipeline's export leaves it to
  // the partitioning one).
  const std::string reduce = R"(
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<2x16x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x":(1)2, "y"}, {}]>}) -> (tensor<2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>}) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : (tensor<2x16x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
})";
  for (const std::string &text : {dot, reduce}) {
    const partition_check::Outcome out = partitioned(text);
    CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  }
}

TEST_CASE("Partition check: another tool's per-device program is held to "
          "the global run") {
  const std::string text = R"(
sdy.mesh @mesh = <["a"=2]>
func.func @main(%x: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %n = stablehlo.negate %x : tensor<4x2xf32>
  return %n : tensor<4x2xf32>
})";
  const partition_check::Outcome own = partitioned(text);
  REQUIRE(own.status == partition_check::Status::Match);
  REQUIRE(own.program.find("stablehlo.all_gather") != std::string::npos);

  partition_check::Options given;
  given.program = own.program;
  CHECK(partition_check::checkPartitioned(text, given).status ==
        partition_check::Status::Match);
  SUBCASE("a program that forgets the gather is caught") {
    // Each device returns its own two rows where four are due: the
    // results' shapes disagree with the global run's.
    std::string wrong = own.program;
    const size_t at = wrong.find("\"stablehlo.all_gather\"");
    REQUIRE(at != std::string::npos);
    const size_t line = wrong.rfind('\n', at) + 1;
    wrong.erase(line, wrong.find('\n', at) + 1 - line);
    given.program = wrong;
    const partition_check::Outcome out =
        partition_check::checkPartitioned(text, given);
    CHECK(out.status != partition_check::Status::Match);
  }
  SUBCASE("a program computing something else is caught") {
    std::string wrong = own.program;
    wrong.replace(wrong.find("stablehlo.negate"), 16, "stablehlo.abs");
    given.program = wrong;
    const partition_check::Outcome out =
        partition_check::checkPartitioned(text, given);
    CHECK(out.status == partition_check::Status::Mismatch);
    CHECK(out.stage == "results");
  }
  SUBCASE("mhlo.sharding left on it is not read as its layout") {
    // sdy_opt does not import GSPMD shardings: it partitions such a module
    // as unsharded and leaves the attribute on an argument every device
    // holds whole. Read as a split, each device would get half the rows.
    const std::string gspmd = R"(
func.func @main(%x: tensor<4x2xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<4x2xf32> {
  %n = stablehlo.negate %x : tensor<4x2xf32>
  return %n : tensor<4x2xf32>
})";
    given.program = gspmd;
    const partition_check::Outcome out =
        partition_check::checkPartitioned(gspmd, given);
    CHECK_MESSAGE(out.status == partition_check::Status::Match, out.message);
  }
  SUBCASE("past its budget of work it is not run, not a mismatch") {
    partition_check::Options budget;
    const partition_check::Outcome whole =
        partition_check::checkPartitioned(text, budget);
    REQUIRE(whole.status == partition_check::Status::Match);
    REQUIRE(whole.work > 0);
    budget.max_work = whole.work - 1; // the devices' last op passes it
    const partition_check::Outcome out =
        partition_check::checkPartitioned(text, budget);
    CHECK(out.status == partition_check::Status::NotRun);
    CHECK(out.stage == "devices");
    budget.max_work = 10; // drawing the inputs alone passes it
    CHECK(partition_check::checkPartitioned(text, budget).stage ==
          "global run");
  }
  SUBCASE("not with random shardings, which the program does not have") {
    given.seed = 3;
    CHECK(partition_check::checkPartitioned(text, given).status ==
          partition_check::Status::NotRun);
  }
}
