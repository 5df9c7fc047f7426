// Conformance groups for the SoL estimator's DCN paths and node costs.
#include "vector_cases_internal.h"

#include "shardlab/cost/sol_model.h"

namespace shardlab::conformance {

using namespace shardlab::cost;
using nlohmann::json;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

int64_t ShapeBytes(const json &shape, const std::string &dtype) {
  int64_t n = dtypeBytes(dtype);
  for (const json &d : shape)
    n *= d.get<int64_t>();
  return n;
}

Result<double> CheckBytes(const DcnQuery &q, const json &query) {
  if (q.msg_bytes != query.at("msg_bytes").get<int64_t>() ||
      q.hbm_bytes_accessed != query.at("hbm_bytes_accessed").get<int64_t>())
    return makeError("byte rules give msg " + std::to_string(q.msg_bytes) +
                     ", hbm " + std::to_string(q.hbm_bytes_accessed));
  return 0.0;
}

Result<double> RunDcn(const SolConfig &c, const json &setup, DcnQuery &q,
                      const json &query) {
  if (Result<double> ok = CheckBytes(q, query); !ok)
    return ok;
  Result<Estimate> e = dcnCollectiveEstimate(
      c, setup.at("memory_bandwidth_Bps").get<double>(), q);
  if (!e)
    return e.error();
  return e->time_us;
}

} // namespace

Result<double> DcnCollectiveGroup(const json &setup, const json &query) {
  const json &cj = setup.at("config");
  SolConfig c;
  c.nccl_op_launch_us = cj.at("nccl_op_launch_us").get<double>();
  c.nic_speed_gbps = cj.at("nic_speed_gbps").get<double>();
  c.chunk_prep_us = cj.at("chunk_prep_us").get<double>();
  c.rtt_us = cj.at("rtt_us").get<double>();
  c.gpus_per_node = cj.at("gpus_per_node").get<int64_t>();
  c.chunk_size_bytes = cj.at("chunk_size_bytes").get<int64_t>();
  c.partition_size = setup.at("partition_size").get<int64_t>();
  DcnQuery q;
  Result<CollectiveOp> op =
      parseCollectiveOp(query.at("op").get<std::string>());
  if (!op)
    return op.error();
  q.op = *op;
  q.groups = ReplicaGroups::fromLists(
      query.at("replica_groups").get<std::vector<std::vector<int64_t>>>());
  const std::string dtype = query.at("dtype").get<std::string>();
  const CollectiveShapes shapes{ShapeBytes(query.at("operand_shape"), dtype),
                                ShapeBytes(query.at("output_shape"), dtype)};
  q.msg_bytes = bytesTransferred(q.op, shapes);
  q.hbm_bytes_accessed = hbmBytesAccessed(q.op, shapes, q.groups.group_size());
  return RunDcn(c, setup, q, query);
}

Result<double> DcnPermuteGroup(const json &setup, const json &query) {
  // The unnamed test device gets XLA's "<unknown>" platform defaults.
  SolConfig c = solPlatformDefaults("");
  c.partition_size = setup.at("partition_size").get<int64_t>();
  DcnQuery q;
  Result<CollectiveOp> op =
      parseCollectiveOp(query.at("op").get<std::string>());
  if (!op)
    return op.error();
  q.op = *op;
  SourceTargetPairs pairs;
  for (const json &p : query.at("source_target_pairs"))
    pairs.push_back({p.at(0).get<int64_t>(), p.at(1).get<int64_t>()});
  q.pairs = pairs;
  const int64_t bytes =
      ShapeBytes(query.at("shape"), query.at("dtype").get<std::string>());
  const CollectiveShapes shapes{bytes, bytes};
  q.msg_bytes = bytesTransferred(q.op, shapes);
  q.hbm_bytes_accessed = hbmBytesAccessed(q.op, shapes, 2);
  return RunDcn(c, setup, q, query);
}

Result<double> NodeCostRulesGroup(const json &, const json &query) {
  NodeCostInput in;
  if (query.contains("frontend_attributes") &&
      query.at("frontend_attributes").contains("latency_metadata"))
    in.latency_metadata_ns = std::stod(query.at("frontend_attributes")
                                           .at("latency_metadata")
                                           .get<std::string>());
  in.wrapped_cost = 0; // the upstream test's wrapped estimator returns 0
  return nodeCost(in).time_us;
}

namespace {

struct GroupEntry {
  const char *name;
  GroupFn fn;
};

constexpr GroupEntry kGroups[] = {
    {"interpolator_nearest_neighbour_2d", NearestGroup},
    {"interpolator_grid_snap_complement_2d", GridSnapGroup},
    {"interpolator_weighted_average_2d", WeightedGroup},
    {"collective_interpolator_user_table", UserTableGroup},
    {"collective_interpolator_permute_user_table", PermuteGroup},
    {"collective_interpolator_default_table_exact_entry",
     DefaultCollectiveGroup},
    {"matmul_interpolator_user_table_nn", MatmulUserGroup},
    {"matmul_interpolator_user_table_gemm_kinds", MatmulUserGroup},
    {"matmul_interpolator_default_table_h100", MatmulDefaultGroup},
    {"matmul_interpolator_default_table_b200", MatmulDefaultGroup},
    {"sol_cost_model_ring_and_all_to_all", SolRingGroup},
    {"sol_cost_model_all_to_all_legacy_formula", SolRingGroup},
    {"sol_cost_model_platform_config", SolPlatformGroup},
    {"sol_cost_model_intra_node_all_reduce", SolIntraNodeGroup},
    {"sol_estimator_dcn_collectives", DcnCollectiveGroup},
    {"sol_estimator_dcn_permute_unknown_device", DcnPermuteGroup},
    {"sol_estimator_matmul_node_cost", MatmulNodeCostGroup},
    {"sol_estimator_node_cost_rules", NodeCostRulesGroup},
};

} // namespace

bool IsKnownGroup(const std::string &group) {
  for (const GroupEntry &g : kGroups)
    if (group == g.name)
      return true;
  return false;
}

Result<double> EvaluateCase(const std::string &group, const json &setup,
                            const json &query) {
  for (const GroupEntry &g : kGroups)
    if (group == g.name)
      return g.fn(setup, query);
  return makeError("unknown group '" + group + "'");
}

} // namespace shardlab::conformance
