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

void ReadTime(FieldReader &r, std::optional<TimeStats> *out, Errors *errors) {
  const json *t = r.Get("time_us");
  if (!t)
    return;
  FieldReader tr(*t, r.FieldPath("time_us"), errors);
  TimeStats s;
  tr.Positive("median", &s.median_us, true);
  double v = 0;
  if (tr.Positive("min", &v, false))
    s.min_us = v;
  if (tr.Positive("max", &v, false))
    s.max_us = v;
  if (tr.Positive("mean", &v, false))
    s.mean_us = v;
  if (tr.Positive("stddev", &v, false, true))
    s.stddev_us = v;
  tr.Int("samples", &s.samples, false, 1);
  if (s.min_us && s.max_us && *s.min_us > *s.max_us)
    tr.Fail("min", "min <= max");
  *out = s;
}

void ReadGroups(FieldReader &r, CollectiveEntry *e, Errors *errors) {
  const json *g = r.Get("replica_groups");
  if (!g)
    return;
  if (!g->is_string()) {
    r.Fail("replica_groups",
           "a string such as \"[1,8]<=[8]\" or "
           "\"{{0,1},{2,3}}\"",
           g);
    return;
  }
  Result<ReplicaGroups> parsed = ParseReplicaGroups(g->get<std::string>());
  if (!parsed) {
    errors->push_back(r.FieldPath("replica_groups") + ": " +
                      parsed.error().message);
    return;
  }
  e->replica_groups = *parsed;
  if (parsed->group_size() != e->devices_per_group)
    r.Fail("replica_groups",
           "groups of devices_per_group = " +
               std::to_string(e->devices_per_group) + " devices",
           g);
}

void ReadKind(FieldReader &r, CollectiveEntry *e, Errors *errors) {
  std::string text;
  const bool permute = e->op == "collective-permute";
  const char *key = permute ? "permute_type" : "comm_type";
  if (!r.String(key, &text, true))
    return;
  if (permute) {
    Result<PermuteType> t = ParsePermuteType(text);
    if (t)
      e->permute_type = *t;
    else
      errors->push_back(r.FieldPath(key) + ": " + t.error().message);
  } else {
    Result<CommType> t = ParseCommType(text);
    if (t)
      e->comm_type = *t;
    else
      errors->push_back(r.FieldPath(key) + ": " + t.error().message);
  }
}

void CheckThroughput(FieldReader &r, CollectiveEntry *e, bool has_tp) {
  if (!e->time && !has_tp) {
    r.Fail("throughput_bytes_per_s", "a throughput or a time_us object");
    return;
  }
  if (!e->time || e->time->median_us <= 0 || e->bytes <= 0)
    return;
  const double from_time = e->bytes / (e->time->median_us * 1e-6);
  if (!has_tp)
    e->throughput_bytes_per_s = from_time;
  else if (std::fabs(from_time - e->throughput_bytes_per_s) > 0.01 * from_time)
    r.Fail("throughput_bytes_per_s",
           "bytes / time_us.median = " + std::to_string(from_time) +
               " (within 1%)",
           r.Get("throughput_bytes_per_s"));
}

CollectiveEntry ReadCollective(const json &j, const std::string &path,
                               Errors *errors) {
  FieldReader r(j, path, errors);
  CollectiveEntry e;
  if (r.String("op", &e.op, true) && kCollectiveOps.count(e.op) == 0)
    r.Fail("op",
           "one of all-reduce, all-gather, reduce-scatter, "
           "all-to-all, collective-permute",
           r.Get("op"));
  ReadKind(r, &e, errors);
  r.String("dtype", &e.dtype, false);
  if (!e.dtype.empty() && DtypeBytes(e.dtype) == 0)
    r.Fail("dtype", "an XLA primitive type such as f32 or bf16",
           r.Get("dtype"));
  r.Int("bytes", &e.bytes, true, 1);
  r.Int("devices_per_group", &e.devices_per_group, true, 2);
  r.Int("num_groups", &e.num_groups, false, 1);
  r.Int("nodes", &e.nodes, false, 1);
  ReadGroups(r, &e, errors);
  ReadTime(r, &e.time, errors);
  const bool has_tp =
      r.Positive("throughput_bytes_per_s", &e.throughput_bytes_per_s, false);
  CheckThroughput(r, &e, has_tp);
  return e;
}

GemmEntry ReadGemm(const json &j, const std::string &path, Errors *errors) {
  FieldReader r(j, path, errors);
  GemmEntry e;
  r.Int("b", &e.b, false, 1);
  r.Int("m", &e.m, true, 1);
  r.Int("n", &e.n, true, 1);
  r.Int("k", &e.k, true, 1);
  for (auto [key, field] : {std::make_pair("lhs_dtype", &e.lhs_dtype),
                            std::make_pair("rhs_dtype", &e.rhs_dtype),
                            std::make_pair("out_dtype", &e.out_dtype)})
    if (r.String(key, field, true) && DtypeBytes(*field) == 0)
      r.Fail(key, "an XLA primitive type such as bf16, f32 or f8e4m3fn",
             r.Get(key));
  ReadTime(r, &e.time, errors);
  const bool has_rate = r.Positive("flop_per_s", &e.flop_per_s, false);
  if (!has_rate && !e.time)
    r.Fail("flop_per_s", "a FLOP rate or a time_us object");
  if (!has_rate && e.time && e.time->median_us > 0)
    e.flop_per_s = 2.0 * e.b * e.m * e.n * e.k / (e.time->median_us * 1e-6);
  return e;
}

