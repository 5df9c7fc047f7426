// Mesh helpers beyond the Mesh members in sharding.h: building a mesh the
// way Shardy's MeshAttr builder does (an explicit iota device list is
// dropped), resolving a MeshRef, and finding the common mesh of several
// shardings.
#pragma once

#include "shardlab/sharding/sharding.h"

#include <string>
#include <vector>

namespace shardlab {

/// Whether `device_ids` is exactly iota(product(axes)) with axes non-empty
/// (the list Shardy's builder discards).
bool isIotaDeviceIds(const std::vector<MeshAxis> &axes,
                     const std::vector<int64_t> &device_ids);
/// Builds a mesh as MeshAttr::get does: an iota device list is dropped, so
/// `<["a"=2], device_ids=[0, 1]>` equals `<["a"=2]>`. Parsers should build
/// meshes through this before calling verifyMesh.
Mesh makeMesh(std::vector<MeshAxis> axes, std::vector<int64_t> device_ids);
/// MeshAttr::equals(other, ignoreDeviceIds=true).
bool equalsIgnoringDeviceIds(const Mesh &a, const Mesh &b);
/// Shardy's getCommonMesh over the resolved meshes of several shardings
/// (nullptr entries are skipped): empty meshes are ignored, and nullptr is
/// returned when two non-empty meshes differ.
const Mesh *commonMesh(const std::vector<const Mesh *> &meshes);

} // namespace shardlab
