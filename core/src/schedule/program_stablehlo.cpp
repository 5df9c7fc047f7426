// StableHLO collectives written directly in the input (after SPMD
// partitioning, or inside manual computations): device groups from their
// `replica_groups` (or `source_target_pairs`) dense attributes, bytes from
// their (already per-device) operand and result types. Group entries are
// taken as device ids: what they are with use_global_device_ids, and in
// the cross-partition mode of a single-replica SPMD program, where
// partition ids are device ids.
#include "program_internal.h"
#include "rules/stablehlo_attrs.h"

#include <algorithm>

namespace shardlab::schedule::detail {
namespace {

std::vector<int64_t> operandsBytes(const Module &module, Operation &op) {
  int64_t in = 0, out = 0;
  for (size_t i = 0; i < op.numOperands(); ++i)
    in += localTensor(op.operand(i)).bytes;
  for (size_t i = 0; i < op.numResults(); ++i)
    out += localTensor(op.result(i)).bytes;
  return {in, out};
}

std::vector<int64_t> allDevices(int64_t num_devices) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < num_devices; ++d)
    all.push_back(d);
  return all;
}

} // namespace

std::optional<DenseInts> denseInts(const Attr *attr) {
  if (!attr)
    return std::nullopt;
  const DenseReader reader = attr->denseReader();
  if (!reader.valid() || reader.layout().kind != ElementLayout::Kind::Integer)
    return std::nullopt;
  DenseInts out;
  out.shape = attr->type->shape;
  out.values.reserve(size_t(reader.size()));
  for (int64_t i = 0; i < reader.size(); ++i)
    out.values.push_back(reader.intAt(i));
  return out;
}

CollectiveKind stablehloCollectiveKind(const Operation &op) {
  if (op.is("stablehlo.all_gather"))
    return CollectiveKind::AllGather;
  if (op.is("stablehlo.all_reduce"))
    return CollectiveKind::AllReduce;
  if (op.is("stablehlo.reduce_scatter"))
    return CollectiveKind::ReduceScatter;
  if (op.is("stablehlo.all_to_all"))
    return CollectiveKind::AllToAll;
  if (op.is("stablehlo.collective_permute"))
    return CollectiveKind::CollectivePermute;
  return CollectiveKind::None;
}

std::optional<CollectiveCall> stablehloCollectiveCall(const Module &module,
                                                      Operation &op,
                                                      int64_t num_devices) {
  const CollectiveKind kind = stablehloCollectiveKind(op);
  if (kind == CollectiveKind::None || op.numOperands() == 0)
    return std::nullopt;
  CollectiveCall call;
  call.kind = kind;
  const std::vector<int64_t> bytes = operandsBytes(module, op);
  call.operand_bytes = bytes[0];
  call.output_bytes = bytes[1];
  call.dtype = localTensor(op.operand(0)).dtype;
  if (kind == CollectiveKind::CollectivePermute) {
    if (const Attr *pairs = rules::findAttr(op, "source_target_pairs"))
      call.groups = rules::denseIntRows(*pairs);
    std::vector<std::vector<int64_t>> rows;
    rows.swap(call.groups);
    for (const std::vector<int64_t> &row : rows)
      if (row.size() == 2 && row[0] != row[1]) {
        call.pairs.push_back({row[0], row[1]});
        call.groups.push_back(row);
      }
  } else {
    if (const Attr *groups = rules::findAttr(op, "replica_groups"))
      call.groups = rules::denseIntRows(*groups);
    if (call.groups.empty() || call.groups.front().empty())
      call.groups = {allDevices(num_devices)};
  }
  if (call.groups.empty() || call.groups.front().size() < 2)
    call.kind = CollectiveKind::None;
  return call;
}

int64_t maxStablehloDeviceId(Module &module) {
  int64_t highest = -1;
  walk(module.op(), [&](Operation &op) {
    if (stablehloCollectiveKind(op) == CollectiveKind::None)
      return;
    for (const char *name : {"replica_groups", "source_target_pairs"})
      if (const std::optional<DenseInts> d =
              denseInts(rules::findAttr(op, name)))
        for (int64_t v : d->values)
          highest = std::max(highest, v);
  });
  return highest;
}

} // namespace shardlab::schedule::detail
