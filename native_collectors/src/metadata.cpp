// Metadata of measured tables.
#include "shardlab/collectors/metadata.h"

#include <algorithm>

namespace shardlab::collectors {

std::string smVersion(int major, int minor) {
  if (major <= 0)
    return "";
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::string cudaVersionString(int version) {
  if (version <= 0)
    return "";
  return std::to_string(version / 1000) + "." +
         std::to_string((version % 1000) / 10);
}

std::string ncclVersionString(int code) {
  if (code <= 0)
    return "";
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z
  // before.
  const int major_div = code >= 10000 ? 10000 : 1000;
  return std::to_string(code / major_div) + "." +
         std::to_string((code % major_div) / 100) + "." +
         std::to_string(code % 100);
}

std::string cublasVersionString(long code) {
  if (code <= 0)
    return "";
  return std::to_string(code / 10000) + "." +
         std::to_string((code % 10000) / 100) + "." +
         std::to_string(code % 100);
}

std::string isoDateUtc(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<std::string> selectEnv(const std::vector<std::string> &environ) {
  std::vector<std::string> out;
  for (const std::string &e : environ) {
    const std::string name = e.substr(0, e.find('='));
    if (name.rfind("NCCL_", 0) == 0 || name == "CUDA_VISIBLE_DEVICES" ||
        name == "NVIDIA_TF32_OVERRIDE" || name == "CUBLAS_WORKSPACE_CONFIG" ||
        name == "CUBLASLT_WORKSPACE_SIZE")
      out.push_back(e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string topologyText(const RunEnvironment &env) {
  std::string text = std::to_string(env.nodes) +
                     (env.nodes == 1 ? " node x " : " nodes x ") +
                     std::to_string(env.gpus_per_node) +
                     (env.gpus_per_node == 1 ? " GPU" : " GPUs");
  if (!env.interconnect.empty())
    text += ", " + env.interconnect;
  return text;
}

cost::TableMetadata buildMetadata(const RunEnvironment &env,
                                  const std::string &collector,
                                  const std::vector<std::string> &args,
                                  const std::string &description,
                                  std::time_t now) {
  cost::TableMetadata m;
  m.source = "measured";
  m.device_name = env.device_name;
  m.sm_version = smVersion(env.sm_major, env.sm_minor);
  m.topology = topologyText(env);
  m.gpu_count = env.gpu_count;
  m.partition_size = env.partition_size;
  m.clocks_mhz = env.clocks_mhz;
  const std::pair<const char *, std::string> versions[] = {
      {"cuda_driver", cudaVersionString(env.cuda_driver)},
      {"cuda_runtime", cudaVersionString(env.cuda_runtime)},
      {"nccl", ncclVersionString(env.nccl)},
      {"cublaslt", cublasVersionString(env.cublaslt)},
      {"nvidia_driver", env.nvidia_driver}};
  for (const auto &[key, value] : versions)
    if (!value.empty())
      m.software[key] = value;
  for (const std::string &e : env.env) {
    const size_t eq = e.find('=');
    m.software["env:" + e.substr(0, eq)] =
        eq == std::string::npos ? "" : e.substr(eq + 1);
  }
  m.date = isoDateUtc(now);
  m.collector_name = collector;
  m.collector_version = kCollectorVersion;
  m.collector_args = args;
  m.description = description;
  return m;
}

} // namespace shardlab::collectors
