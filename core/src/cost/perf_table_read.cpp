// Loading and validating `*.shardlab.json` performance tables.
#include "json_fields.h"
#include "shardlab/cost/perf_table.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

namespace shardlab::cost {
namespace {

using detail::FieldReader;
using detail::json;
using Errors = std::vector<std::string>;

const std::set<std::string> kCollectiveOps = {"all-reduce", "all-gather",
                                              "reduce-scatter", "all-to-all",
                                              "collective-permute"};

void readTime(FieldReader &r, std::optional<TimeStats> *out, Errors *errors) {
  const json *t = r.get("time_us");
  if (!t)
    return;
  FieldReader tr(*t, r.fieldPath("time_us"), errors);
  TimeStats s;
  tr.positive("median", &s.median_us, true);
  double v = 0;
  if (tr.positive("min", &v, false))
    s.min_us = v;
  if (tr.positive("max", &v, false))
    s.max_us = v;
  if (tr.positive("mean", &v, false))
    s.mean_us = v;
  if (tr.positive("stddev", &v, false, true))
    s.stddev_us = v;
  tr.integer("samples", &s.samples, false, 1);
  if (s.min_us && s.max_us && *s.min_us > *s.max_us)
    tr.fail("min", "min <= max");
  *out = s;
}

void readGroups(FieldReader &r, CollectiveEntry *e, Errors *errors) {
  const json *g = r.get("replica_groups");
  if (!g)
    return;
  if (!g->is_string()) {
    r.fail("replica_groups",
           "a string such as \"[1,8]<=[8]\" or "
           "\"{{0,1},{2,3}}\"",
           g);
    return;
  }
  Result<ReplicaGroups> parsed = parseReplicaGroups(g->get<std::string>());
  if (!parsed) {
    errors->push_back(r.fieldPath("replica_groups") + ": " +
                      parsed.error().message);
    return;
  }
  e->replica_groups = *parsed;
  if (parsed->group_size() != e->devices_per_group)
    r.fail("replica_groups",
           "groups of devices_per_group = " +
               std::to_string(e->devices_per_group) + " devices",
           g);
}

void readKind(FieldReader &r, CollectiveEntry *e, Errors *errors) {
  std::string text;
  const bool permute = e->op == "collective-permute";
  const char *key = permute ? "permute_type" : "comm_type";
  if (!r.string(key, &text, true))
    return;
  if (permute) {
    Result<PermuteType> t = parsePermuteType(text);
    if (t)
      e->permute_type = *t;
    else
      errors->push_back(r.fieldPath(key) + ": " + t.error().message);
  } else {
    Result<CommType> t = parseCommType(text);
    if (t)
      e->comm_type = *t;
    else
      errors->push_back(r.fieldPath(key) + ": " + t.error().message);
  }
}

void checkThroughput(FieldReader &r, CollectiveEntry *e, bool has_tp) {
  if (!e->time && !has_tp) {
    r.fail("throughput_bytes_per_s", "a throughput or a time_us object");
    return;
  }
  if (!e->time || e->time->median_us <= 0 || e->bytes <= 0)
    return;
  const double from_time = e->bytes / (e->time->median_us * 1e-6);
  if (!has_tp)
    e->throughput_bytes_per_s = from_time;
  else if (std::fabs(from_time - e->throughput_bytes_per_s) > 0.01 * from_time)
    r.fail("throughput_bytes_per_s",
           "bytes / time_us.median = " + std::to_string(from_time) +
               " (within 1%)",
           r.get("throughput_bytes_per_s"));
}

CollectiveEntry readCollective(const json &j, const std::string &path,
                               Errors *errors) {
  FieldReader r(j, path, errors);
  CollectiveEntry e;
  if (r.string("op", &e.op, true) && kCollectiveOps.count(e.op) == 0)
    r.fail("op",
           "one of all-reduce, all-gather, reduce-scatter, "
           "all-to-all, collective-permute",
           r.get("op"));
  readKind(r, &e, errors);
  r.string("dtype", &e.dtype, false);
  if (!e.dtype.empty() && dtypeBytes(e.dtype) == 0)
    r.fail("dtype", "an XLA primitive type such as f32 or bf16",
           r.get("dtype"));
  r.integer("bytes", &e.bytes, true, 1);
  r.integer("devices_per_group", &e.devices_per_group, true, 2);
  r.integer("num_groups", &e.num_groups, false, 1);
  r.integer("nodes", &e.nodes, false, 1);
  readGroups(r, &e, errors);
  readTime(r, &e.time, errors);
  const bool has_tp =
      r.positive("throughput_bytes_per_s", &e.throughput_bytes_per_s, false);
  checkThroughput(r, &e, has_tp);
  return e;
}

GemmEntry readGemm(const json &j, const std::string &path, Errors *errors) {
  FieldReader r(j, path, errors);
  GemmEntry e;
  r.integer("b", &e.b, false, 1);
  r.integer("m", &e.m, true, 1);
  r.integer("n", &e.n, true, 1);
  r.integer("k", &e.k, true, 1);
  for (auto [key, field] : {std::make_pair("lhs_dtype", &e.lhs_dtype),
                            std::make_pair("rhs_dtype", &e.rhs_dtype),
                            std::make_pair("out_dtype", &e.out_dtype)})
    if (r.string(key, field, true) && dtypeBytes(*field) == 0)
      r.fail(key, "an XLA primitive type such as bf16, f32 or f8e4m3fn",
             r.get(key));
  readTime(r, &e.time, errors);
  const bool has_rate = r.positive("flop_per_s", &e.flop_per_s, false);
  if (!has_rate && !e.time)
    r.fail("flop_per_s", "a FLOP rate or a time_us object");
  if (!has_rate && e.time && e.time->median_us > 0)
    e.flop_per_s = 2.0 * e.b * e.m * e.n * e.k / (e.time->median_us * 1e-6);
  return e;
}

void readStringMap(FieldReader &r, const char *key,
                   std::map<std::string, std::string> *out) {
  const json *m = r.get(key);
  if (!m)
    return;
  if (!m->is_object()) {
    r.fail(key, "an object of strings", m);
    return;
  }
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (it->is_string())
      (*out)[it.key()] = it->get<std::string>();
    else
      r.fail(key, "string values (at key '" + it.key() + "')", &*it);
  }
}

void readDevice(FieldReader &r, TableMetadata *m, Errors *errors) {
  const json *d = r.get("device");
  if (!d)
    return;
  FieldReader dr(*d, r.fieldPath("device"), errors);
  dr.string("name", &m->device_name, false);
  dr.string("sm_version", &m->sm_version, false);
  dr.string("topology", &m->topology, false);
  dr.integer("gpu_count", &m->gpu_count, false, 1);
  const json *clocks = dr.get("clocks_mhz");
  if (clocks && clocks->is_object()) {
    for (auto it = clocks->begin(); it != clocks->end(); ++it)
      if (it->is_number() && it->get<double>() > 0)
        m->clocks_mhz[it.key()] = it->get<double>();
      else
        dr.fail("clocks_mhz", "positive numbers", &*it);
  } else if (clocks) {
    dr.fail("clocks_mhz", "an object of numbers", clocks);
  }
}

void readCollector(FieldReader &r, TableMetadata *m, Errors *errors) {
  const json *c = r.get("collector");
  if (!c)
    return;
  FieldReader cr(*c, r.fieldPath("collector"), errors);
  cr.string("name", &m->collector_name, false);
  cr.string("version", &m->collector_version, false);
  const json *args = cr.get("args");
  if (!args)
    return;
  if (!args->is_array()) {
    cr.fail("args", "an array of strings", args);
    return;
  }
  for (const json &a : *args)
    if (a.is_string())
      m->collector_args.push_back(a.get<std::string>());
    else
      cr.fail("args", "an array of strings", &a);
}

TableMetadata readMetadata(const json &j, Errors *errors) {
  FieldReader r(j, "metadata", errors);
  TableMetadata m;
  if (r.string("source", &m.source, true) && m.source != "measured" &&
      m.source != "analytical")
    r.fail("source", "\"measured\" or \"analytical\"", r.get("source"));
  readDevice(r, &m, errors);
  readCollector(r, &m, errors);
  readStringMap(r, "software", &m.software);
  r.string("date", &m.date, false);
  r.string("description", &m.description, false);
  r.integer("partition_size", &m.partition_size, false, 0);
  return m;
}

// {"compute_slowdown": 1.12, "comm_slowdown": 1.05, "source": "..."}.
OverlapEntry readOverlap(const json &j, Errors *errors) {
  FieldReader r(j, "overlap", errors);
  OverlapEntry o;
  if (!r.is_object()) {
    errors->push_back("overlap: expected an object, got " +
                      detail::describe(j));
    return o;
  }
  for (auto [key, out] : {std::pair{"compute_slowdown", &o.compute_slowdown},
                          std::pair{"comm_slowdown", &o.comm_slowdown}})
    if (r.positive(key, out, true) && (*out < 1 || *out > 100))
      r.fail(key, "a factor from 1 (no slowdown) to 100", r.get(key));
  r.string("source", &o.source, true);
  return o;
}

// {"forward_slowdown": 1.3, "backward_slowdown": 1.2, "source": "..."}.
FusedAttentionEntry readFusedAttention(const json &j, Errors *errors) {
  FieldReader r(j, "fused_attention", errors);
  FusedAttentionEntry a;
  if (!r.is_object()) {
    errors->push_back("fused_attention: expected an object, got " +
                      detail::describe(j));
    return a;
  }
  for (auto [key, out] : {std::pair{"forward_slowdown", &a.forward_slowdown},
                          std::pair{"backward_slowdown", &a.backward_slowdown}})
    if (r.positive(key, out, true) && (*out < 0.1 || *out > 100))
      r.fail(key, "a factor from 0.1 to 100 (1: the price of its GEMMs)",
             r.get(key));
  r.string("source", &a.source, true);
  return a;
}

template <class Entry, class Reader>
void readArray(const json &root, const char *key, Reader read,
               std::vector<Entry> *out, Errors *errors) {
  auto it = root.find(key);
  if (it == root.end())
    return;
  if (!it->is_array()) {
    errors->push_back(std::string(key) + ": expected an array, got " +
                      detail::describe(*it));
    return;
  }
  for (size_t i = 0; i < it->size(); ++i)
    out->push_back(read(
        (*it)[i], std::string(key) + "[" + std::to_string(i) + "]", errors));
}

void checkHeader(const json &root, Errors *errors) {
  FieldReader r(root, "", errors);
  std::string format;
  if (r.string("format", &format, true) && format != kPerfTableFormat)
    r.fail("format", std::string("\"") + kPerfTableFormat + "\"",
           r.get("format"));
  int64_t version = 0;
  if (r.integer("version", &version, true, 1) && version != kPerfTableVersion)
    r.fail("version",
           std::to_string(kPerfTableVersion) +
               " (this build reads version 1 only)",
           r.get("version"));
  if (!r.has("metadata"))
    r.fail("metadata", "an object with at least \"source\"");
  if (!r.has("collectives") && !r.has("gemms"))
    r.fail("collectives", "a \"collectives\" or \"gemms\" array");
}

} // namespace

