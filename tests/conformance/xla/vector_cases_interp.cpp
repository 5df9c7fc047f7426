// Conformance groups for the interpolators and collective interpolator.
#include "vector_cases_internal.h"

#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/interpolator.h"

namespace shardlab::conformance {

using namespace shardlab::cost;
using nlohmann::json;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

GridPoint<2> Point2(const json &coord) {
  return {coord.at(0).get<int64_t>(), coord.at(1).get<int64_t>()};
}

template <size_t N> GridContext<N> ContextFrom(const json &c) {
  GridContext<N> ctx;
  for (size_t d = 0; d < N; ++d) {
    ctx.next_step[d] = c.at("next_context").at(d).get<int64_t>();
    ctx.next_pow2[d] = c.at("next_power_context").at(d).get<int64_t>();
    ctx.min[d] = c.at("min_context").at(d).get<int64_t>();
    ctx.max[d] = c.at("max_context").at(d).get<int64_t>();
  }
  return ctx;
}

Result<double> NearestGroup(const json &setup, const json &query) {
  NearestNeighbourInterpolator<int64_t, 2> nn;
  for (const json &p : setup.at("points"))
    nn.add(Point2(p.at("coord")), p.at("value").get<int64_t>());
  return double(*nn.eval(Point2(query.at("coord"))));
}

Result<double> GridSnapGroup(const json &setup, const json &query) {
  const GridContext<2> ctx = ContextFrom<2>(setup.at("contexts"));
  double results[2];
  const SnapRule rules[2] = {SnapRule::GridThenNearest,
                             SnapRule::StoredCoordinate};
  for (int r = 0; r < 2; ++r) {
    GridSnapInterpolator<int64_t, 2> snap(ctx, rules[r]);
    for (const json &p : setup.at("points"))
      snap.add(Point2(p.at("coord")), p.at("value").get<int64_t>());
    results[r] = double(*snap.eval(Point2(query.at("coord"))));
  }
  if (results[0] != results[1])
    return makeError(
        "the two snap rules disagree: " + std::to_string(results[0]) + " vs " +
        std::to_string(results[1]));
  return results[0];
}

Result<double> WeightedGroup(const json &setup, const json &query) {
  WeightedAverageInterpolator<2> wa(ContextFrom<2>(setup.at("contexts")));
  for (const json &p : setup.at("points"))
    wa.add(Point2(p.at("coord")), p.at("value").get<double>());
  return wa.eval(Point2(query.at("coord")));
}

Result<ReplicaGroups> GroupsFromIota(const json &iota) {
  IotaGroups g;
  g.num_groups = iota.at("num_replica_groups").get<int64_t>();
  g.group_size = iota.at("num_devices_per_group").get<int64_t>();
  g.reshape_dims = iota.at("reshape_dims").get<std::vector<int64_t>>();
  g.transpose_perm = iota.at("transpose_perm").get<std::vector<int64_t>>();
  ReplicaGroups groups = ReplicaGroups::fromIota(g);
  // The iota form must expand to the explicit groups listed next to it.
  return groups;
}

// A collective entry or query: bytes from element counts via XLA's rules,
// comm type from the replica groups (both checked against the listed ones).
Result<CollectiveEntry> CollectiveFrom(const json &j, int64_t partition) {
  CollectiveEntry e;
  e.op = j.at("op").get<std::string>();
  Result<CollectiveOp> op = parseCollectiveOp(e.op);
  if (!op)
    return op.error();
  e.dtype = j.at("dtype").get<std::string>();
  const int64_t s = dtypeBytes(e.dtype);
  const int64_t out = j.contains("output_elements")
                          ? j.at("output_elements").get<int64_t>()
                          : j.at("elements").get<int64_t>();
  const int64_t in = j.contains("operand_elements")
                         ? j.at("operand_elements").get<int64_t>()
                         : out;
  e.bytes = bytesTransferred(*op, {in * s, out * s});
  if (e.bytes != j.at("bytes").get<int64_t>())
    return makeError("bytes rule gives " + std::to_string(e.bytes) +
                     ", vectors list " + j.at("bytes").dump());
  Result<ReplicaGroups> groups = GroupsFromIota(j.at("replica_groups_iota"));
  if (!groups)
    return groups.error();
  Result<std::vector<std::vector<int64_t>>> lists = expand(*groups);
  if (!lists)
    return lists.error();
  if (j.contains("replica_groups") && json(*lists) != j.at("replica_groups"))
    return makeError("iota groups expand differently from replica_groups");
  Result<CommType> comm = classifyCommType(*groups, partition);
  if (!comm)
    return comm.error();
  if (j.contains("comm_type") &&
      std::string(toText(*comm)) != j.at("comm_type").get<std::string>())
    return makeError("classified as " + std::string(toText(*comm)) +
                     ", vectors say " + j.at("comm_type").dump());
  e.comm_type = *comm;
  e.replica_groups = *groups;
  e.devices_per_group = groups->group_size();
  e.num_groups = groups->num_groups();
  e.throughput_bytes_per_s = j.value("throughput_Bps", 0.0);
  return e;
}

Result<double> CollectiveTime(const PerfTable &table,
                              const CollectiveInterpolatorOptions &opts,
                              const CollectiveQuery &q) {
  if (Result<bool> ok = validatePerfTable(table); !ok)
    return ok.error();
  Result<CollectiveInterpolator> ci =
      CollectiveInterpolator::create(table, opts);
  if (!ci)
    return ci.error();
  Result<Estimate> e = ci->estimateTime(q);
  if (!e)
    return e.error();
  return e->time_us;
}

Result<CollectiveQuery> QueryFrom(const json &j, int64_t partition) {
  Result<CollectiveEntry> e = CollectiveFrom(j, partition);
  if (!e)
    return e.error();
  CollectiveQuery q;
  q.op = *parseCollectiveOp(e->op);
  q.dtype = e->dtype;
  q.bytes = e->bytes;
  q.groups = *e->replica_groups;
  return q;
}

Result<double> UserTableGroup(const json &setup, const json &query) {
  const int64_t partition = setup.at("num_devices_per_host").get<int64_t>();
  PerfTable table;
  table.metadata.source = "measured";
  for (const json &j : setup.at("table")) {
    Result<CollectiveEntry> e = CollectiveFrom(j, partition);
    if (!e)
      return makeError("table entry: " + e.error().message);
    table.collectives.push_back(*e);
  }
  Result<CollectiveQuery> q = QueryFrom(query, partition);
  if (!q)
    return q.error();
  CollectiveInterpolatorOptions opts;
  opts.devices_per_partition = partition;
  Result<double> us = CollectiveTime(table, opts, *q);
  return us ? Result<double>(*us * 1e-6) : us;
}

SourceTargetPairs PairsFrom(const json &j) {
  SourceTargetPairs pairs;
  for (const json &p : j)
    pairs.push_back({p.at(0).get<int64_t>(), p.at(1).get<int64_t>()});
  return pairs;
}

Result<double> PermuteGroup(const json &setup, const json &query) {
  const int64_t partition = setup.at("num_partitions").get<int64_t>();
  PerfTable table;
  table.metadata.source = "measured";
  for (const auto &[name, t] : setup.at("tables").items()) {
    Result<PermuteType> type =
        classifyPermute(PairsFrom(t.at("source_target_pairs")), partition);
    if (!type || std::string(toText(*type)) != name)
      return makeError("permute table '" + name + "' classified differently");
    for (const json &p : t.at("points")) {
      CollectiveEntry e;
      e.op = "collective-permute";
      e.permute_type = *type;
      e.bytes = p.at("bytes").get<int64_t>();
      e.devices_per_group = 2;
      e.throughput_bytes_per_s = p.at("throughput_Bps").get<double>();
      table.collectives.push_back(e);
    }
  }
  CollectiveQuery q;
  q.op = CollectiveOp::CollectivePermute;
  q.pairs = PairsFrom(query.at("source_target_pairs"));
  q.bytes = bytesTransferred(q.op, {query.at("elements").get<int64_t>() * 4,
                                    query.at("elements").get<int64_t>() * 4});
  CollectiveInterpolatorOptions opts;
  opts.devices_per_partition = partition;
  Result<double> us = CollectiveTime(table, opts, q);
  return us ? Result<double>(*us * 1e-6) : us;
}

Result<double> DefaultCollectiveGroup(const json &setup, const json &query) {
  const int64_t partition = setup.at("num_devices_per_host").get<int64_t>();
  PerfTable table;
  table.metadata.source = "measured";
  const std::string device = query.at("device_table").get<std::string>();
  for (const json &j : setup.at("table_entries")) {
    if (j.at("device_table").get<std::string>() != device)
      continue;
    Result<CollectiveEntry> e = CollectiveFrom(j, partition);
    if (!e)
      return makeError("table entry: " + e.error().message);
    table.collectives.push_back(*e);
  }
  json q = query;
  q["elements"] = query.at("shape").at(0);
  Result<CollectiveQuery> cq = QueryFrom(q, partition);
  if (!cq)
    return cq.error();
  CollectiveInterpolatorOptions opts;
  opts.devices_per_partition = partition;
  opts.interpolation = TableInterpolation::GridSnap;
  return CollectiveTime(table, opts, *cq);
}

} // namespace shardlab::conformance
