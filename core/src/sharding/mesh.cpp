// Mesh member functions declared in sharding.h, and mesh helpers.
#include "shardlab/sharding/mesh.h"

#include <numeric>

namespace shardlab {

int64_t Mesh::totalSize() const {
  int64_t total = 1;
  for (const MeshAxis &axis : axes) {
    total *= axis.size;
  }
  return total;
}

std::optional<int64_t> Mesh::axisSize(const AxisName &name) const {
  for (const MeshAxis &axis : axes) {
    if (axis.name == name) {
      return axis.size;
    }
  }
  return std::nullopt;
}

int Mesh::axisIndex(const AxisName &name) const {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].name == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool isIotaDeviceIds(const std::vector<MeshAxis> &axes,
                     const std::vector<int64_t> &device_ids) {
  if (axes.empty()) {
    return false;
  }
  int64_t total = 1;
  for (const MeshAxis &axis : axes) {
    total *= axis.size;
  }
  if (static_cast<int64_t>(device_ids.size()) != total) {
    return false;
  }
  for (size_t i = 0; i < device_ids.size(); ++i) {
    if (device_ids[i] != static_cast<int64_t>(i)) {
      return false;
    }
  }
  return true;
}

Mesh makeMesh(std::vector<MeshAxis> axes, std::vector<int64_t> device_ids) {
  if (isIotaDeviceIds(axes, device_ids)) {
    device_ids.clear();
  }
  return Mesh{std::move(axes), std::move(device_ids)};
}

bool equalsIgnoringDeviceIds(const Mesh &a, const Mesh &b) {
  return a.isMaximal() == b.isMaximal() && a.axes == b.axes;
}

const Mesh *commonMesh(const std::vector<const Mesh *> &meshes) {
  const Mesh *common = nullptr;
  for (const Mesh *mesh : meshes) {
    if (!mesh) {
      continue;
    }
    if (!common || common->isEmpty()) {
      common = mesh;
      continue;
    }
    if (mesh->isEmpty()) {
      continue;
    }
    if (!(*mesh == *common)) {
      return nullptr;
    }
  }
  return common;
}

} // namespace shardlab
