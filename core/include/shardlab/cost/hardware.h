// Hardware presets (H100 SXM, H200, B200, A100, or user-defined JSON) and
// the analytical models that need them: XLA's fusion roofline
// (compute + memory - 0.95 * min, plus launch overhead), an NVLink ring model
// for intra-node collectives, and analytical default tables built from both.
#pragma once

#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/estimate.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/support/result.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::cost {

struct HardwarePreset {
  std::string name;        // "h100", ...
  std::string device_name; // name XLA's SoL defaults are keyed by
  std::string sm_version;  // "sm_90", ...
  int64_t sm_count = 0;
  double clock_ghz = 0;
  double hbm_bytes_per_s = 0;
  double nvlink_bytes_per_s = 0; // per GPU, per direction
  int64_t gpus_per_node = 8;
  std::map<std::string, double> peak_flop_per_s; // dense, by dtype
  std::string source;                            // public references
  /// The GPU's own NIC to other nodes, per direction (0: unknown; the
  /// S-curve then takes XLA's defaults).
  double nic_bytes_per_s = 0;
  /// Where each number comes from, by field name ("peak_flop_per_s",
  /// "hbm_bytes_per_s", "device_memory_bytes", "nvlink_bytes_per_s",
  /// "gpus_per_node", "nic_bytes_per_s"): a datasheet, or a measurement.
  std::map<std::string, std::string> sources;
  int64_t device_memory_bytes = 0; // what the CUDA driver reports; 0: unknown
  /// The floor every kernel pays (launch); no op is estimated below it.
  double kernel_launch_us = 1.0;
  /// XLA device key of the measured GEMM rates built in (XLA's own table,
  /// third_party/xla-perf-tables), or "" when none was measured.
  std::string gemm_table_device;
  /// Without a measured table: the built-in preset whose measured GEMM
  /// efficiency per shape (rate / its roofline) this device is assumed to
  /// reach against its own roofline ("h100" by default); "" for the
  /// roofline at the datasheet peak.
  std::string gemm_efficiency_from = "h100";
};

/// Built-in presets: h100, h200, b200, a100.
Result<HardwarePreset> findHardwarePreset(std::string_view name);
std::vector<std::string> hardwarePresetNames();
/// A user-defined preset from JSON: {"name", "hbm_bytes_per_s",
/// "nvlink_bytes_per_s", "peak_flop_per_s": {"bf16": ...}, ...}.
Result<HardwarePreset> parseHardwarePreset(std::string_view json_text);
/// Peak rate for a dtype: exact key, else f32 for wide types, else bf16.
Result<double> peakFlopRate(const HardwarePreset &hw, std::string_view dtype);

inline constexpr double kKernelLaunchOverheadUs = 1.0;
inline constexpr double kNcclKernelLaunchOverheadUs = 5.0;
inline constexpr double kMemoryComputeParallelism = 0.95;

struct FusionQuery {
  double flops = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  std::string dtype = "f32";
  bool add_launch_overhead = true;
};

/// XLA's roofline: exec = compute + memory - 0.95 * min(compute, memory).
Result<Estimate> fusionRooflineEstimate(const HardwarePreset &hw,
                                        const FusionQuery &q);

/// NVLink ring collective inside one node: NCCL launch + algorithm factor x
/// bytes / NVLink bandwidth (AR 2(N-1)/N, AG/RS/A2A (N-1)/N, permute 1).
Result<Estimate> intraNodeCollectiveEstimate(const HardwarePreset &hw,
                                             CollectiveOp op, int64_t bytes,
                                             int64_t group_size);

/// An analytical table (`"source": "analytical"`) from the models above:
/// collectives over 1 KiB..1 GiB for groups of 2, 4 and 8, and a full
/// power-of-two GEMM grid for bf16 and f32.
PerfTable generateAnalyticalTable(const HardwarePreset &hw);

/// The table a preset stands for when no table is given: the analytical
/// collectives, and the measured GEMM rates built in when the preset has
/// them (h100: XLA's sm_90 table, b200: sm_100). Otherwise the GEMM points
/// of `gemm_efficiency_from`'s table, each at the efficiency measured there
/// against its roofline times this device's roofline (both without the
/// launch floor):
///   rate(a100, shape) = rate(h100, shape) * roof(a100, shape) /
///                       roof(h100, shape)
/// e.g. a bf16 4096^3 GEMM measured at 80% of H100's 989 TFLOP/s is taken
/// as 80% of A100's 312. f32 GEMMs are rated against the TF32 peak (XLA's
/// default precision runs them on tensor cores). Dtypes the device has no
/// peak for are left out.
/// With no reference, the analytical grid at the datasheet peak.
PerfTable presetTable(const HardwarePreset &hw);

/// Where a preset's GEMM rates come from, in one line.
std::string presetGemmSource(const HardwarePreset &hw);

/// A warning when `table` says it was measured on another device than `hw`
/// describes (sm_version or device name); "" when they agree or one side
/// does not say.
std::string deviceMismatch(const HardwarePreset &hw, const PerfTable &table);

} // namespace shardlab::cost
