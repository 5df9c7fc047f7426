// The tables presets stand for: analytical collectives plus, for h100 and
// b200, XLA's measured GEMM rates (for the others, H100's measured
// efficiency carried over) (xla_gemm_presets.inc, generated from
// XLA's default GemmPerfTable by scripts/gen_xla_gemm_presets.py; Apache-2.0,
// see third_party/xla-perf-tables).
#include "shardlab/cost/hardware.h"

#include <string_view>

namespace shardlab::cost {
namespace {

struct MeasuredGemm {
  std::string_view device;
  int64_t b, m, n, k;
  std::string_view dtype_key;
  double flop_per_s;
};

constexpr MeasuredGemm kXlaGemms[] = {
#include "xla_gemm_presets.inc"
};

/// Device keys agree when equal or when one extends the other with "_..."
/// (XLA's "sm_100" and "sm_100_B200").
bool sameDeviceKey(std::string_view a, std::string_view b) {
  if (a.size() > b.size())
    std::swap(a, b);
  return b.substr(0, a.size()) == a &&
         (b.size() == a.size() || b[a.size()] == '_');
}

std::vector<GemmEntry> measuredGemms(std::string_view device) {
  std::vector<GemmEntry> out;
  for (const MeasuredGemm &g : kXlaGemms) {
    if (g.device != device)
      continue;
    Result<std::vector<std::string>> dtypes = splitGemmDtypeKey(g.dtype_key);
    if (!dtypes)
      continue;
    out.push_back({g.b, g.m, g.n, g.k, (*dtypes)[0], (*dtypes)[1], (*dtypes)[2],
                   std::nullopt, g.flop_per_s});
  }
  return out;
}

/// The peak a GEMM of `dtype` runs at: f32 GEMMs on tensor cores as TF32
/// (XLA's default precision; XLA's H100 table measures f32 at up to 402
/// TFLOP/s, six times the FP32 peak), f8 variants as f8.
std::string gemmPeakKey(const std::string &dtype) {
  if (dtype == "f32")
    return "tf32";
  return dtype.rfind("f8", 0) == 0 ? std::string("f8") : dtype;
}

/// The roofline time of a GEMM on `hw`, without the launch floor; 0 when
/// `hw` has no peak of its own for the dtype.
double rooflineUs(const HardwarePreset &hw, const GemmEntry &g) {
  const std::string peak = gemmPeakKey(g.lhs_dtype);
  if (!hw.peak_flop_per_s.count(peak))
    return 0;
  FusionQuery q;
  q.flops = 2.0 * double(g.b) * double(g.m) * double(g.n) * double(g.k);
  q.bytes_read = g.b * (g.m * g.k * dtypeBytes(g.lhs_dtype) +
                        g.k * g.n * dtypeBytes(g.rhs_dtype));
  q.bytes_written = g.b * g.m * g.n * dtypeBytes(g.out_dtype);
  q.dtype = peak;
  q.add_launch_overhead = false;
  Result<Estimate> e = fusionRooflineEstimate(hw, q);
  return e ? e->time_us : 0;
}

/// `reference`'s measured points carried to `hw` at the same efficiency.
std::vector<GemmEntry> transferredGemms(const HardwarePreset &hw,
                                        const HardwarePreset &reference) {
  std::vector<GemmEntry> out;
  for (GemmEntry g : measuredGemms(reference.gemm_table_device)) {
    const double ref_us = rooflineUs(reference, g);
    const double our_us = rooflineUs(hw, g);
    if (!(ref_us > 0) || !(our_us > 0) || !(g.flop_per_s > 0))
      continue;
    g.flop_per_s *= ref_us / our_us;
    out.push_back(std::move(g));
  }
  return out;
}

const HardwarePreset *efficiencyReference(const HardwarePreset &hw,
                                          HardwarePreset &storage) {
  if (!hw.gemm_table_device.empty() || hw.gemm_efficiency_from.empty())
    return nullptr;
  Result<HardwarePreset> ref = findHardwarePreset(hw.gemm_efficiency_from);
  if (!ref || ref->gemm_table_device.empty())
    return nullptr;
  storage = *ref;
  return &storage;
}

// f16 runs on the same tensor cores at the same datasheet peak as bf16 (on
// every preset); no table measured it, so its GEMMs take bf16's points
// rather than no key at all (which the schedule costs at the roofline, i.e.
// at the datasheet peak).
bool sameHalfPrecisionPeak(const HardwarePreset &hw) {
  const auto f16 = hw.peak_flop_per_s.find("f16");
  const auto bf16 = hw.peak_flop_per_s.find("bf16");
  return f16 != hw.peak_flop_per_s.end() && bf16 != hw.peak_flop_per_s.end() &&
         f16->second == bf16->second;
}

void addF16AtBf16Rates(const HardwarePreset &hw, PerfTable &table) {
  if (!sameHalfPrecisionPeak(hw))
    return;
  std::vector<GemmEntry> f16;
  for (const GemmEntry &g : table.gemms) {
    if (g.lhs_dtype == "f16")
      return; // measured: keep it
    if (g.lhs_dtype == "bf16" && g.rhs_dtype == "bf16" &&
        g.out_dtype == "bf16") {
      GemmEntry copy = g;
      copy.lhs_dtype = copy.rhs_dtype = copy.out_dtype = "f16";
      f16.push_back(std::move(copy));
    }
  }
  table.gemms.insert(table.gemms.end(), f16.begin(), f16.end());
}

} // namespace

PerfTable presetTable(const HardwarePreset &hw) {
  PerfTable table = generateAnalyticalTable(hw);
  HardwarePreset storage;
  if (const HardwarePreset *ref = efficiencyReference(hw, storage)) {
    std::vector<GemmEntry> gemms = transferredGemms(hw, *ref);
    if (!gemms.empty())
      table.gemms = std::move(gemms);
  } else if (!hw.gemm_table_device.empty()) {
    table.gemms = measuredGemms(hw.gemm_table_device);
  }
  addF16AtBf16Rates(hw, table);
  table.metadata.description += " GEMM rates: " + presetGemmSource(hw);
  return table;
}

static std::string presetGemmRates(const HardwarePreset &hw);

std::string presetGemmSource(const HardwarePreset &hw) {
  const std::string f16 =
      sameHalfPrecisionPeak(hw)
          ? "; f16 GEMMs at bf16's rates (the same datasheet peak)"
          : "";
  return presetGemmRates(hw) + f16;
}

static std::string presetGemmRates(const HardwarePreset &hw) {
  HardwarePreset storage;
  if (const HardwarePreset *ref = efficiencyReference(hw, storage))
    return "XLA's measured GemmPerfTable for " + ref->name + " (" +
           ref->gemm_table_device +
           "), each shape at the efficiency measured there against its "
           "roofline, times this preset's roofline";
  if (hw.gemm_table_device.empty())
    return "analytical roofline grid from the preset's peak numbers";
  return "XLA's measured GemmPerfTable, device " + hw.gemm_table_device +
         " (openxla/xla, Apache-2.0; third_party/xla-perf-tables)";
}

std::string deviceMismatch(const HardwarePreset &hw, const PerfTable &table) {
  const TableMetadata &m = table.metadata;
  if (!m.sm_version.empty() && !hw.sm_version.empty() &&
      !sameDeviceKey(m.sm_version, hw.sm_version))
    return "the table was measured on " + m.sm_version + " but preset '" +
           hw.name + "' is " + hw.sm_version +
           "; estimates mix two devices (choose the matching --preset)";
  if (m.sm_version.empty() && !m.device_name.empty() &&
      !hw.device_name.empty() && m.device_name != hw.device_name)
    return "the table was measured on '" + m.device_name + "' but preset '" +
           hw.name + "' is '" + hw.device_name +
           "'; estimates mix two devices (choose the matching --preset)";
  return "";
}

} // namespace shardlab::cost
