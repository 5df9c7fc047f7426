// Shards of a global tensor and their assembly (shards.h).
#include "shardlab/interpreter/shards.h"

#include "indexing.h"

#include <algorithm>
#include <string>

namespace shardlab::interpreter {
namespace {

// The coordinate of the mesh position `position` along each axis
// (row-major: the last axis varies fastest).
std::vector<int64_t> meshCoordinates(const Mesh &mesh, int64_t position) {
  std::vector<int64_t> coords(mesh.axes.size(), 0);
  for (size_t a = mesh.axes.size(); a-- > 0;) {
    coords[a] = position % mesh.axes[a].size;
    position /= mesh.axes[a].size;
  }
  return coords;
}

// The coordinate of an axis or sub-axis `(pre)size` of an axis.
Result<std::pair<int64_t, int64_t>>
axisCoordinate(const AxisRef &ref, const Mesh &mesh,
               const std::vector<int64_t> &coords) {
  const int index = mesh.axisIndex(ref.name);
  if (index < 0)
    return makeError("the mesh has no axis \"" + std::string(ref.name.view()) +
                     "\"");
  const int64_t coord = coords[size_t(index)];
  const int64_t size = mesh.axes[size_t(index)].size;
  if (!ref.sub)
    return std::make_pair(coord, size);
  // "x":(m)k splits the axis into [m, k, n / (m k)] and is the middle one.
  const int64_t minor = size / (ref.sub->pre_size * ref.sub->size);
  if (minor <= 0)
    return makeError("sub-axis larger than its axis \"" +
                     std::string(ref.name.view()) + "\"");
  return std::make_pair((coord / minor) % ref.sub->size, ref.sub->size);
}

std::string indexText(const std::vector<int64_t> &index) {
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

} // namespace

std::vector<int64_t> meshDevices(const Mesh &mesh) {
  if (!mesh.device_ids.empty())
    return mesh.device_ids;
  std::vector<int64_t> devices(static_cast<size_t>(mesh.totalSize()), 0);
  for (size_t d = 0; d < devices.size(); ++d)
    devices[d] = int64_t(d);
  return devices;
}

Result<std::vector<int64_t>>
shardOffsets(const TensorSharding &sharding, const Mesh &mesh, int64_t device,
             const std::vector<int64_t> &local_shape) {
  const std::vector<int64_t> devices = meshDevices(mesh);
  auto at = std::find(devices.begin(), devices.end(), device);
  if (at == devices.end())
    return makeError("device " + std::to_string(device) +
                     " is not in the mesh");
  const std::vector<int64_t> coords =
      meshCoordinates(mesh, int64_t(at - devices.begin()));
  std::vector<int64_t> offsets(local_shape.size(), 0);
  for (size_t d = 0; d < sharding.dims.size() && d < offsets.size(); ++d) {
    int64_t shard = 0;
    for (const AxisRef &ref : sharding.dims[d].axes) {
      Result<std::pair<int64_t, int64_t>> c = axisCoordinate(ref, mesh, coords);
      if (!c)
        return c.error();
      shard = shard * c->second + c->first;
    }
    offsets[d] = shard * local_shape[d];
  }
  return offsets;
}

Result<std::vector<std::vector<int64_t>>>
shardOffsetsOnDevices(const TensorSharding &sharding, const Mesh &mesh,
                      const std::vector<int64_t> &devices,
                      const std::vector<int64_t> &local_shape) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t device : devices) {
    Result<std::vector<int64_t>> at =
        shardOffsets(sharding, mesh, device, local_shape);
    if (!at)
      return at.error();
    out.push_back(std::move(*at));
  }
  return out;
}

Tensor shardOf(const Tensor &global, Type local,
               const std::vector<int64_t> &offsets) {
  Tensor out = Tensor::zeros(local);
  std::vector<int64_t> sizes = out.shape();
  for (size_t d = 0; d < sizes.size(); ++d)
    sizes[d] = std::max<int64_t>(
        0, std::min(sizes[d], global.shape()[d] - offsets[d]));
  detail::copyBox(global, offsets, out, std::vector<int64_t>(sizes.size(), 0),
                  sizes);
  return out;
}

Result<Tensor> assemble(const std::vector<Tensor> &shards,
                        const std::vector<std::vector<int64_t>> &offsets,
                        Type global) {
  Tensor out = Tensor::zeros(global);
  std::vector<int64_t> holder(size_t(out.size()), -1);
  const std::vector<int64_t> strides = out.strides();
  for (size_t s = 0; s < shards.size(); ++s) {
    const Tensor &shard = shards[s];
    if (shard.size() == 0)
      continue;
    const std::vector<int64_t> shard_strides = shard.strides();
    std::vector<int64_t> index(size_t(shard.rank()), 0), at(index.size());
    do {
      bool inside = true;
      for (size_t d = 0; d < index.size(); ++d) {
        at[d] = offsets[s][d] + index[d];
        inside = inside && at[d] < out.shape()[d];
      }
      if (!inside)
        continue; // padding
      const int64_t to = detail::flatIndex(at, strides);
      const int64_t from = detail::flatIndex(index, shard_strides);
      if (holder[size_t(to)] < 0) {
        detail::copyElement(out, to, shard, from);
        holder[size_t(to)] = int64_t(s);
        continue;
      }
      for (unsigned p = 0; p < out.parts(); ++p)
        if (out.bits(to, p) != shard.bits(from, p))
          return makeError("shards " + std::to_string(holder[size_t(to)]) +
                           " and " + std::to_string(s) +
                           " disagree at element " + indexText(at));
    } while (detail::nextIndex(index, shard.shape()));
  }
  for (int64_t i = 0; i < out.size(); ++i)
    if (holder[size_t(i)] < 0)
      return makeError("no device holds element " + std::to_string(i));
  return out;
}

} // namespace shardlab::interpreter
