// SolLatencyEstimator's DCN collective time and node-cost precedence.
#include "shardlab/cost/sol_model.h"

#include <algorithm>
#include <map>
#include <optional>

namespace shardlab::cost {
namespace {

constexpr double kNcclKernelLaunchUs = 5.0;

struct Topology {
  int64_t hosts = 0;
  int64_t comms = 0;
  /// An uneven group (not the same members on every node, or members per
  /// node not dividing it): its size and the fewest members on a node;
  /// 0 otherwise.
  int64_t uneven_gpus = 0, fewest_on_a_node = 0;
};

// The nodes a group's device ids fall on, and how many groups share each
// node's NICs (its members per node dividing the node); for members spread
// unevenly, the group's size and the fewest on one node.
std::optional<Topology> spannedHosts(const ReplicaGroups &groups,
                                     int64_t partition) {
  Result<std::vector<std::vector<int64_t>>> lists = expand(groups);
  if (!lists || lists->empty() || lists->front().empty())
    return std::nullopt;
  std::map<int64_t, int64_t> members; // node -> members of the group
  for (int64_t id : lists->front())
    ++members[id / partition];
  const int64_t size = int64_t(lists->front().size());
  const int64_t n = int64_t(members.size());
  int64_t fewest = size;
  for (const auto &[node, count] : members)
    fewest = std::min(fewest, count);
  if (fewest * n == size && partition % fewest == 0)
    return Topology{n, partition / fewest};
  return Topology{n, 0, size, fewest};
}

Result<Topology> dcnTopology(const SolConfig &c, const DcnQuery &q) {
  const int64_t partition =
      c.partition_size > 0 ? c.partition_size : c.gpus_per_node;
  if (isPermute(q.op) || q.op == CollectiveOp::Send ||
      q.op == CollectiveOp::Recv) {
    Result<PermuteType> t = classifyPermute(q.pairs, partition);
    if (!t)
      return t.error();
    if (q.pairs.empty() || isInterPartition(*t))
      return Topology{2, 1};
    return makeError("intra-partition collective-permute: use the "
                     "collective table (collective interpolator required)");
  }
  Result<CommType> comm = classifyCommType(q.groups, partition);
  if (!comm)
    return comm.error();
  const int64_t g = q.groups.num_groups(), s = q.groups.group_size();
  if (*comm != CommType::SinglePartition && q.hosts_from_device_ids)
    if (std::optional<Topology> real = spannedHosts(q.groups, partition))
      return *real;
  if (*comm == CommType::WorldLevel)
    return Topology{s / partition, g};
  if (*comm == CommType::NonWorldLevel)
    return Topology{s, g};
  return makeError("single-partition collective: use the collective table, "
                   "not the S-curve model");
}

Result<double> collectiveUs(const SolConfig &c, const DcnQuery &q,
                            const Topology &t, Explanation *ex) {
  const CollectiveOp op = asyncToSync(q.op);
  if (t.uneven_gpus > 0 &&
      (op == CollectiveOp::AllGather || op == CollectiveOp::AllReduce ||
       op == CollectiveOp::ReduceScatter)) {
    ex->model = "s-curve/ring over unevenly spread members";
    Result<double> ring = unevenRingLatencyUs(
        c, q.msg_bytes, t.uneven_gpus, t.fewest_on_a_node,
        op == CollectiveOp::AllGather   ? SolCollective::AllGather
        : op == CollectiveOp::AllReduce ? SolCollective::AllReduce
                                        : SolCollective::ReduceScatter);
    if (!ring || op != CollectiveOp::AllReduce)
      return ring;
    // As many nodes as if each held the fewest: the deepest tree.
    const int64_t nodes =
        (t.uneven_gpus + t.fewest_on_a_node - 1) / t.fewest_on_a_node;
    return allReduceUs(c, *ring, q.msg_bytes, nodes, t.fewest_on_a_node,
                       &ex->model);
  }
  if (t.uneven_gpus > 0 && op == CollectiveOp::AllToAll) {
    ex->model = "s-curve/all-to-all over unevenly spread members";
    return unevenAllToAllLatencyUs(c, q.msg_bytes, t.uneven_gpus,
                                   t.fewest_on_a_node);
  }
  if (t.uneven_gpus > 0)
    return makeError("S-curve: " + std::string(toText(op)) +
                     " over members spread unevenly across nodes");
  switch (op) {
  case CollectiveOp::AllGather:
    ex->model = "s-curve/ring all-gather";
    return ringLatencyUs(c, q.msg_bytes, t.hosts, SolCollective::AllGather,
                         t.comms);
  case CollectiveOp::AllReduce: {
    ex->model = "s-curve/ring all-reduce";
    Result<double> ring = ringLatencyUs(c, q.msg_bytes, t.hosts,
                                        SolCollective::AllReduce, t.comms);
    if (!ring)
      return ring;
    return allReduceUs(c, *ring, q.msg_bytes, t.hosts,
                       c.gpus_per_node / std::max<int64_t>(t.comms, 1),
                       &ex->model);
  }
  case CollectiveOp::ReduceScatter:
    ex->model = "s-curve/ring reduce-scatter";
    return ringLatencyUs(c, q.msg_bytes, t.hosts, SolCollective::ReduceScatter,
                         t.comms);
  case CollectiveOp::AllToAll:
    ex->model = "s-curve/all-to-all";
    return allToAllLatencyUs(c, q.msg_bytes, t.hosts, t.comms);
  case CollectiveOp::CollectivePermute:
  case CollectiveOp::Send:
  case CollectiveOp::Recv:
    ex->model = "s-curve/send-recv";
    return ringLatencyUs(c, q.msg_bytes, t.hosts, SolCollective::SendRecv,
                         t.comms);
  default:
    ex->model = "s-curve/launch-only";
    return kNcclKernelLaunchUs;
  }
}

} // namespace

Result<Estimate> dcnCollectiveEstimate(const SolConfig &c,
                                       double memory_bandwidth_bytes_per_s,
                                       const DcnQuery &q) {
  if (!(memory_bandwidth_bytes_per_s > 0) || q.msg_bytes < 0 ||
      q.hbm_bytes_accessed < 0)
    return makeError("DCN estimate: memory bandwidth must be positive and "
                     "byte counts non-negative");
  Result<Topology> t = dcnTopology(c, q);
  if (!t)
    return t.error();
  Estimate e;
  Result<double> net_us = collectiveUs(c, q, *t, &e.explanation);
  if (!net_us)
    return net_us.error();
  // XLA computes the HBM term in float32 seconds.
  const float hbm_s = static_cast<float>(q.hbm_bytes_accessed) /
                      static_cast<float>(memory_bandwidth_bytes_per_s);
  const double hbm_us = 1e6 * double(hbm_s);
  const bool reduces = requiresAccumulation(q.op);
  const double compute_us = reduces ? q.reduction_compute_us : 0.0;
  e.time_us = hbm_us + compute_us + *net_us;
  e.explanation.terms = {{"hbm", hbm_us, "us"},
                         {"network", *net_us, "us"},
                         {"hosts", double(t->hosts), "nodes"},
                         {"communicators", double(t->comms), ""}};
  if (reduces)
    e.explanation.terms.push_back({"reduction_compute", compute_us, "us"});
  e.explanation.note = "time = hbm_bytes / memory_bw + S-curve network time";
  return e;
}

Estimate nodeCost(const NodeCostInput &in) {
  Estimate e;
  if (in.latency_metadata_ns) {
    e.time_us = *in.latency_metadata_ns / 1000.0;
    e.explanation.model = "node/latency_metadata";
  } else if (in.is_async_collective) {
    e.time_us = 1.0;
    e.explanation.model = "node/async-collective (kLowCost)";
  } else if (in.gemm_us) {
    e.time_us = *in.gemm_us;
    e.explanation.model = "node/gemm-table";
  } else if (in.fusion_us) {
    e.time_us = *in.fusion_us;
    e.explanation.model = "node/fusion-roofline";
  } else {
    e.time_us = 0.01 * in.wrapped_cost;
    e.explanation.model = "node/0.01 x wrapped estimator";
  }
  return e;
}

} // namespace shardlab::cost
