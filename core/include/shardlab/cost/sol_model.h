// The speed-of-light ("S-curve") network model XLA uses for cross-node (DCN)
// collectives (SolGPUCostModel): ring and all-to-all latencies from launch
// overhead, NIC speed, chunk preparation and RTT, per-device defaults, the
// `--xla_gpu_analytical_latency_estimator_options` string, the NVLink
// one-/two-shot all-reduce model and the estimator's DCN dispatch.
#pragma once

#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/device_groups.h"
#include "shardlab/cost/estimate.h"
#include "shardlab/cost/hardware.h"
#include "shardlab/support/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardlab::cost {

struct SolConfig {
  double nccl_op_launch_us = 0;
  double nic_speed_gbps = 0; // GB/s (1e9 bytes/s), not Gbit/s
  double chunk_prep_us = 0;
  double rtt_us = 0;
  int64_t gpus_per_node = 8;
  int64_t chunk_size_bytes = 4194304;
  int64_t partition_size = 0; // 0: use gpus_per_node
  double nvlink_bw_per_lane_gbps = 0;
  double nvlink_barrier_us = 1.5;
  double header_overhead = 0.025;
  /// 0: XLA's ring, where each of its steps pays a round trip and a chunk
  /// preparation. > 0: a pipelined ring as NCCL runs it, each step paying
  /// this one-way hop latency instead (NCCL's network hop latency for its
  /// LL protocol is 2.7 us, the figure PyTorch's DTensor cost model uses).
  /// Not an XLA option: shardlab's, to show what XLA's per-step round trip
  /// costs on rings of hundreds of nodes.
  double ring_hop_us = 0;
  /// An all-reduce across nodes takes the cheaper of XLA's ring and a tree
  /// (treeAllReduceUs), as NCCL chooses between its ring and tree
  /// algorithms by size. Not XLA's: its model has the ring only, whose
  /// 2 (nodes - 1) steps each pay a round trip, so a few bytes all-reduced
  /// over 256 nodes cost 19 ms. Off here (XLA's defaults, its conformance
  /// vectors); on in the presets' S-curve (solDefaultsFor), which
  /// `tree_all_reduce=0` turns off.
  bool tree_all_reduce = false;
};

/// XLA's per-device defaults (base values x 0.45 in float32); names other
/// than "NVIDIA H100 80GB HBM3" and "NVIDIA B200" get the "<unknown>" entry.
SolConfig solPlatformDefaults(std::string_view device_name);
/// The S-curve for a preset's machine: XLA's latency terms for its device
/// (H100's when XLA has no entry for it), the preset's GPUs per node, and
/// its own NIC: XLA's H100 base figure (55.56 GB/s before the 0.45
/// coefficient) stands for the H100 DGX's 400 Gb/s NIC per GPU and is
/// scaled by nic_bytes_per_s / 50 GB/s, so h100 keeps XLA's values exactly
/// and an A100 DGX (200 Gb/s HDR) gets half. A preset without a NIC takes
/// solPlatformDefaults. Either way all-reduces take NCCL's tree where it is
/// cheaper than the ring (tree_all_reduce).
SolConfig solDefaultsFor(const HardwarePreset &hw);
/// Applies `k=v,k=v` options; a value overrides only if it is > 0 (XLA's 0
/// or -1: the default), except tree_all_reduce (shardlab's: 0 is off). A value
/// that does not parse (integer keys must be integers) and an unknown key are
/// errors.
Result<SolConfig> applySolOptions(SolConfig config, std::string_view options);

enum class SolCollective {
  AllGather,
  AllReduce,
  ReduceScatter,
  SendRecv,
  AllToAll
};

double transferDurationUs(const SolConfig &c, int64_t bytes);
double chunkPrepUs(const SolConfig &c, int64_t bytes);
Result<int64_t> numGpusPerComm(const SolConfig &c, int64_t nodes,
                               SolCollective type, int64_t comms);
Result<double> ringLatencyUs(const SolConfig &c, int64_t buffer_bytes,
                             int64_t nodes, SolCollective type, int64_t comms);
/// An all-reduce over `nodes` nodes, `gpn` GPUs of the group on each, as a
/// tree of nodes (NCCL's tree algorithm): reduced up ceil(log2 nodes)
/// levels and broadcast back down, each level a step of XLA's S-curve
/// (one round trip and one chunk's preparation) and the buffer, its
/// node's share on each NIC (bytes / gpn), sent once each way in
/// pipelined chunks. With XLA's H100 terms, 4 KiB over 256 nodes:
/// 2 x 8 x (31 + 6) us + launch = 0.64 ms, where the ring takes 19 ms.
double treeAllReduceUs(const SolConfig &c, int64_t buffer_bytes, int64_t nodes,
                       int64_t gpn);
