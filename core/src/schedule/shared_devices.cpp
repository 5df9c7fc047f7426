// The shared-device rule of the list scheduler (shared_devices.h).
#include "schedule/shared_devices.h"

#include <algorithm>

namespace shardlab::schedule::detail {

namespace {

// For each device, the groups of `groups` that list it (each group once).
std::vector<std::vector<int32_t>> groupsByDevice(const DeviceGroups &groups) {
  int64_t devices = 0;
  for (const std::vector<int64_t> &group : groups)
    for (int64_t d : group)
      devices = std::max(devices, d + 1);
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(devices));
  for (size_t g = 0; g < groups.size(); ++g)
    for (int64_t d : groups[g]) {
      if (d < 0)
        continue;
      std::vector<int32_t> &of = out[size_t(d)];
      if (of.empty() || of.back() != int32_t(g))
        of.push_back(int32_t(g));
    }
  return out;
}

} // namespace

bool shareMoreThanOneDevice(const DeviceGroups &a, const DeviceGroups &b) {
  const std::vector<std::vector<int32_t>> of_b = groupsByDevice(b);
  // count[g]: devices of the current group of `a` that b's group g lists;
  // `seen` says which group of `a` the count belongs to.
  std::vector<int64_t> count(b.size(), 0), seen(b.size(), -1);
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t d : a[i]) {
      if (d < 0 || size_t(d) >= of_b.size())
        continue;
      for (int32_t group : of_b[size_t(d)]) {
        const size_t g = size_t(group);
        if (seen[g] != int64_t(i)) {
          seen[g] = int64_t(i);
          count[g] = 0;
        }
        if (++count[g] > 1)
          return true;
      }
    }
  return false;
}

int64_t SharedDeviceRule::idOf(const DeviceGroups *groups) const {
  auto it = id_by_pointer_.find(groups);
  if (it != id_by_pointer_.end())
    return it->second;
  const auto [by_content, added] =
      id_by_content_.emplace(*groups, int64_t(lists_.size()));
  if (added)
    lists_.push_back(groups);
  id_by_pointer_.emplace(groups, by_content->second);
  return by_content->second;
}

bool SharedDeviceRule::operator()(const Node &a, const Node &b) const {
  if (!a.device_groups || !b.device_groups)
    return false;
  const int64_t ia = idOf(a.device_groups.get()),
                ib = idOf(b.device_groups.get());
  const uint64_t key = (uint64_t(ia) << 32) | uint64_t(ib);
  auto it = answers_.find(key);
  if (it == answers_.end())
    it = answers_
             .emplace(key, shareMoreThanOneDevice(*lists_[size_t(ia)],
                                                  *lists_[size_t(ib)]))
             .first;
  return it->second;
}

} // namespace shardlab::schedule::detail
