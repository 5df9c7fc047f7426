// Meshes over the same devices merged into one (XLA's round-trip export and
// lift-and-dedup-meshes): axes and sub-axes mapped by their place in the
// device order, and the meshes that must stay.
#include "passes/xla_support.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

std::string dedup(const char *text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  dedupMeshesOverSameDevices(*module);
  return printModule(*module);
}

bool contains(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}

} // namespace

TEST_CASE("dedup meshes: axes and sub-axes map onto the main mesh") {
  const std::string out = dedup(R"(
sdy.mesh @main = <["a"=2, "b"=4, "c"=4]>
sdy.mesh @other = <["x"=8, "y"=4]>
sdy.mesh @bigger = <["z"=64]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@other, [{"y"}, {"x":(2)2}]>},
             %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@other, [{"x":(1)2, "x":(4)2}, {}], replicated={"y"}>},
             %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@bigger, [{"z"}, {}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
)");
  CHECK_FALSE(contains(out, "@other"));
  CHECK(contains(out, "sdy.mesh @bigger")); // 64 devices: another mesh
  CHECK(contains(out, R"(#sdy.sharding<@main, [{"c"}, {"b":(1)2}]>)"));
  CHECK(contains(
      out, R"(#sdy.sharding<@main, [{"a", "b":(2)2}, {}], replicated={"c"}>)"));
}

TEST_CASE("dedup meshes: adjacent pieces of one axis merge; a coarser main "
          "mesh takes sub-axes") {
  // The first mesh is the main one: "p" and "q" are the two halves of "a".
  const std::string out = dedup(R"(
sdy.mesh @main = <["a"=4, "b"=2]>
sdy.mesh @fine = <["p"=2, "q"=2, "r"=2]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@fine, [{"p", "q"}, {"r"}]>},
             %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@fine, [{"q"}, {"p"}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
)");
  CHECK_FALSE(contains(out, "sdy.mesh @fine"));
  CHECK(contains(out, R"(#sdy.sharding<@main, [{"a"}, {"b"}]>)"));
  CHECK(contains(out, R"(#sdy.sharding<@main, [{"a":(2)2}, {"a":(1)2}]>)"));

  const std::string coarse = dedup(R"(
sdy.mesh @main = <["a"=2, "b"=2, "c"=2]>
sdy.mesh @other = <["x"=4, "y"=2]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@other, [{"x"}, {"y"}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
)");
  CHECK(contains(coarse, R"(#sdy.sharding<@main, [{"a", "b"}, {"c"}]>)"));
}

TEST_CASE("dedup meshes: uneven cuts, other devices and manual axes keep a "
          "mesh") {
  // x=3 would cut a=2 / b=3 unevenly.
  const std::string uneven = dedup(R"(
sdy.mesh @main = <["a"=2, "b"=3]>
sdy.mesh @other = <["x"=3, "y"=2]>
func.func @f(%arg0: tensor<6x6xf32> {sdy.sharding = #sdy.sharding<@other, [{"x"}, {}]>}) -> tensor<6x6xf32> {
  return %arg0 : tensor<6x6xf32>
}
)");
  CHECK(contains(uneven, "sdy.mesh @other"));
  CHECK(contains(uneven, R"(#sdy.sharding<@other, [{"x"}, {}]>)"));

  const std::string devices = dedup(R"(
sdy.mesh @main = <["a"=2, "b"=2]>
sdy.mesh @other = <["x"=4], device_ids=[3, 2, 1, 0]>
func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{"x"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
)");
  CHECK(contains(devices, "sdy.mesh @other"));

  const std::string manual = dedup(R"(
sdy.mesh @main = <["a"=2, "b"=2]>
sdy.mesh @other = <["x"=4]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@other, [{"x"}]>] out_shardings=[<@other, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<2xf32>) {
    sdy.return %arg1 : tensor<2xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
)");
  CHECK(contains(manual, "sdy.mesh @other"));

  const std::string collective = dedup(R"(
sdy.mesh @main = <["a"=2, "b"=2]>
sdy.mesh @other = <["x"=4]>
func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{"x"}]>}) -> tensor<8xf32> {
  %0 = sdy.all_gather [{"x"}] %arg0 out_sharding=<@other, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
)");
  CHECK(contains(collective, "sdy.mesh @other"));
  CHECK(contains(collective, R"(#sdy.sharding<@other, [{"x"}]>)"));
}
