// The collectives as simulated devices run them (ops.h): process groups
// from `replica_groups` / `source_target_pairs`, `channel_handle` and
// `use_global_device_ids` as the StableHLO specification defines them, with
// one replica and as many partitions as devices. So, for a group [0, 2]:
//
//   all_gather dim 0   x0 = [a], x2 = [b]       -> [a, b] on 0 and 2
//   all_reduce (add)                            -> a + b on 0 and 2
//   reduce_scatter dim 0  x0 = [a0, a1], x2 = [b0, b1]
//                                               -> [a0+b0] on 0, [a1+b1] on 2
//   all_to_all split 0 concat 0  x0 = [a0, a1], x2 = [b0, b1]
//                                               -> [a0, b0] on 0, [a1, b1] on 2
//   collective_permute [[0, 2]]                 -> a on 2, zeros on 0
#include "indexing.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <algorithm>
#include <map>

namespace shardlab::interpreter::detail {
namespace {

using LaneResults = std::vector<std::vector<Tensor>>; // [result][lane]

int64_t channelId(const Operation &op) {
  const Attr *handle = rules::findAttr(op, "channel_handle");
  if (!handle)
    return 0;
  const std::string &text =
      handle->kind == AttrKind::String ? handle->str() : handle->text;
  std::optional<rules::DimNumberFields> fields =
      rules::parseDimNumberFields(text);
  if (!fields)
    return 0;
  auto it = fields->find("handle");
  return it == fields->end() || it->second.empty() ? 0 : it->second[0];
}

std::vector<int64_t> allPartitions(int64_t num_devices) {
  std::vector<int64_t> all(static_cast<size_t>(num_devices), 0);
  for (int64_t d = 0; d < num_devices; ++d)
    all[size_t(d)] = d;
  return all;
}

// How a collective's ids are read (the specification's process-group
// functions).
enum class GroupMode {
  CrossReplica,             ///< ids are replicas; partitions apart
  CrossReplicaAndPartition, ///< ids are replicas, with every partition
  CrossPartition,           ///< ids are partitions
  FlattenedIds,             ///< ids are replica * partitions + partition
};

GroupMode groupMode(const Operation &op) {
  const int64_t channel = channelId(op);
  if (op.is("stablehlo.all_to_all") || op.is("stablehlo.collective_permute") ||
      op.is("stablehlo.collective_broadcast"))
    return channel > 0 ? GroupMode::CrossPartition : GroupMode::CrossReplica;
  if (rules::findAttr(op, "use_global_device_ids"))
    return GroupMode::FlattenedIds;
  return channel > 0 ? GroupMode::CrossReplicaAndPartition
                     : GroupMode::CrossReplica;
}

// The process groups of an op with `replica_groups`, as partition ids (a
// run has one replica, so a device id is its partition id).
Result<std::vector<std::vector<int64_t>>> processGroups(const Operation &op,
                                                        int64_t num_devices) {
  std::vector<std::vector<int64_t>> groups;
  if (const Attr *attr = rules::findAttr(op, "replica_groups"))
    groups = rules::denseIntRows(*attr);
  const GroupMode mode = groupMode(op);
  if (mode == GroupMode::CrossReplica ||
      mode == GroupMode::CrossReplicaAndPartition) {
    for (const std::vector<int64_t> &g : groups)
      for (int64_t id : g)
        if (id != 0)
          return opError(op, "replica_groups name replica " +
                                 std::to_string(id) +
                                 " but a run has one replica (partitions are "
                                 "named with channel_handle and "
                                 "use_global_device_ids)");
    if (mode == GroupMode::CrossReplicaAndPartition)
      return std::vector<std::vector<int64_t>>{allPartitions(num_devices)};
    std::vector<std::vector<int64_t>> alone;
    for (int64_t d = 0; d < num_devices; ++d)
      alone.push_back({d});
    return alone;
  }
  if (groups.empty() || groups.front().empty())
    return std::vector<std::vector<int64_t>>{allPartitions(num_devices)};
  for (const std::vector<int64_t> &g : groups)
    for (int64_t id : g)
      if (id < 0 || id >= num_devices)
        return opError(op, "device " + std::to_string(id) +
                               " in replica_groups, but the run has " +
                               std::to_string(num_devices) + " devices");
  return groups;
}

// The lane of each member of `group`; an error when a member does not run
// this op (it took another branch).
Result<std::vector<size_t>> lanesOf(const Operation &op,
                                    const std::vector<int64_t> &group,
                                    const std::vector<int64_t> &devices) {
  std::vector<size_t> lanes;
  for (int64_t id : group) {
    auto it = std::find(devices.begin(), devices.end(), id);
    if (it == devices.end())
      return opError(op, "device " + std::to_string(id) +
                             " of the group does not reach this collective");
    lanes.push_back(size_t(it - devices.begin()));
  }
  return lanes;
}

std::vector<int64_t> zerosOf(size_t rank) {
  return std::vector<int64_t>(rank, 0);
}

// result = combine(x_g0, x_g1, ...) element by element, in group order (a
// one-op body folded without running the region).
Result<Tensor> combineGroup(Operation &op,
                            const std::vector<const Tensor *> &members,
                            const Combiner &combine) {
  if (!op.numRegions() || op.region(0).empty() ||
      op.region(0).front().numArguments() != 2)
    return opError(op, "expected a reduction region of two arguments");
  const Type scalar = op.region(0).front().argument(0)->type;
  Tensor out = *members[0];
  if (const std::optional<SingleOpBody> body = singleOpBody(op);
      body && foldsElementsOf(*body, out.type()->element)) {
    for (int64_t e = 0; e < out.size(); ++e)
      for (size_t m = 1; m < members.size(); ++m)
        foldElement(*body, out, e, *members[m], e);
    return out;
  }
  for (int64_t e = 0; e < out.size(); ++e) {
    Tensor acc = scalarAt(out, e, scalar);
    for (size_t m = 1; m < members.size(); ++m) {
      Result<std::vector<Tensor>> r =
          combine({acc, scalarAt(*members[m], e, scalar)});
      if (!r)
        return r.error();
      if (r->size() != 1)
        return opError(op, "the reduction region must yield one value");
      acc = std::move((*r)[0]);
    }
    copyElement(out, e, acc, 0);
  }
  return out;
}

using GroupFn = std::function<Result<bool>(const std::vector<size_t> &lanes,
                                           LaneResults &out)>;

// Runs `fn` once per process group, with the lanes of its members.
Result<LaneResults> perGroup(const Operation &op,
                             const std::vector<int64_t> &devices,
                             int64_t num_devices, size_t num_results,
                             const GroupFn &fn) {
  Result<std::vector<std::vector<int64_t>>> groups =
      processGroups(op, num_devices);
  if (!groups)
    return groups.error();
  LaneResults out(num_results, std::vector<Tensor>(devices.size()));
  std::vector<bool> covered(devices.size(), false);
  for (const std::vector<int64_t> &group : *groups) {
    // Groups of devices that do not run this op (another branch) are
    // skipped whole; a group only partly here is an error.
    const bool any_here =
        std::any_of(group.begin(), group.end(), [&](int64_t id) {
          return std::find(devices.begin(), devices.end(), id) != devices.end();
        });
    if (!any_here)
      continue;
    Result<std::vector<size_t>> lanes = lanesOf(op, group, devices);
    if (!lanes)
      return lanes.error();
    for (size_t l : *lanes) {
      if (covered[l])
        return opError(op, "device " + std::to_string(devices[l]) +
                               " is in two groups");
      covered[l] = true;
    }
    Result<bool> done = fn(*lanes, out);
    if (!done)
      return done.error();
  }
  for (size_t l = 0; l < devices.size(); ++l)
    if (!covered[l])
      return opError(op, "device " + std::to_string(devices[l]) +
                             " is in no group");
  return out;
}

Result<LaneResults> allReduce(Operation &op, const std::vector<Operands> &in,
                              const std::vector<int64_t> &devices,
                              int64_t num_devices,
                              const LaneCombiner &reducer) {
  const size_t n = in.empty() ? 0 : in[0].size();
  return perGroup(
      op, devices, num_devices, n,
      [&](const std::vector<size_t> &lanes, LaneResults &out) -> Result<bool> {
        for (size_t i = 0; i < n; ++i) {
          std::vector<const Tensor *> members;
          for (size_t l : lanes)
            members.push_back(in[l][i]);
          Result<Tensor> sum = combineGroup(op, members, reducer(lanes[0]));
          if (!sum)
            return sum.error();
          for (size_t l : lanes)
            out[i][l] = *sum;
        }
        return true;
      });
}

Result<LaneResults> allGather(const Operation &op,
                              const std::vector<Operands> &in,
                              const std::vector<Type> &types,
                              const std::vector<int64_t> &devices,
                              int64_t num_devices) {
  const std::optional<int64_t> dim = rules::intAttr(op, "all_gather_dim");
  if (!dim)
    return opError(op, "no all_gather_dim");
  return perGroup(
      op, devices, num_devices, types.size(),
      [&](const std::vector<size_t> &lanes, LaneResults &out) -> Result<bool> {
        for (size_t i = 0; i < types.size(); ++i) {
          Tensor gathered = Tensor::zeros(types[i]);
          const size_t rank = size_t(gathered.rank());
          for (size_t m = 0; m < lanes.size(); ++m) {
            const Tensor &piece = *in[lanes[m]][i];
            std::vector<int64_t> at = zerosOf(rank);
            at[size_t(*dim)] = int64_t(m) * piece.shape()[size_t(*dim)];
            copyBox(piece, zerosOf(rank), gathered, at, piece.shape());
          }
          for (size_t l : lanes)
            out[i][l] = gathered;
        }
        return true;
      });
}

Result<LaneResults> reduceScatter(Operation &op,
                                  const std::vector<Operands> &in,
                                  const std::vector<Type> &types,
                                  const std::vector<int64_t> &devices,
                                  int64_t num_devices,
                                  const LaneCombiner &reducer) {
  const std::optional<int64_t> dim = rules::intAttr(op, "scatter_dimension");
  if (!dim || types.size() != 1)
    return opError(op, "expected one result and a scatter_dimension");
  return perGroup(
      op, devices, num_devices, 1,
      [&](const std::vector<size_t> &lanes, LaneResults &out) -> Result<bool> {
        std::vector<const Tensor *> members;
        for (size_t l : lanes)
          members.push_back(in[l][0]);
        Result<Tensor> sum = combineGroup(op, members, reducer(lanes[0]));
        if (!sum)
          return sum.error();
        for (size_t m = 0; m < lanes.size(); ++m) {
          Tensor part = Tensor::zeros(types[0]);
          std::vector<int64_t> at = zerosOf(size_t(part.rank()));
          at[size_t(*dim)] = int64_t(m) * part.shape()[size_t(*dim)];
          copyBox(*sum, at, part, zerosOf(size_t(part.rank())), part.shape());
          out[0][lanes[m]] = std::move(part);
        }
        return true;
      });
}

Result<LaneResults> allToAll(const Operation &op,
                             const std::vector<Operands> &in,
                             const std::vector<Type> &types,
                             const std::vector<int64_t> &devices,
                             int64_t num_devices) {
  const std::optional<int64_t> split = rules::intAttr(op, "split_dimension");
  const std::optional<int64_t> concat = rules::intAttr(op, "concat_dimension");
  if (!split || !concat)
    return opError(op, "expected split_dimension and concat_dimension");
  return perGroup(
      op, devices, num_devices, types.size(),
      [&](const std::vector<size_t> &lanes, LaneResults &out) -> Result<bool> {
        const int64_t count = int64_t(lanes.size());
        for (size_t i = 0; i < types.size(); ++i)
          for (int64_t to = 0; to < count; ++to) {
            Tensor received = Tensor::zeros(types[i]);
            for (int64_t from = 0; from < count; ++from) {
              const Tensor &x = *in[lanes[size_t(from)]][i];
              std::vector<int64_t> piece = x.shape();
              piece[size_t(*split)] /= count;
              std::vector<int64_t> src = zerosOf(piece.size());
              src[size_t(*split)] = to * piece[size_t(*split)];
              std::vector<int64_t> dst = zerosOf(piece.size());
              dst[size_t(*concat)] = from * piece[size_t(*concat)];
              copyBox(x, src, received, dst, piece);
            }
            out[i][lanes[size_t(to)]] = std::move(received);
          }
        return true;
      });
}

// collective_permute: pairs of partition ids (channel_handle > 0) or of
// replica ids (one replica: only [0, 0]).
Result<LaneResults> collectivePermute(const Operation &op,
                                      const std::vector<Operands> &in,
                                      const std::vector<Type> &types,
                                      const std::vector<int64_t> &devices,
                                      int64_t num_devices) {
  std::vector<std::vector<int64_t>> pairs;
  if (const Attr *attr = rules::findAttr(op, "source_target_pairs"))
    pairs = rules::denseIntRows(*attr);
  const bool by_partition = groupMode(op) == GroupMode::CrossPartition;
  if (types.size() != 1)
    return opError(op, "expected one result");
  LaneResults out(1,
                  std::vector<Tensor>(devices.size(), Tensor::zeros(types[0])));
  for (const std::vector<int64_t> &pair : pairs) {
    if (pair.size() != 2)
      return opError(op, "source_target_pairs must be pairs");
    if (!by_partition) {
      if (pair[0] != 0 || pair[1] != 0)
        return opError(op, "source_target_pairs name replicas (no "
                           "channel_handle), and a run has one replica");
      for (size_t l = 0; l < devices.size(); ++l)
        out[0][l] = *in[l][0];
      continue;
    }
    for (int64_t id : pair)
      if (id < 0 || id >= num_devices)
        return opError(op, "device " + std::to_string(id) +
                               " in source_target_pairs, but the run has " +
                               std::to_string(num_devices) + " devices");
    auto from = std::find(devices.begin(), devices.end(), pair[0]);
    auto to = std::find(devices.begin(), devices.end(), pair[1]);
    if (from == devices.end() || to == devices.end())
      continue; // a device that does not run it (another branch)
    out[0][size_t(to - devices.begin())] =
        *in[size_t(from - devices.begin())][0];
  }
  return out;
}

Result<LaneResults> collectiveBroadcast(const Operation &op,
                                        const std::vector<Operands> &in,
                                        const std::vector<Type> &types,
                                        const std::vector<int64_t> &devices,
                                        int64_t num_devices) {
  return perGroup(
      op, devices, num_devices, types.size(),
      [&](const std::vector<size_t> &lanes, LaneResults &out) -> Result<bool> {
        for (size_t i = 0; i < types.size(); ++i)
          for (size_t l : lanes)
            out[i][l] = *in[lanes[0]][i];
        return true;
      });
}

} // namespace

Result<LaneResults> collective(Operation &op, const std::vector<Operands> &in,
                               const std::vector<Type> &types,
                               const std::vector<int64_t> &devices,
                               int64_t num_devices,
                               const LaneCombiner &reducer) {
  if (op.is("stablehlo.all_reduce"))
    return allReduce(op, in, devices, num_devices, reducer);
  if (op.is("stablehlo.all_gather"))
    return allGather(op, in, types, devices, num_devices);
  if (op.is("stablehlo.reduce_scatter"))
    return reduceScatter(op, in, types, devices, num_devices, reducer);
  if (op.is("stablehlo.all_to_all"))
    return allToAll(op, in, types, devices, num_devices);
  if (op.is("stablehlo.collective_permute"))
    return collectivePermute(op, in, types, devices, num_devices);
  return collectiveBroadcast(op, in, types, devices, num_devices);
}

} // namespace shardlab::interpreter::detail
