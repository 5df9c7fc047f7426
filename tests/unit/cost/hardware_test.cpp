// Presets, the fusion roofline, the NVLink ring model and analytical tables.
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/hardware.h"

#include <doctest/doctest.h>

#include <cstdlib>

using namespace shardlab::cost;

TEST_CASE("presets exist with positive rates and unknown names fail") {
  for (const std::string &name : HardwarePresetNames()) {
    Result<HardwarePreset> p = FindHardwarePreset(name);
    REQUIRE(p);
    CHECK(p->hbm_bytes_per_s > 0);
    CHECK(*PeakFlopRate(*p, "bf16") > *PeakFlopRate(*p, "f32"));
    CHECK_FALSE(p->source.empty());
  }
  CHECK(FindHardwarePreset("h100")->hbm_bytes_per_s == 3352320000000.0);
  CHECK(FindHardwarePreset("tpu").error().message.find("h100") !=
        std::string::npos);
}

TEST_CASE("fusion roofline overlaps 95% of the shorter side") {
  HardwarePreset hw = *FindHardwarePreset("h100");
  FusionQuery q;
  q.flops = 66.9e12 * 10e-6;                      // 10 us of f32 compute
  q.bytes_read = int64_t(3352320000000.0 * 4e-6); // ~4 us of memory
  q.add_launch_overhead = false;
  Result<Estimate> e = FusionRooflineEstimate(hw, q);
  REQUIRE(e);
  CHECK(e->time_us == doctest::Approx(10 + 4 - 0.95 * 4).epsilon(1e-6));
  q.add_launch_overhead = true;
  CHECK(FusionRooflineEstimate(hw, q)->time_us ==
        doctest::Approx(e->time_us + 1.0));
  q.flops = -1;
  CHECK_FALSE(FusionRooflineEstimate(hw, q));
}

TEST_CASE("user-defined presets are validated") {
  auto p = ParseHardwarePreset(R"({"name": "mine", "hbm_bytes_per_s": 1e12,
      "nvlink_bytes_per_s": 1e11, "peak_flop_per_s": {"bf16": 1e14}})");
  REQUIRE(p);
  CHECK(*PeakFlopRate(*p, "f8e4m3fn") == 1e14); // narrow types use bf16
  auto bad = ParseHardwarePreset(R"({"name": "x", "hbm_bytes_per_s": -1,
      "nvlink_bytes_per_s": 1, "peak_flop_per_s": {}})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("preset.hbm_bytes_per_s") == 0);
}

TEST_CASE("NVLink ring factors") {
  HardwarePreset hw = *FindHardwarePreset("a100");
  const int64_t bytes = int64_t(300e9 * 1e-3); // 1 ms at full bandwidth
  auto ar = IntraNodeCollectiveEstimate(hw, CollectiveOp::kAllReduce, bytes, 8);
  auto ag = IntraNodeCollectiveEstimate(hw, CollectiveOp::kAllGather, bytes, 8);
  CHECK(ar->time_us == doctest::Approx(5 + 1000 * 2 * 7.0 / 8));
  CHECK(ag->time_us == doctest::Approx(5 + 1000 * 7.0 / 8));
}

TEST_CASE("checked-in analytical table matches the generator") {
  const std::string path = std::string(SHARDLAB_SOURCE_DIR) +
                           "/examples/tables/h100_analytical.shardlab.json";
  PerfTable generated = GenerateAnalyticalTable(*FindHardwarePreset("h100"));
  REQUIRE(CheckFullGemmGrid(generated, "bf16xbf16->bf16"));
  if (std::getenv("SHARDLAB_REGEN_TABLES"))
    REQUIRE(WritePerfTable(generated, path));
  Result<PerfTable> loaded = LoadPerfTable(path);
  REQUIRE(loaded);
  CHECK(loaded->metadata.source == "analytical");
  CHECK(SerializePerfTable(*loaded) == SerializePerfTable(generated));
  auto mi = MatmulInterpolator::Create(*loaded, GemmTableKind::kDefault,
                                       EstimateMode::kCompatible);
  GemmQuery q{{1, 1000, 3000, 700}, "bf16", "bf16", "bf16"};
  CHECK(mi->EstimateTime(q)->time_us > 0);
}