void ReadStringMap(FieldReader &r, const char *key,
                   std::map<std::string, std::string> *out) {
  const json *m = r.Get(key);
  if (!m)
    return;
  if (!m->is_object()) {
    r.Fail(key, "an object of strings", m);
    return;
  }
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (it->is_string())
      (*out)[it.key()] = it->get<std::string>();
    else
      r.Fail(key, "string values (at key '" + it.key() + "')", &*it);
  }
}

void ReadDevice(FieldReader &r, TableMetadata *m, Errors *errors) {
  const json *d = r.Get("device");
  if (!d)
    return;
  FieldReader dr(*d, r.FieldPath("device"), errors);
  dr.String("name", &m->device_name, false);
  dr.String("sm_version", &m->sm_version, false);
  dr.String("topology", &m->topology, false);
  dr.Int("gpu_count", &m->gpu_count, false, 1);
  const json *clocks = dr.Get("clocks_mhz");
  if (clocks && clocks->is_object()) {
    for (auto it = clocks->begin(); it != clocks->end(); ++it)
      if (it->is_number() && it->get<double>() > 0)
        m->clocks_mhz[it.key()] = it->get<double>();
      else
        dr.Fail("clocks_mhz", "positive numbers", &*it);
  } else if (clocks) {
    dr.Fail("clocks_mhz", "an object of numbers", clocks);
  }
}

void ReadCollector(FieldReader &r, TableMetadata *m, Errors *errors) {
  const json *c = r.Get("collector");
  if (!c)
    return;
  FieldReader cr(*c, r.FieldPath("collector"), errors);
  cr.String("name", &m->collector_name, false);
  cr.String("version", &m->collector_version, false);
  const json *args = cr.Get("args");
  if (!args)
    return;
  if (!args->is_array()) {
    cr.Fail("args", "an array of strings", args);
    return;
  }
  for (const json &a : *args)
    if (a.is_string())
      m->collector_args.push_back(a.get<std::string>());
    else
      cr.Fail("args", "an array of strings", &a);
}

TableMetadata ReadMetadata(const json &j, Errors *errors) {
  FieldReader r(j, "metadata", errors);
  TableMetadata m;
  if (r.String("source", &m.source, true) && m.source != "measured" &&
      m.source != "analytical")
    r.Fail("source", "\"measured\" or \"analytical\"", r.Get("source"));
  ReadDevice(r, &m, errors);
  ReadCollector(r, &m, errors);
  ReadStringMap(r, "software", &m.software);
  r.String("date", &m.date, false);
  r.String("description", &m.description, false);
  r.Int("partition_size", &m.partition_size, false, 0);
  return m;
}

template <class Entry, class Reader>
void ReadArray(const json &root, const char *key, Reader read,
               std::vector<Entry> *out, Errors *errors) {
  auto it = root.find(key);
  if (it == root.end())
    return;
  if (!it->is_array()) {
    errors->push_back(std::string(key) + ": expected an array, got " +
                      detail::Describe(*it));
    return;
  }
  for (size_t i = 0; i < it->size(); ++i)
    out->push_back(read(
        (*it)[i], std::string(key) + "[" + std::to_string(i) + "]", errors));
}

void CheckHeader(const json &root, Errors *errors) {
  FieldReader r(root, "", errors);
  std::string format;
  if (r.String("format", &format, true) && format != kPerfTableFormat)
    r.Fail("format", std::string("\"") + kPerfTableFormat + "\"",
           r.Get("format"));
  int64_t version = 0;
  if (r.Int("version", &version, true, 1) && version != kPerfTableVersion)
    r.Fail("version",
           std::to_string(kPerfTableVersion) +
               " (this build reads version 1 only)",
           r.Get("version"));
  if (!r.Has("metadata"))
    r.Fail("metadata", "an object with at least \"source\"");
  if (!r.Has("collectives") && !r.Has("gemms"))
    r.Fail("collectives", "a \"collectives\" or \"gemms\" array");
}

} // namespace

Error TableTooLargeError(const std::string &what, int64_t size) {
  return MakeError(
      what + " is " + std::to_string(size) + " bytes; tables larger than " +
      std::to_string(kMaxPerfTableFileBytes) + " bytes (64 MiB) are refused");
}

Result<PerfTable> ParsePerfTable(std::string_view json_text) {
  if (int64_t(json_text.size()) > kMaxPerfTableFileBytes)
    return TableTooLargeError("table text", int64_t(json_text.size()));
  Result<json> root = detail::ParseJsonText(json_text);
  if (!root)
    return root.error();
  Errors errors;
  if (!root->is_object())
    return MakeError("table: expected a JSON object at the top level, got " +
                     detail::Describe(*root));
  CheckHeader(*root, &errors);
  PerfTable table;
  if (root->contains("metadata"))
    table.metadata = ReadMetadata((*root)["metadata"], &errors);
  ReadArray(*root, "collectives", ReadCollective, &table.collectives, &errors);
  ReadArray(*root, "gemms", ReadGemm, &table.gemms, &errors);
  if (!errors.empty())
    return detail::JoinErrors(errors);
  Result<bool> valid = ValidatePerfTable(table);
  if (!valid)
    return valid.error();
  return table;
}

Result<PerfTable> LoadPerfTable(const std::string &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return MakeError(path + ": cannot open file");
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxPerfTableFileBytes)
    return TableTooLargeError(path + ": file", size);
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in)
    return MakeError(path + ": read failed");
  Result<PerfTable> table = ParsePerfTable(text);
  if (!table)
    return MakeError(path + ": " + table.error().message);
  return table;
}

} // namespace shardlab::cost
