// The tables presets stand for: analytical collectives plus, for h100 and
// b200, XLA's measured GEMM rates (xla_gemm_presets.inc, generated from
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

} // namespace

PerfTable presetTable(const HardwarePreset &hw) {
  PerfTable table = generateAnalyticalTable(hw);
  if (hw.gemm_table_device.empty())
    return table;
  table.gemms.clear();
  for (const MeasuredGemm &g : kXlaGemms) {
    if (g.device != hw.gemm_table_device)
      continue;
    Result<std::vector<std::string>> dtypes = splitGemmDtypeKey(g.dtype_key);
    if (!dtypes)
      continue;
    table.gemms.push_back({g.b, g.m, g.n, g.k, (*dtypes)[0], (*dtypes)[1],
                           (*dtypes)[2], std::nullopt, g.flop_per_s});
  }
  table.metadata.description += " GEMM rates measured: " + presetGemmSource(hw);
  return table;
}

std::string presetGemmSource(const HardwarePreset &hw) {
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
