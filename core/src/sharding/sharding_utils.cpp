// Queries and constructors on TensorSharding values (see sharding_utils.h).
#include "sharding/sharding_utils.h"

#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/shape.h"

#include <algorithm>

namespace shardlab {

int64_t shardedSize(const DimSharding &dim, const Mesh &mesh) {
  return axesTotalSize(dim.axes, mesh);
}

int64_t shardedSizeAt(const TensorSharding &sharding, size_t dim,
                      const Mesh &mesh) {
  return dim < sharding.dims.size() ? shardedSize(sharding.dims[dim], mesh) : 1;
}

std::vector<int64_t> localShape(const std::vector<int64_t> &global,
                                const TensorSharding &sharding,
                                const Mesh &mesh) {
  if (global.size() != sharding.dims.size()) {
    return global;
  }
  std::vector<int64_t> local;
  local.reserve(global.size());
  for (size_t i = 0; i < global.size(); ++i) {
    int64_t shards = shardedSize(sharding.dims[i], mesh);
    if (global[i] == kDynamic || shards <= 0) {
      local.push_back(global[i]);
    } else {
      local.push_back((global[i] + shards - 1) / shards);
    }
  }
  return local;
}

std::vector<int64_t> paddedShape(const std::vector<int64_t> &global,
                                 const TensorSharding &sharding,
                                 const Mesh &mesh) {
  std::vector<int64_t> padded = global;
  for (size_t i = 0; i < padded.size() && padded.size() == sharding.dims.size();
       ++i) {
    const int64_t shards = shardedSize(sharding.dims[i], mesh);
    if (padded[i] != kDynamic && shards > 1)
      padded[i] = (padded[i] + shards - 1) / shards * shards;
  }
  return padded;
}

bool isDivisible(const std::vector<int64_t> &global,
                 const TensorSharding &sharding, const Mesh &mesh) {
  if (global.size() != sharding.dims.size()) {
    return false;
  }
  for (size_t i = 0; i < global.size(); ++i) {
    int64_t shards = shardedSize(sharding.dims[i], mesh);
    if (global[i] != kDynamic && shards > 0 && global[i] % shards != 0) {
      return false;
    }
  }
  return true;
}

TensorSharding fullyOpenSharding(const MeshRef &mesh, size_t rank) {
  TensorSharding sharding;
  sharding.mesh = mesh;
  sharding.dims.assign(rank, DimSharding{{}, /*closed=*/false, {}});
  return sharding;
}

TensorSharding fullyClosedSharding(const MeshRef &mesh, size_t rank) {
  TensorSharding sharding;
  sharding.mesh = mesh;
  sharding.dims.assign(rank, DimSharding{{}, /*closed=*/true, {}});
  return sharding;
}

bool isFullyReplicated(const TensorSharding &sharding) {
  return std::all_of(sharding.dims.begin(), sharding.dims.end(),
                     [](const DimSharding &dim) { return dim.axes.empty(); });
}

bool isEquivalent(const TensorSharding &a, const TensorSharding &b,
                  bool ignore_unreduced) {
  auto replicated = [&](const TensorSharding &s) {
    return (ignore_unreduced || s.unreduced.empty()) && isFullyReplicated(s);
  };
  if (replicated(a)) {
    return replicated(b);
  }
  if (!(a.mesh == b.mesh) || a.dims.size() != b.dims.size()) {
    return false;
  }
  if (!ignore_unreduced && a.unreduced != b.unreduced) {
    return false;
  }
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i].axes != b.dims[i].axes) {
      return false;
    }
  }
  return true;
}

void canonicalizeReplicatedAndUnreduced(TensorSharding &sharding,
                                        const Mesh &mesh) {
  sortAndMergeAxes(sharding.replicated, mesh);
  sortAndMergeAxes(sharding.unreduced, mesh);
}

TensorSharding withoutAxes(TensorSharding sharding,
                           const std::vector<std::string> &axes) {
  auto named = [&](const AxisRef &axis) {
    return std::find(axes.begin(), axes.end(), axis.name) != axes.end();
  };
  for (DimSharding &dim : sharding.dims)
    std::erase_if(dim.axes, named);
  std::erase_if(sharding.replicated, named);
  std::erase_if(sharding.unreduced, named);
  return sharding;
}

} // namespace shardlab
