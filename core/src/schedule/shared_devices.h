// XLA's GPU rule that two collectives whose device groups share more than
// one device never run at the same time (each would wait on the other's
// devices), asked by the list scheduler for every ready collective against
// every one in flight, at every step.
//
// Rule: groups A and B share more than one device when some group a of A
// and some group b of B have two devices in common (a device counted once
// for each time a lists it). For example {{0, 1}, {2, 3}} and
// {{0, 2}, {1, 3}} share one device a pair (no); {{0, 1}, {2, 3}} and
// {{0, 1, 2, 3}} share two (yes). A collective_permute's groups are its
// source-target pairs (program_stablehlo.cpp); XLA reads replica groups,
// which a permute has none of, so it may let two permutes overlap where
// this rule does not (not checked against XLA).
//
// Worked out in time linear in the groups' sizes (a ring of 2,048
// collective-permute pairs against another was 2,048 x 2,048 pairs, each
// scanned), once for each pair of group lists: a loop's collectives share
// their groups across iterations, so the same few pairs are asked again and
// again.
#pragma once

#include "shardlab/schedule/graph.h"

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace shardlab::schedule::detail {

using DeviceGroups = std::vector<std::vector<int64_t>>;

/// The rule worked out directly from the groups (a negative id names no
/// device and is ignored).
bool shareMoreThanOneDevice(const DeviceGroups &a, const DeviceGroups &b);

/// The rule for two nodes' groups (false if either has none), worked out
/// once for each pair of distinct group lists: nodes whose lists are equal
/// (a loop's iterations, a bucket's layers) share an answer. Not
/// thread-safe: one per scheduler run.
class SharedDeviceRule {
public:
  bool operator()(const Node &a, const Node &b) const;

private:
  /// An id for the list `groups` points at, the same for equal lists.
  int64_t idOf(const DeviceGroups *groups) const;

  mutable std::unordered_map<const DeviceGroups *, int64_t> id_by_pointer_;
  mutable std::map<DeviceGroups, int64_t> id_by_content_;
  mutable std::vector<const DeviceGroups *> lists_;    ///< by id
  mutable std::unordered_map<uint64_t, bool> answers_; ///< by id pair
};

} // namespace shardlab::schedule::detail