/// The model an all-reduce the tree ran says it ran.
inline constexpr const char *kTreeAllReduceModel = "s-curve/tree all-reduce";
/// The ring's time, or with c.tree_all_reduce the tree's where it is
/// cheaper (`*tree` says which).
double allReduceUs(const SolConfig &c, double ring_us, int64_t buffer_bytes,
                   int64_t nodes, int64_t gpn, bool *tree);
/// allReduceUs, with `*model` set to kTreeAllReduceModel when the tree ran
/// (left as the ring's otherwise): what every S-curve caller reports.
double allReduceUs(const SolConfig &c, double ring_us, int64_t buffer_bytes,
                   int64_t nodes, int64_t gpn, std::string *model);

/// A ring over `gpus` GPUs spread unevenly over nodes (not XLA's: its
/// model assumes the same members on every node and fails otherwise):
/// XLA's ring with the step's bytes carried by the NICs of the node that
/// holds the fewest of them, the ring's narrowest crossing. 12 GPUs as 8 +
/// 4 on two nodes: XLA's ring of 12 with 4 NICs a step.
Result<double> unevenRingLatencyUs(const SolConfig &c, int64_t buffer_bytes,
                                   int64_t gpus, int64_t fewest_on_a_node,
                                   SolCollective type);
/// An all-to-all over `gpus` GPUs spread unevenly over nodes (not XLA's):
/// its current formula for the GPU on the node holding the fewest, which
/// has the most peers on other nodes (gpus - fewest; XLA's gpn x (nodes -
/// 1) when every node holds gpn).
Result<double> unevenAllToAllLatencyUs(const SolConfig &c, int64_t buffer_bytes,
                                       int64_t gpus, int64_t fewest_on_a_node);
/// Current formula: per_peer = buf / (g - 1).
Result<double> allToAllLatencyUs(const SolConfig &c, int64_t buffer_bytes,
                                 int64_t nodes, int64_t comms);
/// Superseded formula: per_peer = (buf / g) / peers; launch only if no peers.
Result<double> allToAllLatencyLegacyUs(const SolConfig &c, int64_t buffer_bytes,
                                       int64_t nodes, int64_t comms);

inline constexpr int64_t kOneShotMaxBytes = 256 * 1024;
inline constexpr double kKernelLaunchUs = 1.0;
/// NVLink one-shot (<= 256 KiB) / two-shot all-reduce kernel latency.
Result<double> intraNodeAllReduceUs(const SolConfig &c, int64_t size_bytes,
                                    int64_t num_gpus, int64_t nvlink_links);

/// A collective crossing NVLink partitions, as the SoL estimator sees it.
struct DcnQuery {
  CollectiveOp op = CollectiveOp::AllGather;
  int64_t msg_bytes = 0;           // BytesTransferred
  int64_t hbm_bytes_accessed = 0;  // HbmBytesAccessed
  ReplicaGroups groups;            // non-permute ops
  SourceTargetPairs pairs;         // collective-permute
  double reduction_compute_us = 0; // AR/RS compute (fusion model), if known
  /// XLA's estimator takes a group that fills no node as spanning one host
  /// per member (32 hosts for 4 GPUs on each of 8 nodes), and groups that
  /// each fill whole nodes as G communicators sharing every node (16
  /// groups of 64 on 128 nodes: 8 GPUs per node / 16 is no whole number,
  /// and XLA's model fails). True: the hosts the device ids really span
  /// (8), sharing each node's NICs among gpus_per_node / members-per-node
  /// communicators (2 for 4 a node; 1 for groups of whole nodes). The
  /// schedule sets it; XLA's conformance vectors keep XLA's count.
  bool hosts_from_device_ids = false;
};

/// SolLatencyEstimator's DCN path: HBM term + S-curve (ring / all-to-all /
/// send-recv). Errors for single-partition collectives (those use tables).
Result<Estimate> dcnCollectiveEstimate(const SolConfig &c,
                                       double memory_bandwidth_bytes_per_s,
                                       const DcnQuery &q);

/// The S-curve network time of one collective given by its topology: a
/// group of `group_size` GPUs spread evenly over `nodes` (> 1) nodes of
/// c.gpus_per_node GPUs (communicators = gpus_per_node / members per node).
/// Ring for AG/AR/RS, all-to-all, send/recv (2 hosts) for permutes. No HBM
/// term (the CLI's `--nodes K > 1` path).
Result<Estimate> solTopologyEstimate(const SolConfig &c, CollectiveOp op,
                                     int64_t bytes, int64_t group_size,
                                     int64_t nodes);

/// SolLatencyEstimator::NodeCost precedence for one node.
struct NodeCostInput {
  std::optional<double> latency_metadata_ns;
  bool is_async_collective = false;
  std::optional<double> gemm_us;
  std::optional<double> fusion_us;
  double wrapped_cost = 0;
};
Estimate nodeCost(const NodeCostInput &in);

} // namespace shardlab::cost
