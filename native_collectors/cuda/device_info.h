// What the collectors learn from the CUDA runtime and (if the driver has
// it) NVML: visible devices, names, SM versions, memory, L2, clocks,
// versions and the local interconnect. Fills a RunEnvironment (metadata.h).
#pragma once

#include "shardlab/collectors/metadata.h"

#include <cuda_runtime_api.h>
#include <string>
#include <vector>

namespace shardlab::collectors {

/// Throws CollectorError("<what>: <CUDA message>") on failure.
void cudaCheck(cudaError_t err, const std::string &what);
/// Visible CUDA devices; throws "no CUDA device ..." when there are none or
/// the driver is missing.
int cudaDeviceCount();
/// Device name, SM, versions, clocks (NVML when loadable) and the
/// recordable environment for `local_devices` (the first one describes the
/// table). gpu_count / nodes / partition are the caller's.
RunEnvironment probeEnvironment(const std::vector<int> &local_devices);
/// "P2P between all N local GPUs" or "no P2P between some local GPUs".
std::string localInterconnect(const std::vector<int> &devices);
/// L2 cache size of `device` in bytes.
int64_t L2CacheBytes(int device);
/// Free and total memory of the current device.
void memoryInfo(int64_t *free_bytes, int64_t *total_bytes);

} // namespace shardlab::collectors
