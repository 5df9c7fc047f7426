// Serialising performance tables and writing them atomically.
#include "shardlab/cost/perf_table.h"
#include "shardlab/support/file_io.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

namespace shardlab::cost {
namespace {

using json = nlohmann::ordered_json;

json timeToJson(const TimeStats &t) {
  json j = {{"median", t.median_us}};
  if (t.min_us)
    j["min"] = *t.min_us;
  if (t.max_us)
    j["max"] = *t.max_us;
  if (t.mean_us)
    j["mean"] = *t.mean_us;
  if (t.stddev_us)
    j["stddev"] = *t.stddev_us;
  if (t.samples > 0)
    j["samples"] = t.samples;
  return j;
}

json metadataToJson(const TableMetadata &m) {
  json j = {{"source", m.source}};
  json device = json::object();
  if (!m.device_name.empty())
    device["name"] = m.device_name;
  if (!m.sm_version.empty())
    device["sm_version"] = m.sm_version;
  if (!m.topology.empty())
    device["topology"] = m.topology;
  if (m.gpu_count > 0)
    device["gpu_count"] = m.gpu_count;
  if (!m.clocks_mhz.empty())
    device["clocks_mhz"] = m.clocks_mhz;
  j["device"] = device;
  if (!m.software.empty())
    j["software"] = m.software;
  if (!m.date.empty())
    j["date"] = m.date;
  if (!m.description.empty())
    j["description"] = m.description;
  if (m.partition_size > 0)
    j["partition_size"] = m.partition_size;
  if (!m.collector_name.empty() || !m.collector_args.empty())
    j["collector"] = {{"name", m.collector_name},
                      {"version", m.collector_version},
                      {"args", m.collector_args}};
  return j;
}

json collectiveToJson(const CollectiveEntry &e) {
  json j = {{"op", e.op}};
  if (e.comm_type)
    j["comm_type"] = std::string(toText(*e.comm_type));
  if (e.permute_type)
    j["permute_type"] = std::string(toText(*e.permute_type));
  if (!e.dtype.empty())
    j["dtype"] = e.dtype;
  j["bytes"] = e.bytes;
  j["devices_per_group"] = e.devices_per_group;
  j["num_groups"] = e.num_groups;
  j["nodes"] = e.nodes;
  if (e.replica_groups)
    j["replica_groups"] = toText(*e.replica_groups);
  if (e.time)
    j["time_us"] = timeToJson(*e.time);
  j["throughput_bytes_per_s"] = e.throughput_bytes_per_s;
  return j;
}

json gemmToJson(const GemmEntry &e) {
  json j = {{"b", e.b},
            {"m", e.m},
            {"n", e.n},
            {"k", e.k},
            {"lhs_dtype", e.lhs_dtype},
            {"rhs_dtype", e.rhs_dtype},
            {"out_dtype", e.out_dtype}};
  if (e.time)
    j["time_us"] = timeToJson(*e.time);
  j["flop_per_s"] = e.flop_per_s;
  return j;
}

} // namespace

std::string serializePerfTable(const PerfTable &table) {
  json j = {{"format", kPerfTableFormat},
            {"version", kPerfTableVersion},
            {"metadata", metadataToJson(table.metadata)}};
  json collectives = json::array();
  for (const CollectiveEntry &e : table.collectives)
    collectives.push_back(collectiveToJson(e));
  json gemms = json::array();
  for (const GemmEntry &e : table.gemms)
    gemms.push_back(gemmToJson(e));
  if (!table.collectives.empty() || table.gemms.empty())
    j["collectives"] = collectives;
  if (!table.gemms.empty())
    j["gemms"] = gemms;
  if (table.overlap)
    j["overlap"] = {{"compute_slowdown", table.overlap->compute_slowdown},
                    {"comm_slowdown", table.overlap->comm_slowdown},
                    {"source", table.overlap->source}};
  if (const auto &a = table.fused_attention)
    j["fused_attention"] = {{"forward_slowdown", a->forward_slowdown},
                            {"backward_slowdown", a->backward_slowdown},
                            {"source", a->source}};
  return j.dump(2) + "\n";
}

Result<bool> writePerfTable(const PerfTable &table, const std::string &path) {
  Result<bool> valid = validatePerfTable(table);
  if (!valid)
    return makeError(path + ": refusing to write an invalid table: " +
                     valid.error().message);
  Status written = writeFileAtomically(path, serializePerfTable(table));
  if (!written)
    return written.error();
  return true;
}

} // namespace shardlab::cost
