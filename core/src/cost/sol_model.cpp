// XLA's S-curve (speed-of-light) network model for DCN collectives.
#include "shardlab/cost/sol_model.h"

#include <algorithm>
#include <cmath>

namespace shardlab::cost {
namespace {

constexpr float kNcclCostModelCoeff = 0.45f;

struct PlatformBase {
  const char *name;
  float launch_us, nic_gbps, chunk_prep_us, rtt_us, barrier_us, lane_gbps;
};

// XLA's per-device base values (sol_gpu_cost_model.cc); lane bandwidth is
// XLA's NVLink per-lane figure for sm_90 (20 GB/s), assumed 2x on B200.
constexpr PlatformBase kPlatforms[] = {
    {"NVIDIA H100 80GB HBM3", 100.0f, 55.56f, 13.34f, 68.89f, 1.5f, 20.0f},
    {"NVIDIA B200", 100.0f, 111.12f, 4.45f, 46.67f, 1.0f, 40.0f},
    {"<unknown>", 100.0f, 111.12f, 13.34f, 68.89f, 1.5f, 20.0f},
};

double scaled(float base) { return double(base * kNcclCostModelCoeff); }

} // namespace

SolConfig solPlatformDefaults(std::string_view device_name) {
  const PlatformBase *p = &kPlatforms[2];
  for (const PlatformBase &candidate : kPlatforms)
    if (device_name == candidate.name)
      p = &candidate;
  SolConfig c;
  c.nccl_op_launch_us = scaled(p->launch_us);
  c.nic_speed_gbps = scaled(p->nic_gbps);
  c.chunk_prep_us = scaled(p->chunk_prep_us);
  c.rtt_us = scaled(p->rtt_us);
  c.nvlink_barrier_us = p->barrier_us;
  c.nvlink_bw_per_lane_gbps = p->lane_gbps;
  return c;
}

namespace {

// XLA's S-curve terms for the preset's machine (see solDefaultsFor).
SolConfig solMachineDefaults(const HardwarePreset &hw) {
  if (!(hw.nic_bytes_per_s > 0))
    return solPlatformDefaults(hw.device_name);
  const PlatformBase *p = &kPlatforms[0]; // H100's latencies by default
  for (const PlatformBase &candidate : kPlatforms)
    if (hw.device_name == candidate.name)
      p = &candidate;
  constexpr double kH100NicBytesPerS = 50e9; // 400 Gb/s
  SolConfig c = solPlatformDefaults(p->name);
  c.nic_speed_gbps = scaled(float(double(kPlatforms[0].nic_gbps) *
                                  hw.nic_bytes_per_s / kH100NicBytesPerS));
  if (hw.gpus_per_node > 0)
    c.gpus_per_node = hw.gpus_per_node;
  return c;
}

} // namespace

SolConfig solDefaultsFor(const HardwarePreset &hw) {
  SolConfig c = solMachineDefaults(hw);
  c.tree_all_reduce = true;
  return c;
}

double transferDurationUs(const SolConfig &c, int64_t bytes) {
  return (1e6 * double(bytes)) / (1e9 * c.nic_speed_gbps) *
         (1 + c.header_overhead);
}

double chunkPrepUs(const SolConfig &c, int64_t bytes) {
  const int64_t chunks =
      bytes / c.chunk_size_bytes + (bytes % c.chunk_size_bytes != 0 ? 1 : 0);
  return double(chunks) * c.chunk_prep_us;
}

Result<int64_t> numGpusPerComm(const SolConfig &c, int64_t nodes,
                               SolCollective type, int64_t comms) {
  if (type == SolCollective::SendRecv)
    return int64_t{2};
  if (comms <= 0 || nodes <= 0 || c.gpus_per_node <= 0)
    return makeError("S-curve: nodes, communicators and gpus_per_node must "
                     "be positive");
  if (c.gpus_per_node % comms != 0)
    return makeError("S-curve: gpus_per_node (" +
                     std::to_string(c.gpus_per_node) +
                     ") must be a multiple of the number of communicators (" +
                     std::to_string(comms) + ")");
  return nodes * c.gpus_per_node / comms;
}

namespace {

Result<bool> checkConfig(const SolConfig &c, int64_t bytes, int64_t nodes) {
  if (!(c.nic_speed_gbps > 0) || c.chunk_size_bytes <= 0)
    return makeError("S-curve: nic_speed_gbps and chunk_size_bytes must be "
                     "positive");
  if (bytes < 0 || nodes <= 0)
    return makeError("S-curve: bytes must be >= 0 and nodes >= 1");
  return true;
}

double peerStepUs(const SolConfig &c, int64_t bytes) {
  return transferDurationUs(c, bytes) + chunkPrepUs(c, bytes) + c.rtt_us;
}

// XLA's ring over g GPUs, gpn of them on each node (their NICs carry a
// step's bytes side by side).
double ringOverUs(const SolConfig &c, int64_t buffer_bytes, int64_t g,
                  int64_t gpn, SolCollective type) {
  const bool send_recv = type == SolCollective::SendRecv;
  const int64_t per = send_recv ? buffer_bytes : buffer_bytes / g;
  const double step = c.ring_hop_us > 0 && !send_recv
                          ? transferDurationUs(c, per) + c.ring_hop_us
                          : peerStepUs(c, per);
  double t = step * ((double(g) - 1.0) / double(gpn));
  if (type == SolCollective::AllReduce)
    t *= 2;
  return t + c.nccl_op_launch_us;
}

} // namespace

double treeAllReduceUs(const SolConfig &c, int64_t buffer_bytes, int64_t nodes,
                       int64_t gpn) {
  int64_t depth = 0;
  while ((int64_t{1} << depth) < nodes)
    ++depth;
  const int64_t per_nic = buffer_bytes / std::max<int64_t>(gpn, 1);
  const double level_us = c.rtt_us + c.chunk_prep_us;
  return 2 * (double(depth) * level_us + transferDurationUs(c, per_nic) +
              chunkPrepUs(c, per_nic)) +
         c.nccl_op_launch_us;
}

double allReduceUs(const SolConfig &c, double ring_us, int64_t buffer_bytes,
                   int64_t nodes, int64_t gpn, bool *tree) {
  *tree = false;
  if (!c.tree_all_reduce || nodes < 2)
    return ring_us;
  const double tree_us = treeAllReduceUs(c, buffer_bytes, nodes, gpn);
  *tree = tree_us < ring_us;
  return std::min(ring_us, tree_us);
}

double allReduceUs(const SolConfig &c, double ring_us, int64_t buffer_bytes,
                   int64_t nodes, int64_t gpn, std::string *model) {
  bool tree = false;
  const double us = allReduceUs(c, ring_us, buffer_bytes, nodes, gpn, &tree);
  if (tree)
    *model = kTreeAllReduceModel;
  return us;
}

namespace {

// XLA's all-to-all over g GPUs for one with `peers` of them on other
// nodes, each sent buf / (g - 1) one after another.
double allToAllOverUs(const SolConfig &c, int64_t buffer_bytes, int64_t g,
                      int64_t peers) {
  return double(peers) * peerStepUs(c, buffer_bytes / (g - 1)) +
         c.nccl_op_launch_us;
}

} // namespace

Result<double> ringLatencyUs(const SolConfig &c, int64_t buffer_bytes,
                             int64_t nodes, SolCollective type, int64_t comms) {
  if (Result<bool> ok = checkConfig(c, buffer_bytes, nodes); !ok)
    return ok.error();
  Result<int64_t> g = numGpusPerComm(c, nodes, type, comms);
  if (!g)
    return g.error();
  const int64_t gpn = *g / nodes;
  if (gpn <= 0)
    return makeError("S-curve: fewer GPUs per communicator than nodes");
  return ringOverUs(c, buffer_bytes, *g, gpn, type);
}

Result<double> unevenRingLatencyUs(const SolConfig &c, int64_t buffer_bytes,
                                   int64_t gpus, int64_t fewest_on_a_node,
                                   SolCollective type) {
  if (Result<bool> ok = checkConfig(c, buffer_bytes, 1); !ok)
    return ok.error();
  if (gpus < 2 || fewest_on_a_node < 1 || fewest_on_a_node > gpus ||
      type == SolCollective::SendRecv || type == SolCollective::AllToAll)
    return makeError("S-curve: an uneven ring needs >= 2 GPUs, >= 1 on "
                     "each node, and a ring collective");
  return ringOverUs(c, buffer_bytes, gpus, fewest_on_a_node, type);
}

Result<double> allToAllLatencyUs(const SolConfig &c, int64_t buffer_bytes,
                                 int64_t nodes, int64_t comms) {
  if (Result<bool> ok = checkConfig(c, buffer_bytes, nodes); !ok)
    return ok.error();
  Result<int64_t> g = numGpusPerComm(c, nodes, SolCollective::AllToAll, comms);
  if (!g)
    return g.error();
  const int64_t peers = (*g / nodes) * (nodes - 1);
  if (peers <= 0 || *g < 2)
    return c.nccl_op_launch_us;
  return allToAllOverUs(c, buffer_bytes, *g, peers);
}

Result<double> unevenAllToAllLatencyUs(const SolConfig &c, int64_t buffer_bytes,
                                       int64_t gpus, int64_t fewest_on_a_node) {
  if (Result<bool> ok = checkConfig(c, buffer_bytes, 1); !ok)
    return ok.error();
  if (gpus < 2 || fewest_on_a_node < 1 || fewest_on_a_node > gpus)
    return makeError("S-curve: an uneven all-to-all needs >= 2 GPUs and "
                     ">= 1 on each node");
  return allToAllOverUs(c, buffer_bytes, gpus, gpus - fewest_on_a_node);
}

Result<double> allToAllLatencyLegacyUs(const SolConfig &c, int64_t buffer_bytes,
                                       int64_t nodes, int64_t comms) {
  if (Result<bool> ok = checkConfig(c, buffer_bytes, nodes); !ok)
    return ok.error();
  Result<int64_t> g = numGpusPerComm(c, nodes, SolCollective::AllToAll, comms);
  if (!g)
    return g.error();
  const int64_t peers = (*g / nodes) * (nodes - 1);
  if (peers <= 0)
    return c.nccl_op_launch_us;
  const int64_t per_peer = (buffer_bytes / *g) / peers;
  return double(peers) * peerStepUs(c, per_peer) + c.nccl_op_launch_us;
}

Result<double> intraNodeAllReduceUs(const SolConfig &c, int64_t size_bytes,
                                    int64_t num_gpus, int64_t nvlink_links) {
  if (nvlink_links <= 0 || !(c.nvlink_bw_per_lane_gbps > 0))
    return makeError("NVLink all-reduce: active links and per-lane "
                     "bandwidth must be positive");
  if (num_gpus < 1 || size_bytes < 0)
    return makeError("NVLink all-reduce: need >= 1 GPU and bytes >= 0");
  const double bw = double(nvlink_links) * c.nvlink_bw_per_lane_gbps * 1e9;
  const double n = double(num_gpus);
  if (size_bytes <= kOneShotMaxBytes)
    return kKernelLaunchUs + 1e6 * (n - 1) * double(size_bytes) / bw +
           c.nvlink_barrier_us;
  return kKernelLaunchUs + 2 * (1e6 * ((n - 1) * double(size_bytes) / n) / bw +
                                c.nvlink_barrier_us);
}

} // namespace shardlab::cost
