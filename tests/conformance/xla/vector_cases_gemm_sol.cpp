// Conformance groups for the matmul interpolator and the S-curve model.
#include "vector_cases_internal.h"

#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/sol_model.h"

namespace shardlab::conformance {

using namespace shardlab::cost;
using nlohmann::json;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

std::vector<int64_t> ints(const json &j, const char *key) {
  return j.contains(key) ? j.at(key).get<std::vector<int64_t>>()
                         : std::vector<int64_t>{};
}

// Dims from shapes + dimension numbers when given, checked against b,m,n,k.
Result<GemmQuery> GemmQueryFrom(const json &q) {
  GemmQuery g;
  g.lhs_dtype = q.at("lhs").get<std::string>();
  g.rhs_dtype = q.at("rhs").get<std::string>();
  g.out_dtype = q.at("out").get<std::string>();
  g.dims = {q.at("b").get<int64_t>(), q.at("m").get<int64_t>(),
            q.at("k").get<int64_t>(), q.at("n").get<int64_t>()};
  if (!q.contains("lhs_shape"))
    return g;
  Result<GemmDims> d = extractGemmDims(
      ints(q, "lhs_shape"), ints(q, "rhs_shape"), ints(q, "lhs_batch_dims"),
      ints(q, "lhs_contracting_dims"), ints(q, "rhs_batch_dims"),
      ints(q, "rhs_contracting_dims"));
  if (!d)
    return d.error();
  if (d->b != g.dims.b || d->m != g.dims.m || d->k != g.dims.k ||
      d->n != g.dims.n)
    return makeError("dims extracted from the shapes differ from b,m,n,k");
  return g;
}

Result<double> GemmTimeUs(const PerfTable &t, GemmTableKind kind,
                          const json &query) {
  if (Result<bool> ok = validatePerfTable(t); !ok)
    return ok.error();
  Result<MatmulInterpolator> mi =
      MatmulInterpolator::create(t, kind, EstimateMode::Compatible);
  if (!mi)
    return mi.error();
  Result<GemmQuery> q = GemmQueryFrom(query);
  if (!q)
    return q.error();
  Result<Estimate> e = mi->estimateTime(*q);
  if (!e)
    return e.error();
  return e->time_us;
}

Result<PerfTable> DefaultGemmTable(const json &setup) {
  PerfTable t;
  t.metadata.source = "measured";
  for (const json &j : setup.at("table_entries"))
    for (const auto &[key, rate] : j.at("flops_per_s").items()) {
      Result<std::vector<std::string>> types = splitGemmDtypeKey(key);
      if (!types)
        return types.error();
      GemmEntry g;
      g.b = j.at("b").get<int64_t>(), g.m = j.at("m").get<int64_t>();
      g.n = j.at("n").get<int64_t>(), g.k = j.at("k").get<int64_t>();
      g.lhs_dtype = (*types)[0], g.rhs_dtype = (*types)[1];
      g.out_dtype = (*types)[2];
      g.flop_per_s = rate.get<double>();
      t.gemms.push_back(g);
    }
  return t;
}

SolConfig ConfigFrom(const json &c) {
  SolConfig cfg;
  cfg.nccl_op_launch_us = c.at("nccl_op_launch_us").get<double>();
  cfg.nic_speed_gbps = c.at("nic_speed_gbps").get<double>();
  cfg.chunk_prep_us = c.at("chunk_prep_us").get<double>();
  cfg.rtt_us = c.at("rtt_us").get<double>();
  cfg.gpus_per_node = c.at("gpus_per_node").get<int64_t>();
  cfg.chunk_size_bytes = c.at("chunk_size_bytes").get<int64_t>();
  cfg.header_overhead = c.value("header_overhead", 0.025);
  cfg.nvlink_bw_per_lane_gbps = c.value("nvlink_bw_per_lane_gbps", 0.0);
  cfg.nvlink_barrier_us = c.value("nvlink_barrier_us", 1.5);
  return cfg;
}

} // namespace

Result<double> MatmulUserGroup(const json &setup, const json &query) {
  PerfTable t;
  t.metadata.source = "measured";
  const float clock_ghz = setup.at("device_clock_ghz").get<float>();
  for (const json &p : setup.at("profiles")) {
    const int64_t ns = runtimeNsFromClockCycles(
        p.at("clock_cycles").get<int64_t>(), clock_ghz);
    if (ns != p.at("runtime_ns").get<int64_t>())
      return makeError("clock decoding gives " + std::to_string(ns) + " ns");
    GemmEntry g;
    g.b = p.at("b").get<int64_t>(), g.m = p.at("m").get<int64_t>();
    g.n = p.at("n").get<int64_t>(), g.k = p.at("k").get<int64_t>();
    g.lhs_dtype = p.at("lhs").get<std::string>();
    g.rhs_dtype = p.at("rhs").get<std::string>();
    g.out_dtype = p.at("out").get<std::string>();
    TimeStats time;
    time.median_us = double(ns) / 1e3;
    g.time = time;
    g.flop_per_s = 2.0 * g.b * g.m * g.n * g.k / (double(ns) * 1e-9);
    t.gemms.push_back(g);
  }
  Result<double> us = GemmTimeUs(t, GemmTableKind::UserProfiles, query);
  return us ? Result<double>(*us * 1e-6) : us;
}

Result<double> MatmulDefaultGroup(const json &setup, const json &query) {
  Result<PerfTable> t = DefaultGemmTable(setup);
  if (!t)
    return t.error();
  return GemmTimeUs(*t, GemmTableKind::Default, query);
}

Result<double> MatmulNodeCostGroup(const json &setup, const json &query) {
  Result<double> us = MatmulDefaultGroup(setup, query);
  if (!us)
    return us;
  NodeCostInput in;
  in.gemm_us = *us;
  return nodeCost(in).time_us;
}

Result<double> SolRingGroup(const json &setup, const json &query) {
  const SolConfig c = ConfigFrom(setup.at("config"));
  const std::string fn = query.at("function").get<std::string>();
  const std::string op = query.at("collective").get<std::string>();
  const int64_t buf = query.at("buffer_bytes").get<int64_t>();
  const int64_t nodes = query.at("num_nodes").get<int64_t>();
  const int64_t comms = query.at("num_communicators").get<int64_t>();
  if (fn == "all_to_all_latency")
    return allToAllLatencyUs(c, buf, nodes, comms);
  if (fn == "all_to_all_latency_legacy")
    return allToAllLatencyLegacyUs(c, buf, nodes, comms);
  const SolCollective type = op == "all-gather"   ? SolCollective::AllGather
                             : op == "all-reduce" ? SolCollective::AllReduce
                             : op == "reduce-scatter"
                                 ? SolCollective::ReduceScatter
                                 : SolCollective::SendRecv;
  return ringLatencyUs(c, buf, nodes, type, comms);
}

Result<double> SolPlatformGroup(const json &, const json &query) {
  const SolConfig c =
      solPlatformDefaults(query.at("device_name").get<std::string>());
  const std::string field = query.at("field").get<std::string>();
  if (field == "nic_speed")
    return c.nic_speed_gbps * 1e9;
  if (field == "chunk_prep_time")
    return c.chunk_prep_us;
  return makeError("unknown platform field '" + field + "'");
}

Result<double> SolIntraNodeGroup(const json &setup, const json &query) {
  SolConfig c = ConfigFrom(setup.at("config"));
  return intraNodeAllReduceUs(c, query.at("size_bytes").get<int64_t>(),
                              query.at("num_gpus").get<int64_t>(),
                              query.at("active_nvlink_links").get<int64_t>());
}

} // namespace shardlab::conformance
