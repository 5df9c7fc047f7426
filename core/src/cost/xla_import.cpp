// Importing XLA's DeviceHloInstructionProfiles and GemmPerfTable text protos.
#include "shardlab/cost/xla_import.h"
#include "shardlab/cost/collective_model.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

namespace shardlab::cost {
namespace {

using Field = TextProtoField;

bool toInt(const Field *f, int64_t *out) {
  if (!f || f->is_message || f->scalar.empty())
    return false;
  char *end = nullptr;
  const long long v = std::strtoll(f->scalar.c_str(), &end, 10);
  if (end != f->scalar.c_str() + f->scalar.size())
    return false;
  *out = v;
  return true;
}

std::vector<int64_t> ints(const Field &msg, std::string_view name) {
  std::vector<int64_t> out;
  for (const Field *f : msg.findAll(name)) {
    int64_t v = 0;
    if (toInt(f, &v))
      out.push_back(v);
  }
  return out;
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower((unsigned char)c));
  return s;
}

struct ArrayShape {
  std::string dtype;
  int64_t bytes = 0;
};

// Non-tuple shape, or the chosen tuple element of a tuple shape.
Result<ArrayShape> shapeOf(const Field *shape, size_t tuple_index) {
  if (!shape)
    return makeError("instruction has no shape");
  std::vector<const Field *> tuple = shape->findAll("tuple_shapes");
  if (!tuple.empty())
    return shapeOf(tuple[std::min(tuple_index, tuple.size() - 1)], 0);
  const Field *type = shape->find("element_type");
  ArrayShape s;
  s.dtype = type ? lower(type->scalar) : "";
  s.bytes = dtypeBytes(s.dtype);
  if (s.bytes == 0)
    return makeError("unsupported element_type '" + s.dtype + "'");
  for (int64_t d : ints(*shape, "dimensions"))
    s.bytes *= d;
  return s;
}

Result<ReplicaGroups> groupsOf(const Field &instr) {
  const Field *list = instr.find("collective_device_list");
  const Field *iota = instr.find("iota_collective_device_list");
  if (list && !iota)
    iota = list->find("iota_replica_group_list");
  if (iota) {
    IotaGroups g;
    toInt(iota->find("num_replica_groups"), &g.num_groups);
    toInt(iota->find("num_devices_per_group"), &g.group_size);
    g.reshape_dims = ints(*iota, "iota_reshape_dims");
    g.transpose_perm = ints(*iota, "iota_transpose_perm");
    Result<std::vector<std::vector<int64_t>>> ok = expandIota(g);
    if (!ok)
      return ok.error();
    return ReplicaGroups::fromIota(g);
  }
  std::vector<std::vector<int64_t>> lists;
  for (const Field *g : (list ? *list : instr).findAll("replica_groups"))
    lists.push_back(ints(*g, "replica_ids"));
  for (const auto &g : lists)
    if (g.size() != lists[0].size())
      return makeError("replica groups of different sizes");
  return ReplicaGroups::fromLists(lists);
}

SourceTargetPairs pairsOf(const Field &instr) {
  SourceTargetPairs pairs;
  for (const Field *p : instr.findAll("source_target_pairs")) {
    int64_t s = 0, t = 0;
    toInt(p->find("source"), &s);
    toInt(p->find("target"), &t);
    pairs.push_back({s, t});
  }
  return pairs;
}

int64_t operandBytes(const Field &profile, CollectiveOp op, int64_t out_bytes,
                     int64_t group_size) {
  if (const Field *operand = profile.find("operands"))
    if (Result<ArrayShape> s = shapeOf(operand->find("shape"), 0); s)
      return s->bytes;
  const int64_t n = std::max<int64_t>(group_size, 1);
  if (asyncToSync(op) == CollectiveOp::ReduceScatter)
    return out_bytes * n;
  if (asyncToSync(op) == CollectiveOp::AllGather)
    return out_bytes / n;
  return out_bytes;
}

Result<bool> fillKind(const Field &instr, int64_t partition,
                      CollectiveEntry *e) {
  if (e->op == "collective-permute") {
    Result<PermuteType> t = classifyPermute(pairsOf(instr), partition);
    if (!t)
      return t.error();
    e->permute_type = *t, e->devices_per_group = 2;
    return true;
  }
  Result<ReplicaGroups> groups = groupsOf(instr);
  if (!groups)
    return groups.error();
  Result<CommType> comm = classifyCommType(*groups, partition);
  if (!comm)
    return comm.error();
  e->replica_groups = *groups, e->comm_type = *comm;
  e->devices_per_group = groups->group_size();
  e->num_groups = groups->num_groups();
  Result<std::vector<std::vector<int64_t>>> lists = expand(*groups);
  std::set<int64_t> partitions;
  if (lists && !lists->empty())
    for (int64_t id : (*lists)[0])
      partitions.insert(id / partition);
  e->nodes = std::max<int64_t>(1, int64_t(partitions.size()));
  return true;
}

Result<CollectiveEntry> collectiveFromProfile(const Field &profile,
                                              int64_t partition) {
  const Field *instr = profile.find("instruction");
  const Field *opcode = instr ? instr->find("opcode") : nullptr;
  if (!opcode)
    return makeError("profile without instruction.opcode");
  Result<CollectiveOp> op = parseCollectiveOp(opcode->scalar);
  if (!op)
    return op.error();
  CollectiveEntry e;
  e.op = std::string(toText(asyncToSync(*op)));
  const bool tuple_out = *op == CollectiveOp::AllGatherStart ||
                         *op == CollectiveOp::CollectivePermuteStart;
  Result<ArrayShape> out = shapeOf(instr->find("shape"), tuple_out ? 1 : 0);
  if (!out)
    return out.error();
  if (Result<bool> ok = fillKind(*instr, partition, &e); !ok)
    return ok.error();
  e.dtype = out->dtype;
  const CollectiveShapes shapes{
      operandBytes(profile, *op, out->bytes, e.devices_per_group), out->bytes};
  e.bytes = bytesTransferred(*op, shapes);
  int64_t tp = 0;
  if (!toInt(profile.find("network_throughput_bytes_per_sec"), &tp) || tp <= 0)
    return makeError(
        "missing or non-positive network_throughput_bytes_per_sec");
  e.throughput_bytes_per_s = double(tp);
  return e;
}

Result<const Field *> selectDevice(const Field &root, std::string_view key) {
  std::vector<const Field *> entries = root.findAll("entries");
  std::string known;
  for (const Field *entry : entries) {
    const Field *k = entry->find("key");
    const std::string name = k ? k->scalar : "";
    known += known.empty() ? name : ", " + name;
    if ((key.empty() && entries.size() == 1) || name == key) {
      const Field *value = entry->find("value");
      if (!value)
        return makeError("device entry '" + name + "' has no value");
      return value;
    }
  }
  if (key.empty())
    return makeError("the table holds several devices (" + known +
                     "); choose one with --device KEY (\"device\" in the "
                     "JSON API)");
  return makeError("device key '" + std::string(key) +
                   "' not found; the table has: " + known +
                   " (choose one with --device)");
}

TableMetadata importedMetadata(std::string_view key, const char *what) {
  TableMetadata m;
  m.source = "measured";
  m.sm_version = std::string(key);
  m.description = std::string("imported from XLA ") + what;
  return m;
}

} // namespace

