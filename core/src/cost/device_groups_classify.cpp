// XLA's communication-type and collective-permute-type classifications.
#include "shardlab/cost/device_groups.h"

#include <algorithm>
#include <map>
#include <set>

namespace shardlab::cost {
namespace {

using Histogram = std::map<int64_t, int64_t>;

Histogram partitionHistogram(const std::vector<int64_t> &group,
                             int64_t partition_size) {
  Histogram h;
  for (int64_t id : group)
    ++h[id / partition_size];
  return h;
}

std::vector<int64_t> sortedCounts(const Histogram &h) {
  std::vector<int64_t> counts;
  for (const auto &[partition, count] : h)
    counts.push_back(count);
  std::sort(counts.begin(), counts.end());
  return counts;
}

} // namespace

std::string_view toText(CommType type) {
  switch (type) {
  case CommType::SinglePartition:
    return "single_partition";
  case CommType::WorldLevel:
    return "world_level";
  case CommType::NonWorldLevel:
    return "non_world_level";
  }
  return "?";
}

Result<CommType> parseCommType(std::string_view text) {
  for (CommType t : {CommType::SinglePartition, CommType::WorldLevel,
                     CommType::NonWorldLevel})
    if (text == toText(t))
      return t;
  return makeError("unknown comm_type '" + std::string(text) +
                   "' (expected single_partition, world_level or "
                   "non_world_level)");
}

Result<CommType> classifyCommType(const ReplicaGroups &groups,
                                  int64_t partition_size,
                                  int64_t replica_count) {
  if (partition_size <= 0)
    return makeError("partition size must be positive");
  Result<std::vector<std::vector<int64_t>>> lists = expand(groups);
  if (!lists)
    return lists.error();
  if (lists->empty())
    return replica_count <= partition_size ? CommType::SinglePartition
                                           : CommType::WorldLevel;
  const Histogram first = partitionHistogram((*lists)[0], partition_size);
  const std::vector<int64_t> counts = sortedCounts(first);
  for (const auto &group : *lists)
    if (sortedCounts(partitionHistogram(group, partition_size)) != counts)
      return makeError("Non homogenous replica group");
  if (first.size() == 1)
    return CommType::SinglePartition;
  for (const auto &[partition, count] : first)
    if (count != partition_size)
      return CommType::NonWorldLevel;
  return CommType::WorldLevel;
}

namespace {

constexpr PermuteType kAllPermuteTypes[] = {
    PermuteType::IntraPartitionOneWay,
    PermuteType::IntraPartitionTwoWayAllMutual,
    PermuteType::IntraPartitionTwoWayHasNonMutual,
    PermuteType::InterPartitionOneWay,
    PermuteType::InterPartitionTwoWayAllMutual,
    PermuteType::InterPartitionTwoWayHasNonMutual,
};

} // namespace

std::string_view toText(PermuteType type) {
  switch (type) {
  case PermuteType::IntraPartitionOneWay:
    return "intra_partition_one_way";
  case PermuteType::IntraPartitionTwoWayAllMutual:
    return "intra_partition_two_way_all_mutual";
  case PermuteType::IntraPartitionTwoWayHasNonMutual:
    return "intra_partition_two_way_has_non_mutual";
  case PermuteType::InterPartitionOneWay:
    return "inter_partition_one_way";
  case PermuteType::InterPartitionTwoWayAllMutual:
    return "inter_partition_two_way_all_mutual";
  case PermuteType::InterPartitionTwoWayHasNonMutual:
    return "inter_partition_two_way_has_non_mutual";
  }
  return "?";
}

Result<PermuteType> parsePermuteType(std::string_view text) {
  for (PermuteType t : kAllPermuteTypes)
    if (text == toText(t))
      return t;
  return makeError("unknown permute_type '" + std::string(text) + "'");
}

bool isInterPartition(PermuteType type) {
  return type == PermuteType::InterPartitionOneWay ||
         type == PermuteType::InterPartitionTwoWayAllMutual ||
         type == PermuteType::InterPartitionTwoWayHasNonMutual;
}

Result<PermuteType> classifyPermute(const SourceTargetPairs &pairs,
                                    int64_t partition_size) {
  if (partition_size <= 0)
    return makeError("partition size must be positive");
  std::set<int64_t> sources, targets;
  std::set<std::pair<int64_t, int64_t>> edges(pairs.begin(), pairs.end());
  bool inter = false, mutual = true;
  for (const auto &[s, t] : pairs) {
    if (s < 0 || t < 0)
      return makeError("source/target ids must be non-negative");
    inter = inter || (s / partition_size != t / partition_size);
    mutual = mutual && edges.count({t, s}) != 0;
    sources.insert(s);
    targets.insert(t);
  }
  bool two_way = false;
  for (int64_t s : sources)
    two_way = two_way || targets.count(s) != 0;
  const int base = inter ? 3 : 0;
  const int kind = !two_way ? 0 : (mutual ? 1 : 2);
  return kAllPermuteTypes[base + kind];
}

} // namespace shardlab::cost
