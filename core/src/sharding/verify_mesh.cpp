// Mesh verification (see verify.h): Shardy's MeshAxisAttr / MeshAttr verify.
#include "sharding/verify.h"

#include <algorithm>
#include <set>

namespace shardlab {

std::optional<std::string> verifyMeshAxis(const MeshAxis &axis) {
  if (axis.size <= 0) {
    return "axis size must be at least 1, got: " + std::to_string(axis.size);
  }
  return std::nullopt;
}

namespace {

std::optional<std::string> verifyAxisNames(const Mesh &mesh) {
  std::set<std::string> seen;
  for (const MeshAxis &axis : mesh.axes) {
    if (!seen.insert(axis.name.str()).second) {
      return "duplicate axis name: \"" + axis.name + "\"";
    }
  }
  return std::nullopt;
}

std::string joinIds(const std::vector<int64_t> &ids) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(ids[i]);
  }
  return text;
}

std::optional<std::string> verifyDeviceIdPermutation(const Mesh &mesh) {
  int64_t total = mesh.totalSize();
  int64_t count = static_cast<int64_t>(mesh.device_ids.size());
  if (total != count) {
    return "total product of axis sizes must match total number of device "
           "ids, got: " +
           std::to_string(total) + " != " + std::to_string(count);
  }
  std::vector<int64_t> sorted = mesh.device_ids;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < count; ++i) {
    if (sorted[i] != i) {
      return "sorted device ids must be iota(product(axes)), got: " +
             joinIds(sorted);
    }
  }
  if (std::is_sorted(mesh.device_ids.begin(), mesh.device_ids.end())) {
    return std::string("if the ordered device ids are the same as "
                       "iota(product(axes)), no need to specify them for "
                       "simplicity");
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> verifyMesh(const Mesh &mesh) {
  for (const MeshAxis &axis : mesh.axes) {
    if (auto error = verifyMeshAxis(axis)) {
      return error;
    }
  }
  for (int64_t id : mesh.device_ids) {
    if (id < 0) {
      return "device id must be non-negative, got: " + std::to_string(id);
    }
  }
  if (mesh.axes.empty()) {
    if (mesh.device_ids.size() > 1) {
      return std::string(
          "axes is empty and device_ids has more than one element");
    }
    return std::nullopt;
  }
  if (auto error = verifyAxisNames(mesh)) {
    return error;
  }
  if (mesh.device_ids.empty()) {
    return std::nullopt;
  }
  return verifyDeviceIdPermutation(mesh);
}

} // namespace shardlab
