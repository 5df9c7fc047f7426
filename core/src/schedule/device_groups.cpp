// Device groups and permutation pairs of sdy collectives, from the mesh
// coordinates of every device (axes and sub-axes as mixed-radix digits).
#include "shardlab/schedule/program.h"
#include "shardlab/sharding/axis.h"

#include <map>

namespace shardlab::schedule {
namespace {

// Row-major coordinates of mesh position `linear`.
std::vector<int64_t> coordinates(const Mesh &mesh, int64_t linear) {
  std::vector<int64_t> coords(mesh.axes.size());
  for (size_t i = mesh.axes.size(); i-- > 0;) {
    coords[i] = linear % mesh.axes[i].size;
    linear /= mesh.axes[i].size;
  }
  return coords;
}

// The digit of `ref` in a device's coordinate of its axis, and the weight
// of one step of that digit inside the axis coordinate.
std::pair<int64_t, int64_t> digitOf(const Mesh &mesh, const AxisRef &ref,
                                    const std::vector<int64_t> &coords) {
  const int index = mesh.axisIndex(ref.name);
  if (index < 0)
    return {0, 1};
  const int64_t full = mesh.axes[size_t(index)].size;
  const int64_t size = axisRefSize(ref, mesh);
  const int64_t minor = full / (subAxisPreSize(ref) * size);
  return {(coords[size_t(index)] / minor) % size, minor};
}

int64_t deviceId(const Mesh &mesh, int64_t linear) {
  return mesh.device_ids.empty() ? linear : mesh.device_ids[size_t(linear)];
}

// Per-dimension shard index of the device at `coords`.
std::vector<int64_t> shardKey(const Mesh &mesh, const TensorSharding &s,
                              const std::vector<int64_t> &coords) {
  std::vector<int64_t> key;
  for (const DimSharding &dim : s.dims) {
    int64_t index = 0;
    for (const AxisRef &ref : dim.axes)
      index = index * axisRefSize(ref, mesh) + digitOf(mesh, ref, coords).first;
    key.push_back(index);
  }
  return key;
}

} // namespace

std::vector<std::vector<int64_t>>
deviceGroups(const Mesh &mesh, const std::vector<AxisRef> &axes) {
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  const int64_t total = mesh.totalSize();
  const int64_t group_size = axesTotalSize(axes, mesh);
  for (int64_t linear = 0; linear < total; ++linear) {
    std::vector<int64_t> coords = coordinates(mesh, linear);
    int64_t position = 0;
    for (const AxisRef &ref : axes) {
      const auto [digit, weight] = digitOf(mesh, ref, coords);
      position = position * axisRefSize(ref, mesh) + digit;
      const int index = mesh.axisIndex(ref.name);
      if (index >= 0)
        coords[size_t(index)] -= digit * weight;
    }
    std::vector<int64_t> &group = groups[coords];
    group.resize(size_t(group_size), -1);
    if (position < group_size)
      group[size_t(position)] = deviceId(mesh, linear);
  }
  std::vector<std::vector<int64_t>> out;
  for (auto &entry : groups)
    out.push_back(std::move(entry.second));
  return out;
}

std::vector<std::pair<int64_t, int64_t>>
permutePairs(const Mesh &mesh, const TensorSharding &from,
             const TensorSharding &to) {
  std::map<std::vector<int64_t>, std::vector<int64_t>> holders;
  const int64_t total = mesh.totalSize();
  for (int64_t linear = 0; linear < total; ++linear)
    holders[shardKey(mesh, to, coordinates(mesh, linear))].push_back(linear);
  std::map<std::vector<int64_t>, size_t> used;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t linear = 0; linear < total; ++linear) {
    const auto key = shardKey(mesh, from, coordinates(mesh, linear));
    const auto it = holders.find(key);
    if (it == holders.end() || it->second.empty())
      continue;
    const int64_t target = it->second[used[key]++ % it->second.size()];
    if (target != linear)
      pairs.push_back({deviceId(mesh, linear), deviceId(mesh, target)});
  }
  return pairs;
}

} // namespace shardlab::schedule
