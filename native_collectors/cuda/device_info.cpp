// CUDA runtime and NVML queries for table metadata.
#include "device_info.h"

#include "progress.h"

#include <dlfcn.h>

extern char **environ;

namespace shardlab::collectors {
namespace {

// The few NVML entry points used, loaded at run time so the programs start
// (and --dry-run works) on machines without the NVIDIA driver.
struct Nvml {
  void *lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char *, void **) = nullptr;
  int (*clock)(void *, int, unsigned *) = nullptr;
  int (*max_clock)(void *, int, unsigned *) = nullptr;
  int (*driver)(char *, unsigned) = nullptr;

  Nvml() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return;
    load(&init, "nvmlInit_v2");
    load(&shutdown, "nvmlShutdown");
    load(&by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    load(&clock, "nvmlDeviceGetClockInfo");
    load(&max_clock, "nvmlDeviceGetMaxClockInfo");
    load(&driver, "nvmlSystemGetDriverVersion");
    if (!init || !shutdown || init() != 0)
      init = nullptr;
  }
  ~Nvml() {
    if (init)
      shutdown();
    if (lib)
      dlclose(lib);
  }
  template <class F> void load(F *f, const char *name) {
    *f = reinterpret_cast<F>(dlsym(lib, name));
  }
  bool ok() const { return init && by_pci && clock && max_clock && driver; }
};

constexpr int kNvmlClockGraphics = 0, kNvmlClockSm = 1, kNvmlClockMem = 2;

void addClocks(const Nvml &nvml, int device, RunEnvironment *env) {
  char bus[32] = {};
  void *handle = nullptr;
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess ||
      nvml.by_pci(bus, &handle) != 0)
    return;
  unsigned mhz = 0;
  if (nvml.clock(handle, kNvmlClockSm, &mhz) == 0 && mhz > 0)
    env->clocks_mhz["sm_at_start"] = mhz;
  if (nvml.max_clock(handle, kNvmlClockSm, &mhz) == 0 && mhz > 0)
    env->clocks_mhz["sm_max"] = mhz;
  if (nvml.max_clock(handle, kNvmlClockGraphics, &mhz) == 0 && mhz > 0)
    env->clocks_mhz["graphics_max"] = mhz;
  if (nvml.max_clock(handle, kNvmlClockMem, &mhz) == 0 && mhz > 0)
    env->clocks_mhz["memory_max"] = mhz;
}

} // namespace

void cudaCheck(cudaError_t err, const std::string &what) {
  if (err != cudaSuccess)
    throw CollectorError(what + ": " + cudaGetErrorString(err));
}

int cudaDeviceCount() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0)
    throw CollectorError(
        std::string("no CUDA device available (") +
        (err != cudaSuccess ? cudaGetErrorString(err) : "0 devices visible") +
        "); run on a GPU machine, check CUDA_VISIBLE_DEVICES, or use "
        "--dry-run to list the sweep");
  return n;
}

std::string localInterconnect(const std::vector<int> &devices) {
  if (devices.size() < 2)
    return "";
  for (int a : devices)
    for (int b : devices) {
      int ok = 0;
      if (a != b && (cudaDeviceCanAccessPeer(&ok, a, b) != cudaSuccess || !ok))
        return "no P2P between some local GPUs";
    }
  return "P2P between all " + std::to_string(devices.size()) + " local GPUs";
}

RunEnvironment probeEnvironment(const std::vector<int> &local_devices) {
  RunEnvironment env;
  const int dev = local_devices.empty() ? 0 : local_devices[0];
  cudaDeviceProp prop{};
  cudaCheck(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  env.device_name = prop.name;
  env.sm_major = prop.major, env.sm_minor = prop.minor;
  cudaDriverGetVersion(&env.cuda_driver);
  cudaRuntimeGetVersion(&env.cuda_runtime);
  env.interconnect = localInterconnect(local_devices);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess &&
      khz > 0)
    env.clocks_mhz["sm_peak_cuda"] = khz / 1000.0;
  const Nvml nvml;
  if (nvml.ok()) {
    char version[96] = {};
    if (nvml.driver(version, sizeof version) == 0)
      env.nvidia_driver = version;
    addClocks(nvml, dev, &env);
  }
  std::vector<std::string> all;
  for (char **e = environ; e && *e; ++e)
    all.emplace_back(*e);
  env.env = selectEnv(all);
  return env;
}

int64_t L2CacheBytes(int device) {
  int bytes = 0;
  cudaCheck(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device),
            "L2 cache size");
  return bytes;
}

void memoryInfo(int64_t *free_bytes, int64_t *total_bytes) {
  size_t f = 0, t = 0;
  cudaCheck(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
  *free_bytes = static_cast<int64_t>(f);
  *total_bytes = static_cast<int64_t>(t);
}

} // namespace shardlab::collectors
