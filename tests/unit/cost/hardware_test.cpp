// Presets, the fusion roofline, the NVLink ring model and analytical tables.
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/hardware.h"

#include <doctest/doctest.h>

#include <cstdlib>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

TEST_CASE("presets exist with positive rates and unknown names fail") {
  for (const std::string &name : hardwarePresetNames()) {
    Result<HardwarePreset> p = findHardwarePreset(name);
    REQUIRE(p);
    CHECK(p->hbm_bytes_per_s > 0);
    CHECK(*peakFlopRate(*p, "bf16") > *peakFlopRate(*p, "f32"));
    CHECK_FALSE(p->source.empty());
  }
  CHECK(findHardwarePreset("h100")->hbm_bytes_per_s == 3352320000000.0);
  CHECK(findHardwarePreset("tpu").error().message.find("h100") !=
        std::string::npos);
}

TEST_CASE("fusion roofline overlaps 95% of the shorter side") {
  HardwarePreset hw = *findHardwarePreset("h100");
  FusionQuery q;
  q.flops = 66.9e12 * 10e-6;                      // 10 us of f32 compute
  q.bytes_read = int64_t(3352320000000.0 * 4e-6); // ~4 us of memory
  q.add_launch_overhead = false;
  Result<Estimate> e = fusionRooflineEstimate(hw, q);
  REQUIRE(e);
  CHECK(e->time_us == doctest::Approx(10 + 4 - 0.95 * 4).epsilon(1e-6));
  q.add_launch_overhead = true;
  CHECK(fusionRooflineEstimate(hw, q)->time_us ==
        doctest::Approx(e->time_us + 1.0));
  q.flops = -1;
  CHECK_FALSE(fusionRooflineEstimate(hw, q));
}

TEST_CASE("user-defined presets are validated") {
  auto p = parseHardwarePreset(R"({"name": "mine", "hbm_bytes_per_s": 1e12,
      "nvlink_bytes_per_s": 1e11, "peak_flop_per_s": {"bf16": 1e14}})");
  REQUIRE(p);
  CHECK(*peakFlopRate(*p, "f8e4m3fn") == 1e14); // narrow types use bf16
  auto bad = parseHardwarePreset(R"({"name": "x", "hbm_bytes_per_s": -1,
      "nvlink_bytes_per_s": 1, "peak_flop_per_s": {}})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("preset.hbm_bytes_per_s") == 0);
}

TEST_CASE("NVLink ring factors") {
  HardwarePreset hw = *findHardwarePreset("a100");
  const int64_t bytes = int64_t(300e9 * 1e-3); // 1 ms at full bandwidth
  auto ar = intraNodeCollectiveEstimate(hw, CollectiveOp::AllReduce, bytes, 8);
  auto ag = intraNodeCollectiveEstimate(hw, CollectiveOp::AllGather, bytes, 8);
  CHECK(ar->time_us == doctest::Approx(5 + 1000 * 2 * 7.0 / 8));
  CHECK(ag->time_us == doctest::Approx(5 + 1000 * 7.0 / 8));
}

