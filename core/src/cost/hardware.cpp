// Built-in hardware presets with their public sources, and user presets.
#include "shardlab/cost/hardware.h"
#include "json_fields.h"

namespace shardlab::cost {
namespace {

// Every number of a preset names its source. The GPUs are the SXM parts of
// NVIDIA's 8-GPU systems (DGX/HGX); the NIC is the one each GPU has to the
// other nodes in those systems (one ConnectX port per GPU).

HardwarePreset H100() {
  HardwarePreset h{"h100",  "NVIDIA H100 80GB HBM3",
                   "sm_90", 132,
                   1.98,    3352320000000.0,
                   450e9,   8,
                   {},      ""};
  // FP32 = 132 SMs x 128 lanes x 2 x 1.98 GHz (derived; the datasheet's 67).
  h.peak_flop_per_s = {{"bf16", 989.4e12}, {"f16", 989.4e12}, {"f8", 1978.9e12},
                       {"tf32", 494.7e12}, {"f32", 66.9e12},  {"f64", 33.5e12}};
  h.source = "NVIDIA H100 datasheet; XLA gpu_device_info_for_tests.cc";
  h.device_memory_bytes = 84978434048; // XLA's TestGpuDeviceInfo (80 GB)
  h.gemm_table_device = "sm_90";       // XLA's measured GEMM table
  h.nic_bytes_per_s = 50e9;            // 400 Gb/s
  h.sources = {
      {"peak_flop_per_s",
       "NVIDIA H100 Tensor Core GPU datasheet, SXM5, dense (FP32 derived "
       "from 132 SMs x 128 lanes x 2 x 1.98 GHz)"},
      {"hbm_bytes_per_s",
       "XLA gpu_device_info_for_tests.cc (datasheet: 3.35 TB/s HBM3)"},
      {"device_memory_bytes", "XLA gpu_device_info_for_tests.cc (80 GB)"},
      {"nvlink_bytes_per_s",
       "NVIDIA H100 datasheet: NVLink 900 GB/s, both directions"},
      {"gpus_per_node", "NVIDIA DGX H100 datasheet: 8 GPUs"},
      {"nic_bytes_per_s",
       "NVIDIA DGX H100 datasheet: 8x ConnectX-7 400 Gb/s, one per GPU"},
      {"gemm", "XLA's measured H100 GEMM table (xla-perf-tables, sm_90)"}};
  return h;
}

HardwarePreset H200() {
  HardwarePreset h = H100();
  h.name = "h200";
  h.device_name = "NVIDIA H200";
  h.hbm_bytes_per_s = 4.8e12;
  h.source = "NVIDIA H200 datasheet";
  h.gemm_table_device = ""; // not measured on H200 (faster HBM than H100)
  h.device_memory_bytes = 150754820096; // cudaMemGetInfo total, 141 GB part
  h.sources["peak_flop_per_s"] =
      "NVIDIA H200 Tensor Core GPU datasheet, SXM, dense: as H100 SXM";
  h.sources["hbm_bytes_per_s"] = "NVIDIA H200 datasheet: 4.8 TB/s HBM3e";
  h.sources["device_memory_bytes"] =
      "cudaMemGetInfo total of a 141 GB H200 (H200 datasheet: 141 GB)";
  h.sources["nvlink_bytes_per_s"] =
      "NVIDIA H200 datasheet: NVLink 900 GB/s, both directions";
  h.sources["gpus_per_node"] = "NVIDIA DGX H200 datasheet: 8 GPUs";
  h.sources["nic_bytes_per_s"] =
      "NVIDIA DGX H200 datasheet: 8x ConnectX-7 400 Gb/s, one per GPU";
  h.sources["gemm"] =
      "XLA's measured H100 GEMM efficiency per shape, at H200's peak and "
      "bandwidth (no H200 table measured)";
  return h;
}

HardwarePreset B200() {
  // SMs and clock as in XLA's TestGpuDeviceInfo.
  HardwarePreset h{
      "b200", "NVIDIA B200", "sm_100_B200", 148, 1.965, 8e12, 900e9, 8, {}, ""};
  h.peak_flop_per_s = {{"bf16", 2.25e15}, {"f16", 2.25e15}, {"f8", 4.5e15},
                       {"tf32", 1.1e15},  {"f32", 74.4e12}, {"f64", 40e12}};
  h.source = "NVIDIA HGX B200 datasheet; XLA gpu_device_info_for_tests.cc";
  h.device_memory_bytes = 193273528320; // XLA's TestGpuDeviceInfo (180 GB)
  h.gemm_table_device = "sm_100";       // XLA's measured GEMM table
  h.nic_bytes_per_s = 50e9;             // 400 Gb/s
  h.sources = {
      {"peak_flop_per_s",
       "NVIDIA HGX B200 datasheet, per GPU, dense: FP8 4.5, BF16 2.25, TF32 "
       "1.1 PFLOP/s (FP32 derived from 148 SMs x 128 lanes x 2 x 1.965 GHz)"},
      {"hbm_bytes_per_s", "NVIDIA HGX B200 datasheet: 8 TB/s HBM3e"},
      {"device_memory_bytes", "XLA gpu_device_info_for_tests.cc (180 GB)"},
      {"nvlink_bytes_per_s",
       "NVIDIA HGX B200 datasheet: NVLink 5 1.8 TB/s, both directions"},
      {"gpus_per_node", "NVIDIA DGX B200 datasheet: 8 GPUs"},
      {"nic_bytes_per_s",
       "NVIDIA DGX B200 datasheet: 8x ConnectX-7 400 Gb/s, one per GPU (XLA's "
       "S-curve B200 entry assumes twice that; pass --sol-options "
       "nic_speed_gbps=50 to use it)"},
      {"gemm", "XLA's measured B200 GEMM table (xla-perf-tables, sm_100)"}};
  return h;
}

HardwarePreset A100() {
  HardwarePreset h{
      "a100", "NVIDIA A100-SXM4-80GB", "sm_80", 108, 1.41, 2039e9, 300e9, 8, {},
      ""};
  h.peak_flop_per_s = {{"bf16", 312e12},
                       {"f16", 312e12},
                       {"tf32", 156e12},
                       {"f32", 19.5e12},
                       {"f64", 9.7e12}};
  h.source = "NVIDIA A100 datasheet; NVIDIA DGX A100 datasheet";
  h.device_memory_bytes = 85899345920; // 80 GiB
  h.nic_bytes_per_s = 25e9;            // 200 Gb/s
  h.sources = {
      {"peak_flop_per_s",
       "NVIDIA A100 Tensor Core GPU datasheet, SXM 80GB, dense: BF16/FP16 "
       "312, TF32 156, FP32 19.5, FP64 9.7 TFLOP/s"},
      {"hbm_bytes_per_s", "NVIDIA A100 datasheet: 2,039 GB/s HBM2e (80GB SXM)"},
      {"device_memory_bytes",
       "NVIDIA A100 datasheet: 80 GB (81,920 MiB as nvidia-smi reports)"},
      {"nvlink_bytes_per_s",
       "NVIDIA A100 datasheet: NVLink 600 GB/s, both directions"},
      {"gpus_per_node", "NVIDIA DGX A100 datasheet: 8 GPUs"},
      {"nic_bytes_per_s",
       "NVIDIA DGX A100 datasheet: 8x ConnectX-6 200 Gb/s HDR InfiniBand, one "
       "per GPU"},
      {"gemm",
       "XLA's measured H100 GEMM efficiency per shape, at A100's peak and "
       "bandwidth (no A100 table measured)"}};
  return h;
}

// The 40 GB A100: the same chip, HBM2 instead of HBM2e.
HardwarePreset A100_40GB() {
  HardwarePreset h = A100();
  h.name = "a100-40gb";
  h.device_name = "NVIDIA A100-SXM4-40GB";
  h.hbm_bytes_per_s = 1555e9;
  h.device_memory_bytes = 42949672960; // 40 GiB
  h.sources["hbm_bytes_per_s"] =
      "NVIDIA A100 datasheet: 1,555 GB/s HBM2 (40GB SXM)";
  h.sources["device_memory_bytes"] =
      "NVIDIA A100 datasheet: 40 GB (40,960 MiB as nvidia-smi reports)";
  h.sources["nic_bytes_per_s"] =
      "NVIDIA DGX A100 datasheet (320 GB system): 8x ConnectX-6 200 Gb/s HDR "
      "InfiniBand, one per GPU";
  return h;
}

} // namespace

std::vector<std::string> hardwarePresetNames() {
  return {"h100", "h200", "b200", "a100", "a100-40gb"};
}

Result<HardwarePreset> findHardwarePreset(std::string_view name) {
  for (HardwarePreset p : {H100(), H200(), B200(), A100(), A100_40GB()})
    if (p.name == name)
      return p;
  return makeError("unknown hardware preset '" + std::string(name) +
                   "' (known: h100, h200, b200, a100, a100-40gb)");
}

Result<double> peakFlopRate(const HardwarePreset &hw, std::string_view dtype) {
  std::string key(dtype);
  if (key.rfind("f8", 0) == 0)
    key = "f8";
  auto it = hw.peak_flop_per_s.find(key);
  if (it == hw.peak_flop_per_s.end())
    it = hw.peak_flop_per_s.find(dtypeBytes(dtype) >= 4 ? "f32" : "bf16");
  if (it == hw.peak_flop_per_s.end() || !(it->second > 0))
    return makeError("preset '" + hw.name + "' has no peak rate for '" +
                     std::string(dtype) + "'");
  return it->second;
}

Result<HardwarePreset> parseHardwarePreset(std::string_view json_text) {
  Result<detail::json> root = detail::parseJsonText(json_text);
  if (!root)
    return root.error();
  std::vector<std::string> errors;
  detail::FieldReader r(*root, "preset", &errors);
  HardwarePreset h;
  r.string("name", &h.name, true);
  r.string("device_name", &h.device_name, false);
  r.string("sm_version", &h.sm_version, false);
  r.integer("sm_count", &h.sm_count, false, 0);
  r.integer("gpus_per_node", &h.gpus_per_node, false, 1);
  r.positive("clock_ghz", &h.clock_ghz, false);
  r.positive("hbm_bytes_per_s", &h.hbm_bytes_per_s, true);
  r.positive("nvlink_bytes_per_s", &h.nvlink_bytes_per_s, true);
  r.string("source", &h.source, false);
  r.integer("device_memory_bytes", &h.device_memory_bytes, false, 0);
  r.positive("kernel_launch_us", &h.kernel_launch_us, false);
  r.positive("nic_bytes_per_s", &h.nic_bytes_per_s, false);
  r.string("gemm_efficiency_from", &h.gemm_efficiency_from, false);
  const detail::json *peaks = r.get("peak_flop_per_s");
  if (!peaks || !peaks->is_object() || peaks->empty())
    r.fail("peak_flop_per_s", "an object of dtype -> FLOP/s", peaks);
  else
    for (auto it = peaks->begin(); it != peaks->end(); ++it)
      if (it->is_number() && it->get<double>() > 0)
        h.peak_flop_per_s[it.key()] = it->get<double>();
      else
        r.fail("peak_flop_per_s", "positive numbers", &*it);
  if (!errors.empty())
    return detail::joinErrors(errors);
  return h;
}

} // namespace shardlab::cost
