// shardingReport: the collectives of a small matmul module (kind, axes,
// bytes per device, device groups, requiring op) and its error values.
#include "shardlab/api/sharding_report.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

// lhs [8,16] sharded {"x"} on its contracting dim, rhs replicated, result
// wanted replicated: the dot needs an all-reduce over "x" (or a gather).
const char *kMatmul = R"(
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
)";

} // namespace

TEST_CASE("sharding report: collectives of a sharded matmul") {
  ShardingReport report = shardingReport(kMatmul);
  REQUIRE_MESSAGE(report.ok, report.error);
  CHECK(report.explicit_module.find("sdy.reshard") == std::string::npos);
  REQUIRE(!report.collectives.empty());
  bool saw_all_reduce = false;
  for (const CollectiveReport &c : report.collectives) {
    CAPTURE(c.kind);
    CHECK(!c.mesh_axes.empty());
    CHECK(c.bytes_per_device > 0);
    CHECK(!c.required_by.empty());
    size_t devices = 0;
    for (const auto &group : c.device_groups)
      devices += group.size();
    CHECK(devices == 4);
    if (c.kind == "all_reduce") {
      saw_all_reduce = true;
      CHECK(c.mesh_axes == std::vector<std::string>{"x"});
      CHECK(c.required_by == "stablehlo.dot_general");
      // The dot result on one device: [8/2 ("y"), 4] f32 = 64 bytes.
      CHECK(c.bytes_per_device == 4 * 4 * 4);
      CHECK(c.device_groups ==
            std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}});
    }
  }
  CHECK(saw_all_reduce);
  CHECK(shardingReportJson(report).find("\"collectives\"") !=
        std::string::npos);
}

TEST_CASE("sharding report: bad input is an error value") {
  ShardingReport report = shardingReport("func.func @main( {");
  CHECK(!report.ok);
  CHECK(!report.error.empty());
}
