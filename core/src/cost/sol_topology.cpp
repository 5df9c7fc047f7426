// The S-curve model for one collective described by its topology (group
// size, nodes, GPUs per node) rather than by replica groups: the CLI's and
// the API's cross-node path (network time only, no HBM term).
#include "shardlab/cost/sol_model.h"

namespace shardlab::cost {
namespace {

constexpr int64_t kMaxTopologyCount = int64_t{1} << 20;

// Communicators per node for groups of `group_size` spread evenly over
// `nodes` nodes of c.gpus_per_node GPUs each.
Result<int64_t> communicators(const SolConfig &c, int64_t group_size,
                              int64_t nodes) {
  if (group_size < 2 || nodes < 2 || c.gpus_per_node < 1 ||
      group_size > kMaxTopologyCount || nodes > kMaxTopologyCount ||
      c.gpus_per_node > kMaxTopologyCount)
    return makeError("S-curve: need a group of at least 2 devices over at "
                     "least 2 nodes (and at most 2^20 of each)");
  if (group_size % nodes != 0)
    return makeError("S-curve: group size " + std::to_string(group_size) +
                     " is not a multiple of the node count " +
                     std::to_string(nodes));
  const int64_t per_node = group_size / nodes;
  if (per_node > c.gpus_per_node || c.gpus_per_node % per_node != 0)
    return makeError("S-curve: " + std::to_string(per_node) +
                     " group members per node do not divide gpus_per_node = " +
                     std::to_string(c.gpus_per_node));
  return c.gpus_per_node / per_node;
}

constexpr const char *kRingNote =
    "S-curve ring: launch + (g - 1) / gpn x (transfer x 1.025 + chunk prep + "
    "rtt), x2 for all-reduce; network time only, no HBM term";

Result<double> networkUs(const SolConfig &c, CollectiveOp op, int64_t bytes,
                         int64_t nodes, int64_t comms, std::string *model,
                         std::string *note) {
  *note = kRingNote;
  switch (asyncToSync(op)) {
  case CollectiveOp::AllGather:
    *model = "s-curve/ring all-gather";
    return ringLatencyUs(c, bytes, nodes, SolCollective::AllGather, comms);
  case CollectiveOp::AllReduce: {
    *model = "s-curve/ring all-reduce";
    Result<double> ring =
        ringLatencyUs(c, bytes, nodes, SolCollective::AllReduce, comms);
    if (!ring)
      return ring;
    const double us =
        allReduceUs(c, *ring, bytes, nodes, c.gpus_per_node / comms, model);
    if (*model == kTreeAllReduceModel) {
      *note = "NCCL's tree, cheaper than the ring here: launch + 2 x "
              "(ceil(log2 nodes) x (rtt + chunk prep) + transfer(bytes / "
              "gpn) x 1.025 + its chunks' prep); network time only";
    }
    return us;
  }
  case CollectiveOp::ReduceScatter:
    *model = "s-curve/ring reduce-scatter";
    return ringLatencyUs(c, bytes, nodes, SolCollective::ReduceScatter, comms);
  case CollectiveOp::AllToAll:
    *model = "s-curve/all-to-all";
    *note = "S-curve all-to-all: launch + gpn x (nodes - 1) peers x "
            "(transfer(bytes / (g - 1)) x 1.025 + chunk prep + rtt); network "
            "time only, no HBM term";
    return allToAllLatencyUs(c, bytes, nodes, comms);
  default: // permute, send, recv: one peer on another node (XLA: hosts = 2)
    *model = "s-curve/send-recv";
    *note = "S-curve send/recv between 2 hosts: launch + transfer x 1.025 + "
            "chunk prep + rtt; network time only, no HBM term";
    return ringLatencyUs(c, bytes, 2, SolCollective::SendRecv, 1);
  }
}

} // namespace

Result<Estimate> solTopologyEstimate(const SolConfig &c, CollectiveOp op,
                                     int64_t bytes, int64_t group_size,
                                     int64_t nodes) {
  Result<int64_t> comms = communicators(c, group_size, nodes);
  if (!comms)
    return comms.error();
  Estimate e;
  Result<double> us = networkUs(c, op, bytes, nodes, *comms,
                                &e.explanation.model, &e.explanation.note);
  if (!us)
    return us.error();
  e.time_us = *us;
  e.explanation.terms = {{"bytes", double(bytes), "bytes"},
                         {"nodes", double(nodes), "nodes"},
                         {"group_size", double(group_size), "GPUs"},
                         {"communicators", double(*comms), "per node"},
                         {"nic_speed", c.nic_speed_gbps, "GB/s"},
                         {"rtt", c.rtt_us, "us"},
                         {"chunk_prep", c.chunk_prep_us, "us per chunk"},
                         {"launch", c.nccl_op_launch_us, "us"}};
  return e;
}

} // namespace shardlab::cost
