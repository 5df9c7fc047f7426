// Table metadata for measured tables: what ran (device, SM, GPU count and
// topology, driver/CUDA/NCCL/cuBLASLt versions, clocks), when (UTC date) and
// how (collector name, version, arguments, NCCL_* environment). Pure: the
// CUDA side fills a RunEnvironment, this file turns it into metadata.
#pragma once

#include "shardlab/cost/perf_table.h"

#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace shardlab::collectors {

inline constexpr const char *kCollectorVersion = "0.1.0";

/// What the CUDA side found; 0 / empty = unknown.
struct RunEnvironment {
  std::string device_name;
  int sm_major = 0, sm_minor = 0;
  int64_t gpu_count = 0, nodes = 1, gpus_per_node = 0, partition_size = 0;
  std::string interconnect; // e.g. "P2P between all local GPUs"
  int cuda_driver = 0, cuda_runtime = 0, nccl = 0;
  long cublaslt = 0;
  std::string nvidia_driver;
  std::map<std::string, double> clocks_mhz;
  std::vector<std::string> env; // "NAME=value" entries worth recording
};

/// "sm_90" for (9, 0).
std::string smVersion(int major, int minor);
/// 13000 -> "13.0", 12080 -> "12.8" (CUDA's 1000*major + 10*minor).
std::string cudaVersionString(int version);
/// 22809 -> "2.28.9" (NCCL >= 2.9 codes), 2708 -> "2.7.8" (older codes).
std::string ncclVersionString(int code);
/// 130100 -> "13.1.0" (cuBLASLt's major*10000 + minor*100 + patch).
std::string cublasVersionString(long code);
/// 2026-07-09T12:34:56Z.
std::string isoDateUtc(std::time_t t);
/// The environment entries a table records: NCCL_*, CUDA_VISIBLE_DEVICES,
/// NVIDIA_TF32_OVERRIDE, CUBLAS_WORKSPACE_CONFIG (sorted).
std::vector<std::string> selectEnv(const std::vector<std::string> &environ);
/// "2 nodes x 8 GPUs, P2P ..." from the environment.
std::string topologyText(const RunEnvironment &env);

/// Metadata with source "measured".
cost::TableMetadata buildMetadata(const RunEnvironment &env,
                                  const std::string &collector,
                                  const std::vector<std::string> &args,
                                  const std::string &description,
                                  std::time_t now);

} // namespace shardlab::collectors