// The checked-in table is reviewed data: these values are worked out by hand
// from the H100 datasheet numbers (989.4 TFLOP/s bf16, 3.35232 TB/s HBM,
// 450 GB/s NVLink) and the two formulas, not read back from the generator.
TEST_CASE("checked-in analytical table holds the hand-computed values") {
  Result<PerfTable> t =
      loadPerfTable(std::string(SHARDLAB_SOURCE_DIR) +
                    "/examples/tables/h100_analytical.shardlab.json");
  REQUIRE(t);
  // GEMM 4096^3 bf16: compute 2*4096^3/989.4e12 s = 138.91 us; memory
  // (2 inputs + 1 output) * 4096^2 * 2 B / 3.35232e12 B/s = 30.03 us;
  // exec = 138.91 + 30.03 - 0.95 * 30.03 = 140.41 us; + 1 us launch.
  const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  const double compute_us = 1e6 * flops / 989.4e12;
  const double memory_us = 1e6 * 3 * 4096.0 * 4096.0 * 2 / 3.35232e12;
  const double gemm_us = compute_us + 0.05 * memory_us + 1.0;
  CHECK(gemm_us == doctest::Approx(141.41).epsilon(1e-3));
  bool found_gemm = false;
  for (const GemmEntry &g : t->gemms)
    if (g.b == 1 && g.m == 4096 && g.n == 4096 && g.k == 4096 &&
        g.lhs_dtype == "bf16") {
      found_gemm = true;
      CHECK(1e6 * flops / g.flop_per_s == doctest::Approx(gemm_us));
    }
  CHECK(found_gemm);
  // all-reduce of 1 MiB over 8 GPUs: 5 us + 2 * 7/8 * 2^20 B / 450e9 B/s.
  const double ar_us = 5 + 2 * 7.0 / 8 * 1048576 / 450e9 * 1e6;
  CHECK(ar_us == doctest::Approx(9.0777).epsilon(1e-4));
  bool found_ar = false;
  for (const CollectiveEntry &c : t->collectives)
    if (c.op == "all-reduce" && c.bytes == 1048576 &&
        c.devices_per_group == 8) {
      found_ar = true;
      CHECK(1e6 * c.bytes / c.throughput_bytes_per_s == doctest::Approx(ar_us));
    }
  CHECK(found_ar);
}

TEST_CASE("checked-in analytical table matches the generator") {
  const std::string path = std::string(SHARDLAB_SOURCE_DIR) +
                           "/examples/tables/h100_analytical.shardlab.json";
  PerfTable generated = generateAnalyticalTable(*findHardwarePreset("h100"));
  REQUIRE(checkFullGemmGrid(generated, "bf16xbf16->bf16"));
  Result<PerfTable> loaded = loadPerfTable(path);
  REQUIRE(loaded);
  CHECK(loaded->metadata.source == "analytical");
  CHECK(serializePerfTable(*loaded) == serializePerfTable(generated));
  auto mi = MatmulInterpolator::create(*loaded, GemmTableKind::Default,
                                       EstimateMode::Compatible);
  GemmQuery q{{1, 1000, 3000, 700}, "bf16", "bf16", "bf16"};
  CHECK(mi->estimateTime(q)->time_us > 0);
}

TEST_CASE("every preset says where each of its numbers comes from") {
  for (const std::string &name : hardwarePresetNames()) {
    const HardwarePreset p = *findHardwarePreset(name);
    CHECK(p.nic_bytes_per_s > 0);
    CHECK(p.nvlink_bytes_per_s > 0);
    CHECK(p.device_memory_bytes > 0);
    for (const char *field :
         {"peak_flop_per_s", "hbm_bytes_per_s", "device_memory_bytes",
          "nvlink_bytes_per_s", "gpus_per_node", "nic_bytes_per_s", "gemm"}) {
      INFO(name << " " << field);
      CHECK(p.sources.count(field) == 1);
      if (p.sources.count(field))
        CHECK_FALSE(p.sources.at(field).empty());
    }
  }
}

namespace {

double gemmRate(const PerfTable &table, int64_t m, int64_t n, int64_t k,
                const std::string &dtype = "bf16") {
  auto gemms = MatmulInterpolator::create(table, MatmulOptions{});
  REQUIRE(gemms);
  auto e = gemms->estimateTime({{1, m, k, n}, dtype, dtype, dtype});
  REQUIRE(e);
  return 2.0 * double(m) * double(n) * double(k) / (e->time_us * 1e-6);
}

} // namespace

