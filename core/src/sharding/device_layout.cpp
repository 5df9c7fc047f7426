// Device coordinates, groups and permutations of a mesh (device_layout.h).
#include "sharding/device_layout.h"

#include "shardlab/sharding/axis.h"

#include <algorithm>

namespace shardlab {
namespace {

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

// `coords` with the digits of `axes` set to zero: what devices that differ
// only along `axes` have in common.
std::vector<int64_t> withoutAxes(const Mesh &mesh,
                                 const std::vector<AxisRef> &axes,
                                 std::vector<int64_t> coords) {
  for (const AxisRef &ref : axes) {
    const auto [digit, weight] = digitOf(mesh, ref, coords);
    const int index = mesh.axisIndex(ref.name);
    if (index >= 0)
      coords[size_t(index)] -= digit * weight;
  }
  return coords;
}

// The parts of the axis of `size` that `used` (sub-axes of it) leave out,
// major first, as sub-axes (the whole axis when none is used).
std::vector<AxisRef> freeParts(const MeshAxis &axis,
                               std::vector<SubAxisInfo> used) {
  std::sort(used.begin(), used.end(),
            [](const SubAxisInfo &a, const SubAxisInfo &b) {
              return a.pre_size < b.pre_size;
            });
  std::vector<AxisRef> parts;
  auto add = [&](int64_t pre, int64_t part) {
    if (part <= 1)
      return;
    if (pre == 1 && part == axis.size)
      parts.push_back({axis.name, std::nullopt});
    else
      parts.push_back({axis.name, SubAxisInfo{pre, part}});
  };
  int64_t covered = 1;
  for (const SubAxisInfo &sub : used) {
    if (sub.pre_size > covered)
      add(covered, sub.pre_size / covered);
    covered = std::max(covered, sub.pre_size * sub.size);
  }
  if (covered < axis.size)
    add(covered, axis.size / covered);
  return parts;
}

} // namespace

// AxesDigits (device_layout.h).
AxesDigits::AxesDigits(const Mesh &mesh, const std::vector<AxisRef> &axes) {
  std::vector<int64_t> stride(mesh.axes.size(), 1);
  for (size_t i = mesh.axes.size(); i-- > 1;)
    stride[i - 1] = stride[i] * mesh.axes[i].size;
  for (const AxisRef &ref : axes) {
    Digit d;
    d.size = axisRefSize(ref, mesh);
    const int index = mesh.axisIndex(ref.name);
    if (index >= 0) {
      d.full = mesh.axes[size_t(index)].size;
      d.stride = stride[size_t(index)];
      d.minor = d.full / (subAxisPreSize(ref) * d.size);
    }
    digits_.push_back(d);
  }
}

std::vector<AxisRef> deviceOrder(const Mesh &mesh,
                                 const TensorSharding &sharding) {
  std::vector<AxisRef> order;
  for (const DimSharding &dim : sharding.dims)
    order.insert(order.end(), dim.axes.begin(), dim.axes.end());
  for (const MeshAxis &axis : mesh.axes) {
    std::vector<SubAxisInfo> used;
    bool whole = false;
    for (const AxisRef &ref : order)
      if (ref.name == axis.name) {
        if (ref.sub)
          used.push_back(*ref.sub);
        else
          whole = true;
      }
    if (whole)
      continue;
    const std::vector<AxisRef> parts = freeParts(axis, used);
    order.insert(order.end(), parts.begin(), parts.end());
  }
  return order;
}

std::vector<int64_t> meshCoordinates(const Mesh &mesh, int64_t linear) {
  std::vector<int64_t> coords(mesh.axes.size());
  for (size_t i = mesh.axes.size(); i-- > 0;) {
    coords[i] = linear % mesh.axes[i].size;
    linear /= mesh.axes[i].size;
  }
  return coords;
}

int64_t deviceIdAt(const Mesh &mesh, int64_t linear) {
  return mesh.device_ids.empty() ? linear : mesh.device_ids[size_t(linear)];
}

int64_t meshPosition(const Mesh &mesh, const std::vector<int64_t> &coords) {
  int64_t linear = 0;
  for (size_t i = 0; i < mesh.axes.size() && i < coords.size(); ++i)
    linear = linear * mesh.axes[i].size + coords[i];
  return linear;
}

std::vector<std::vector<int64_t>> pairsAlongAxis(const Mesh &mesh, int axis,
                                                 int64_t hop, bool wrap) {
  std::vector<std::vector<int64_t>> out;
  const int64_t size = mesh.axes[size_t(axis)].size;
  for (int64_t p = 0; p < mesh.totalSize(); ++p) {
    std::vector<int64_t> coords = meshCoordinates(mesh, p);
    int64_t &at = coords[size_t(axis)];
    at += hop;
    if (wrap)
      at = ((at % size) + size) % size;
    if (at < 0 || at >= size)
      continue;
    out.push_back(
        {deviceIdAt(mesh, p), deviceIdAt(mesh, meshPosition(mesh, coords))});
  }
  return out;
}

std::vector<int64_t> coordinatesWithIndex(const Mesh &mesh,
                                          const std::vector<AxisRef> &axes,
                                          std::vector<int64_t> coords,
                                          int64_t index) {
  coords = withoutAxes(mesh, axes, std::move(coords));
  for (size_t k = axes.size(); k-- > 0;) {
    const int axis = mesh.axisIndex(axes[k].name);
    const int64_t size = axisRefSize(axes[k], mesh);
    if (axis >= 0)
      coords[size_t(axis)] +=
          (index % size) * digitOf(mesh, axes[k], coords).second;
    index /= size;
  }
  return coords;
}

int64_t indexAlongAxes(const Mesh &mesh, const std::vector<AxisRef> &axes,
                       const std::vector<int64_t> &coords) {
  int64_t index = 0;
  for (const AxisRef &ref : axes)
    index = index * axisRefSize(ref, mesh) + digitOf(mesh, ref, coords).first;
  return index;
}

std::vector<int64_t> shardIndexByDevice(const Mesh &mesh,
                                        const std::vector<AxisRef> &axes) {
  const int64_t total = mesh.totalSize();
  const AxesDigits digits(mesh, axes);
  std::vector<int64_t> table(size_t(total), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    const int64_t id = deviceIdAt(mesh, linear);
    if (id >= 0 && id < total)
      table[size_t(id)] = digits.index(linear);
  }
  return table;
}

std::vector<std::vector<int64_t>>
deviceGroups(const Mesh &mesh, const std::vector<AxisRef> &axes) {
  const int64_t total = mesh.totalSize();
  const int64_t group_size = axesTotalSize(axes, mesh);
  const AxesDigits digits(mesh, axes);
  // A group's first device in mesh order is the one whose digits are all
  // zero (position == rest), so groups are made in the order of the other
  // axes' coordinates.
  std::vector<int64_t> group_at(size_t(total), -1);
  std::vector<std::vector<int64_t>> out;
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t &at = group_at[size_t(digits.rest(linear))];
    if (at < 0) {
      at = int64_t(out.size());
      out.emplace_back(size_t(group_size), -1);
    }
    const int64_t position = digits.index(linear);
    if (position < group_size)
      out[size_t(at)][size_t(position)] = deviceIdAt(mesh, linear);
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>>
permutationPairs(const Mesh &from_mesh, const TensorSharding &from,
                 const Mesh &to_mesh, const TensorSharding &to) {
  const std::vector<AxisRef> from_order = deviceOrder(from_mesh, from);
  const std::vector<AxisRef> to_order = deviceOrder(to_mesh, to);
  const int64_t total = to_mesh.totalSize();
  const AxesDigits to_digits(to_mesh, to_order);
  const AxesDigits from_digits(from_mesh, from_order);
  std::vector<int64_t> at_position(size_t(total), -1);
  for (int64_t linear = 0; linear < total; ++linear) {
    const int64_t position = to_digits.index(linear);
    if (position < total)
      at_position[size_t(position)] = deviceIdAt(to_mesh, linear);
  }
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const int64_t sources = from_mesh.totalSize();
  for (int64_t linear = 0; linear < sources; ++linear) {
    const int64_t position = from_digits.index(linear);
    if (position < total && at_position[size_t(position)] >= 0)
      pairs.push_back(
          {deviceIdAt(from_mesh, linear), at_position[size_t(position)]});
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

} // namespace shardlab
