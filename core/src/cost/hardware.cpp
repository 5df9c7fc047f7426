// Built-in hardware presets with their public sources, and user presets.
#include "shardlab/cost/hardware.h"
#include "json_fields.h"

namespace shardlab::cost {
namespace {

HardwarePreset H100() {
  // NVIDIA H100 Tensor Core GPU datasheet (SXM5): dense BF16/FP16 989.4,
  // FP8 1978.9, TF32 494.7 TFLOP/s; 900 GB/s NVLink (bidirectional);
  // HBM bandwidth, SM count and clock as in XLA's TestGpuDeviceInfo.
  // FP32 = 132 SMs x 128 lanes x 2 x 1.98 GHz (derived).
  HardwarePreset h{"h100",  "NVIDIA H100 80GB HBM3",
                   "sm_90", 132,
                   1.98,    3352320000000.0,
                   450e9,   8,
                   {},      ""};
  h.peak_flop_per_s = {{"bf16", 989.4e12}, {"f16", 989.4e12}, {"f8", 1978.9e12},
                       {"tf32", 494.7e12}, {"f32", 66.9e12},  {"f64", 33.5e12}};
  h.source = "NVIDIA H100 datasheet; XLA gpu_device_info_for_tests.cc";
  h.device_memory_bytes = 84978434048; // XLA's TestGpuDeviceInfo (80 GB)
  h.gemm_table_device = "sm_90";       // XLA's measured GEMM table
  return h;
}

HardwarePreset H200() {
  // NVIDIA H200 datasheet (SXM): same compute as H100 SXM, 4.8 TB/s HBM3e,
  // 900 GB/s NVLink (bidirectional).
  HardwarePreset h = H100();
  h.name = "h200";
  h.device_name = "NVIDIA H200";
  h.hbm_bytes_per_s = 4.8e12;
  h.source = "NVIDIA H200 datasheet";
  h.gemm_table_device = ""; // not measured on H200 (faster HBM than H100)
  h.device_memory_bytes = 150754820096; // cudaMemGetInfo total, 141 GB part
  return h;
}

HardwarePreset B200() {
  // NVIDIA HGX B200 datasheet, per GPU: dense FP8 4.5, BF16 2.25, TF32 1.1
  // PFLOP/s; 8 TB/s HBM3e; 1.8 TB/s NVLink 5 (bidirectional). SMs and clock
  // as in XLA's TestGpuDeviceInfo; FP32 = 148 x 128 x 2 x 1.965 GHz
  // (derived).
  HardwarePreset h{
      "b200", "NVIDIA B200", "sm_100_B200", 148, 1.965, 8e12, 900e9, 8, {}, ""};
  h.peak_flop_per_s = {{"bf16", 2.25e15}, {"f16", 2.25e15}, {"f8", 4.5e15},
                       {"tf32", 1.1e15},  {"f32", 74.4e12}, {"f64", 40e12}};
  h.source = "NVIDIA HGX B200 datasheet; XLA gpu_device_info_for_tests.cc";
  h.device_memory_bytes = 193273528320; // XLA's TestGpuDeviceInfo (180 GB)
  h.gemm_table_device = "sm_100";       // XLA's measured GEMM table
  return h;
}

HardwarePreset A100() {
  // NVIDIA A100 datasheet (80GB SXM): dense BF16/FP16 312, TF32 156, FP32
  // 19.5, FP64 9.7 TFLOP/s; 2,039 GB/s HBM2e; 600 GB/s NVLink
  // (bidirectional); 108 SMs at 1.41 GHz boost.
  HardwarePreset h{
      "a100", "NVIDIA A100-SXM4-80GB", "sm_80", 108, 1.41, 2039e9, 300e9, 8, {},
      ""};
  h.peak_flop_per_s = {{"bf16", 312e12},
                       {"f16", 312e12},
                       {"tf32", 156e12},
                       {"f32", 19.5e12},
                       {"f64", 9.7e12}};
  h.source = "NVIDIA A100 datasheet";
  h.device_memory_bytes = 85899345920; // 80 GiB
  return h;
}

} // namespace

std::vector<std::string> hardwarePresetNames() {
  return {"h100", "h200", "b200", "a100"};
}

Result<HardwarePreset> findHardwarePreset(std::string_view name) {
  for (HardwarePreset p : {H100(), H200(), B200(), A100()})
    if (p.name == name)
      return p;
  return makeError("unknown hardware preset '" + std::string(name) +
                   "' (known: h100, h200, b200, a100)");
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
