// sdy.manual_computation verification (see manual_verify.h).
#include "sharding/manual_verify.h"

#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"
#include "shardlab/sharding/shape.h"

#include <algorithm>

namespace shardlab {

namespace {

bool isManual(const std::vector<std::string> &manual, const AxisRef &axis) {
  return std::find(manual.begin(), manual.end(), axis.name) != manual.end();
}

// Product of the sizes of the manual axes among `axes`.
int64_t manualAxesSize(const std::vector<AxisRef> &axes, const Mesh &mesh,
                       const std::vector<std::string> &manual) {
  int64_t size = 1;
  for (const AxisRef &axis : axes) {
    size *= isManual(manual, axis) ? axisRefSize(axis, mesh) : 1;
  }
  return size;
}

std::optional<std::string>
checkManualBeforeFree(const std::string &kind, size_t index,
                      const TensorSharding &sharding,
                      const std::vector<std::string> &manual) {
  auto manualPred = [&](const AxisRef &axis) { return isManual(manual, axis); };
  for (size_t d = 0; d < sharding.dims.size(); ++d) {
    const std::vector<AxisRef> &axes = sharding.dims[d].axes;
    auto firstFree = std::find_if_not(axes.begin(), axes.end(), manualPred);
    auto late = std::find_if(firstFree, axes.end(), manualPred);
    if (late != axes.end()) {
      return kind + " sharding at index " + std::to_string(index) +
             " must have all manual axes come before free axes in its "
             "dimension sharding at index " +
             std::to_string(d) + ". Saw manual axis " + axisRefToString(*late) +
             " after free axis " + axisRefToString(*std::prev(late));
    }
  }
  return std::nullopt;
}

// Checks divisibility by the manual axes and the region's local type.
std::optional<std::string>
checkLocalType(const std::string &kind, size_t index,
               const TensorSharding &sharding, const Mesh &mesh,
               const ValueShapeInfo &global, const ValueShapeInfo &local,
               const std::vector<std::string> &manual) {
  std::vector<int64_t> dims;
  size_t rank = std::min(global.dims.size(), sharding.dims.size());
  for (size_t d = 0; d < rank; ++d) {
    if (global.dims[d] == kDynamic) {
      dims.push_back(kDynamic);
      continue;
    }
    int64_t size = manualAxesSize(sharding.dims[d].axes, mesh, manual);
    if (size <= 0 || global.dims[d] % size != 0) {
      return kind + " dimension size " + std::to_string(global.dims[d]) +
             " is not divisible by the manual axes size " +
             std::to_string(size);
    }
    dims.push_back(global.dims[d] / size);
  }
  bool same = local.kind == ValueShapeInfo::Kind::Ranked &&
              local.dims == dims && local.element_type == global.element_type;
  if (!same) {
    return kind + " shape, corresponding sharding, and region " + kind +
           " shape at index " + std::to_string(index) +
           " must match. Expected local shape '" +
           rankedTensorTypeToString(dims, global.element_type) +
           "', actual local shape '" + local.type_text + "'";
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string>
verifyManualAxesNotBound(const std::vector<std::string> &manual_axes,
                         const std::vector<std::string> &already_manual_axes) {
  for (const std::string &axis : manual_axes) {
    if (std::find(already_manual_axes.begin(), already_manual_axes.end(),
                  axis) != already_manual_axes.end()) {
      return "operates on axis \"" + axis +
             "\" which is already bound by a parent sdy.manual_computation op";
    }
  }
  return std::nullopt;
}

std::optional<std::string>
verifyManualComputationValues(const std::string &kind,
                              const std::vector<TensorSharding> &shardings,
                              const std::vector<const Mesh *> &meshes,
                              const std::vector<ValueShapeInfo> &global,
                              const std::vector<ValueShapeInfo> &local,
                              const std::vector<std::string> &manual_axes,
                              const ShardingVerifyOptions &options) {
  if (global.empty() && local.empty() && shardings.empty()) {
    return std::nullopt;
  }
  if (auto error = verifyShardingPerValue(shardings, meshes, global, options)) {
    return kind + " " + *error;
  }
  if (global.size() != local.size()) {
    return "number of op " + kind + "s and region " + kind +
           "s must match. Op has " + std::to_string(global.size()) + " op " +
           kind + "s and " + std::to_string(local.size()) + " region " + kind +
           "s";
  }
  for (size_t i = 0; i < global.size(); ++i) {
    if (auto error =
            checkManualBeforeFree(kind, i, shardings[i], manual_axes)) {
      return error;
    }
    if (global[i].kind != ValueShapeInfo::Kind::Ranked &&
        global[i].kind != ValueShapeInfo::Kind::Unranked) {
      continue;
    }
    const Mesh *mesh = i < meshes.size() ? meshes[i] : nullptr;
    if (auto error =
            checkLocalType(kind, i, shardings[i], mesh ? *mesh : Mesh{},
                           global[i], local[i], manual_axes)) {
      return error;
    }
  }
  return std::nullopt;
}

std::optional<std::string>
verifyManualComputationMesh(const Mesh *common, bool has_shardings,
                            const std::vector<std::string> &manual_axes) {
  if (!has_shardings) {
    return std::nullopt;
  }
  if (!common && !manual_axes.empty()) {
    return std::string("all in and out shardings must be bound to the same "
                       "mesh or an empty mesh.");
  }
  for (const std::string &axis : manual_axes) {
    if (common && !common->axisSize(axis)) {
      return "unknown manual axis: \"" + axis + "\"";
    }
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>>
manualLocalShape(const std::vector<int64_t> &global,
                 const TensorSharding &sharding, const Mesh &mesh,
                 const std::vector<std::string> &manual_axes) {
  std::vector<int64_t> local;
  size_t rank = std::min(global.size(), sharding.dims.size());
  for (size_t d = 0; d < rank; ++d) {
    int64_t size = manualAxesSize(sharding.dims[d].axes, mesh, manual_axes);
    if (global[d] == kDynamic) {
      local.push_back(kDynamic);
    } else if (size <= 0 || global[d] % size != 0) {
      return std::nullopt;
    } else {
      local.push_back(global[d] / size);
    }
  }
  return local;
}

} // namespace shardlab