TEST_CASE("a preset without a measured GEMM table takes H100's measured "
          "efficiency, not the datasheet peak") {
  const HardwarePreset h100 = *findHardwarePreset("h100");
  const HardwarePreset a100 = *findHardwarePreset("a100");
  const PerfTable measured = presetTable(h100);
  const PerfTable carried = presetTable(a100);
  // A compute-bound shape: the efficiency (rate / peak) is the same on both
  // (their rooflines differ by the peak ratio up to the 5% memory term).
  const double h100_eff = gemmRate(measured, 4096, 4096, 4096) / 989.4e12;
  const double a100_eff = gemmRate(carried, 4096, 4096, 4096) / 312e12;
  CHECK(h100_eff < 0.9);
  CHECK(a100_eff == doctest::Approx(h100_eff).epsilon(0.02));
  // Never above the device's peak, anywhere on the grid (f32 GEMMs run as
  // TF32 on tensor cores, as in the measured table).
  for (const GemmEntry &g : carried.gemms)
    CHECK(g.flop_per_s <=
          *peakFlopRate(a100, g.lhs_dtype == "f32" ? "tf32" : g.lhs_dtype) *
              1.0001);
  // The efficiency is against each device's roofline, the result's bytes
  // included: on the grid's point of least arithmetic intensity (its
  // written result dominating), the carried rate is the measured one times
  // the ratio of the two rooflines of that point.
  const GemmEntry *sparse = nullptr;
  for (const GemmEntry &g : measured.gemms)
    if (g.lhs_dtype == "bf16" && g.out_dtype == "bf16" &&
        (!sparse || g.k < sparse->k ||
         (g.k == sparse->k && g.m * g.n > sparse->m * sparse->n)))
      sparse = &g;
  REQUIRE(sparse);
  const GemmEntry *same = nullptr;
  for (const GemmEntry &g : carried.gemms)
    if (g.lhs_dtype == "bf16" && g.out_dtype == "bf16" && g.b == sparse->b &&
        g.m == sparse->m && g.n == sparse->n && g.k == sparse->k)
      same = &g;
  REQUIRE(same);
  const auto roofline = [&](const HardwarePreset &hw) {
    FusionQuery q;
    q.flops = 2.0 * double(sparse->b * sparse->m) * double(sparse->n) *
              double(sparse->k);
    q.bytes_read = 2 * sparse->b * (sparse->m + sparse->n) * sparse->k;
    q.bytes_written = 2 * sparse->b * sparse->m * sparse->n;
    q.dtype = "bf16";
    q.add_launch_overhead = false;
    return fusionRooflineEstimate(hw, q)->time_us;
  };
  CAPTURE(sparse->m);
  CAPTURE(sparse->n);
  CAPTURE(sparse->k);
  CHECK(same->flop_per_s / sparse->flop_per_s ==
        doctest::Approx(roofline(h100) / roofline(a100)));
  // Opting out gives the roofline at the datasheet peak.
  HardwarePreset at_peak = a100;
  at_peak.gemm_efficiency_from = "";
  CHECK(gemmRate(presetTable(at_peak), 4096, 4096, 4096) / 312e12 > 0.95);
  CHECK(presetGemmSource(a100).find("h100") != std::string::npos);
}

TEST_CASE("f16 GEMMs take bf16's measured rates, not the datasheet peak") {
  // No table measured f16; the tensor cores run it at bf16's peak on every
  // preset, so it takes bf16's points (before, it had no key and the
  // schedule costed it at the roofline: the datasheet peak).
  for (const char *name : {"h100", "a100"}) {
    CAPTURE(name);
    const HardwarePreset hw = *findHardwarePreset(name);
    const PerfTable table = presetTable(hw);
    for (int64_t size : {512, 4096})
      CHECK(gemmRate(table, size, size, size, "f16") ==
            doctest::Approx(gemmRate(table, size, size, size, "bf16")));
    CHECK(gemmRate(table, 4096, 4096, 4096, "f16") <
          0.9 * *peakFlopRate(hw, "f16"));
    CHECK(presetGemmSource(hw).find("f16 GEMMs at bf16's rates") !=
          std::string::npos);
  }
}
