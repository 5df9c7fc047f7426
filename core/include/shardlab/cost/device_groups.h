// Replica groups of a collective (iota or explicit lists) and the
// classifications XLA derives from them: communication type (single
// partition / world level / non-world level) and collective-permute type.
#pragma once

#include "shardlab/support/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardlab::cost {

/// XLA's iota device list `[G,S]<=[reshape_dims]T(transpose_perm)`.
struct IotaGroups {
  int64_t num_groups = 0;
  int64_t group_size = 0;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose_perm;
};

/// Replica groups: either explicit device lists or an iota description.
struct ReplicaGroups {
  std::vector<std::vector<int64_t>> lists;
  bool is_iota = false;
  IotaGroups iota;

  static ReplicaGroups fromLists(std::vector<std::vector<int64_t>> lists);
  static ReplicaGroups fromIota(IotaGroups iota);
  int64_t num_groups() const;
  int64_t group_size() const;
};

/// Expands an iota description into explicit groups; checks the sizes.
Result<std::vector<std::vector<int64_t>>> expandIota(const IotaGroups &iota);
/// Expands any ReplicaGroups into explicit lists.
Result<std::vector<std::vector<int64_t>>> expand(const ReplicaGroups &groups);
/// Parses `[G,S]<=[d...]` with optional `T(p...)`, or `{{0,1},{2,3}}`.
Result<ReplicaGroups> parseReplicaGroups(std::string_view text);
/// Prints the canonical text form (iota form for iota groups).
std::string toText(const ReplicaGroups &groups);
/// XLA's CanonicalDeviceList: iota groups kept, explicit lists replaced by
/// the contiguous iota [G,S]<=[G*S] (the device pattern is dropped).
ReplicaGroups canonicalDeviceList(const ReplicaGroups &groups);
/// A key that identifies canonical groups (used by exact table lookups).
Result<std::string> canonicalKey(const ReplicaGroups &groups);

/// XLA's GPUCommunicationType ("transfer scheme").
enum class CommType { SinglePartition, WorldLevel, NonWorldLevel };
std::string_view toText(CommType type);
Result<CommType> parseCommType(std::string_view text);

/// Classifies groups given the NVLink partition size (devices per host).
/// `replica_count` is used only when there are no groups.
Result<CommType> classifyCommType(const ReplicaGroups &groups,
                                  int64_t partition_size,
                                  int64_t replica_count = 0);

/// XLA's CollectivePermuteCostModelType.
enum class PermuteType {
  IntraPartitionOneWay,
  IntraPartitionTwoWayAllMutual,
  IntraPartitionTwoWayHasNonMutual,
  InterPartitionOneWay,
  InterPartitionTwoWayAllMutual,
  InterPartitionTwoWayHasNonMutual,
};
std::string_view toText(PermuteType type);
Result<PermuteType> parsePermuteType(std::string_view text);
bool isInterPartition(PermuteType type);

using SourceTargetPairs = std::vector<std::pair<int64_t, int64_t>>;
/// Classifies a collective-permute's pairs given the partition size.
Result<PermuteType> classifyPermute(const SourceTargetPairs &pairs,
                                    int64_t partition_size);

} // namespace shardlab::cost