Error tableTooLargeError(const std::string &what, int64_t size) {
  return makeError(
      what + " is " + std::to_string(size) + " bytes; tables larger than " +
      std::to_string(kMaxPerfTableFileBytes) + " bytes (64 MiB) are refused");
}

Result<PerfTable> parsePerfTable(std::string_view json_text) {
  if (int64_t(json_text.size()) > kMaxPerfTableFileBytes)
    return tableTooLargeError("table text", int64_t(json_text.size()));
  Result<json> root = detail::parseJsonText(json_text);
  if (!root)
    return root.error();
  Errors errors;
  if (!root->is_object())
    return makeError("table: expected a JSON object at the top level, got " +
                     detail::describe(*root));
  checkHeader(*root, &errors);
  PerfTable table;
  if (root->contains("metadata"))
    table.metadata = readMetadata((*root)["metadata"], &errors);
  readArray(*root, "collectives", readCollective, &table.collectives, &errors);
  readArray(*root, "gemms", readGemm, &table.gemms, &errors);
  if (const auto it = root->find("overlap"); it != root->end())
    table.overlap = readOverlap(*it, &errors);
  if (const auto it = root->find("fused_attention"); it != root->end())
    table.fused_attention = readFusedAttention(*it, &errors);
  if (!errors.empty())
    return detail::joinErrors(errors);
  Result<bool> valid = validatePerfTable(table);
  if (!valid)
    return valid.error();
  return table;
}

Result<PerfTable> loadPerfTable(const std::string &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return makeError(path + ": cannot open file");
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxPerfTableFileBytes)
    return tableTooLargeError(path + ": file", size);
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in)
    return makeError(path + ": read failed");
  Result<PerfTable> table = parsePerfTable(text);
  if (!table)
    return makeError(path + ": " + table.error().message);
  return table;
}

} // namespace shardlab::cost