Result<std::vector<std::string>> listXlaDeviceKeys(std::string_view text) {
  Result<Field> root = parseTextProto(text);
  if (!root)
    return root.error();
  std::vector<std::string> keys;
  for (const Field *entry : root->findAll("entries"))
    if (const Field *k = entry->find("key"))
      keys.push_back(k->scalar);
  return keys;
}

Result<PerfTable> importXlaCollectiveProfiles(std::string_view text,
                                              std::string_view device_key,
                                              int64_t default_partition) {
  Result<Field> root = parseTextProto(text);
  if (!root)
    return root.error();
  Result<const Field *> device = selectDevice(*root, device_key);
  if (!device)
    return device.error();
  int64_t partition = default_partition;
  if (int64_t p = 0; toInt((*device)->find("partition_size"), &p) && p > 0)
    partition = p;
  PerfTable table;
  table.metadata = importedMetadata(device_key, "DeviceHloInstructionProfiles");
  table.metadata.partition_size = partition;
  std::set<std::string> seen;
  size_t index = 0;
  for (const Field *profile : (*device)->findAll("entries")) {
    Result<CollectiveEntry> e = collectiveFromProfile(*profile, partition);
    if (!e)
      return makeError("entries[" + std::to_string(index) +
                       "]: " + e.error().message);
    ++index;
    PerfTable probe;
    probe.metadata.source = "measured";
    probe.collectives = {*e};
    probe.collectives[0].throughput_bytes_per_s = 0; // identity only
    const std::string id = serializePerfTable(probe);
    if (seen.insert(id).second)
      table.collectives.push_back(*e);
  }
  if (Result<bool> ok = validatePerfTable(table); !ok)
    return ok.error();
  return table;
}

Result<PerfTable> importXlaGemmTable(std::string_view text,
                                     std::string_view device_key) {
  Result<Field> root = parseTextProto(text);
  if (!root)
    return root.error();
  Result<const Field *> device = selectDevice(*root, device_key);
  if (!device)
    return device.error();
  PerfTable table;
  table.metadata = importedMetadata(device_key, "GemmPerfTable");
  for (const Field *entry : (*device)->findAll("entries")) {
    GemmEntry g;
    toInt(entry->find("b"), &g.b);
    toInt(entry->find("m"), &g.m), toInt(entry->find("n"), &g.n);
    toInt(entry->find("k"), &g.k);
    for (const Field *rate : entry->findAll("flops")) {
      const Field *k = rate->find("key");
      Result<std::vector<std::string>> types =
          splitGemmDtypeKey(k ? k->scalar : "");
      int64_t flops = 0;
      if (!types || !toInt(rate->find("value"), &flops))
        return makeError("gemm entry b=" + std::to_string(g.b) +
                         " m=" + std::to_string(g.m) + ": bad flops entry");
      g.lhs_dtype = (*types)[0], g.rhs_dtype = (*types)[1];
      g.out_dtype = (*types)[2], g.flop_per_s = double(flops);
      table.gemms.push_back(g);
    }
  }
  if (Result<bool> ok = validatePerfTable(table); !ok)
    return ok.error();
  return table;
}

} // namespace shardlab::cost
