// verifyTensorSharding and verifyShardingPerValue (see verify.h).
#include "sharding/verify.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

#include "shardlab/sharding/shape.h"

#include <algorithm>

namespace shardlab {

namespace {

bool allDimsEmpty(const TensorSharding &sharding) {
  return std::all_of(sharding.dims.begin(), sharding.dims.end(),
                     [](const DimSharding &dim) { return dim.axes.empty(); });
}

bool hasOnlyRankZero(const TensorSharding &sharding) {
  return sharding.dims.empty() && sharding.replicated.empty() &&
         sharding.unreduced.empty();
}

std::string quoted(const std::string &type_text) {
  return "'" + type_text + "'";
}

// Checks for values whose type is not a ranked tensor; nullopt with `done`
// set means the sharding is valid and nothing else needs checking.
// `type_text` is the value's own type (a tuple when `value` is its element).
std::optional<std::string> verifyNonRanked(const TensorSharding &sharding,
                                           const ValueShapeInfo &value,
                                           const std::string &type_text,
                                           bool &done) {
  done = true;
  if (value.kind == ValueShapeInfo::Kind::NonShaped ||
      value.kind == ValueShapeInfo::Kind::None) {
    if (!hasOnlyRankZero(sharding)) {
      return "non-shaped tensors can only have a sharding with rank 0 and no "
             "replicated or unreduced axes. type: " +
             quoted(type_text) + ", sharding: " + shardingToString(sharding);
    }
    return std::nullopt;
  }
  if (value.kind == ValueShapeInfo::Kind::Unranked) {
    return "only ranked tensors can have a sharding. type: " +
           quoted(type_text);
  }
  done = false;
  return std::nullopt;
}

std::optional<std::string> verifyPriority(const DimSharding &dim,
                                          size_t index) {
  if (!dim.priority) {
    return std::nullopt;
  }
  if (*dim.priority < 0) {
    return "dim " + std::to_string(index) + " has a negative priority";
  }
  if (dim.closed && dim.axes.empty()) {
    return "dim " + std::to_string(index) +
           " is empty and closed but has a priority";
  }
  return std::nullopt;
}

std::optional<std::string> verifyDims(const TensorSharding &sharding,
                                      const Mesh &mesh,
                                      const std::vector<int64_t> &shape,
                                      bool checkDivisibility,
                                      AxisListChecker &checker) {
  for (size_t i = 0; i < sharding.dims.size(); ++i) {
    const DimSharding &dim = sharding.dims[i];
    if (auto error = verifyPriority(dim, i)) {
      return error;
    }
    if (auto error = checker.check(dim.axes)) {
      return error;
    }
    if (!checkDivisibility || shape[i] == kDynamic) {
      continue;
    }
    int64_t sharded = axesTotalSize(dim.axes, mesh);
    if (shape[i] % sharded != 0) {
      return "dim " + std::to_string(i) + " with size " +
             std::to_string(shape[i]) +
             " is not divisible by its sharded size " + std::to_string(sharded);
    }
  }
  return std::nullopt;
}

std::optional<std::string>
verifyRankedSharding(const TensorSharding &sharding, const Mesh &mesh,
                     const std::vector<int64_t> &shape,
                     const ShardingVerifyOptions &options) {
  if (sharding.dims.size() != shape.size()) {
    return "sharding doesn't match tensor rank: " +
           std::to_string(sharding.dims.size()) +
           " != " + std::to_string(shape.size());
  }
  AxisListChecker checker(mesh);
  if (auto error = verifyDims(sharding, mesh, shape, options.check_divisibility,
                              checker)) {
    return error;
  }
  if (auto error = checker.checkSorted(sharding.replicated, "replicated")) {
    return error;
  }
  if (auto error = checker.checkSorted(sharding.unreduced, "unreduced")) {
    return error;
  }
  if (auto error = checker.checkSubAxes()) {
    return error;
  }
  if (auto axis = axisBoundByParent(sharding, options.already_manual_axes)) {
    return "operates on axis \"" + *axis +
           "\" which is already bound by a parent sdy.manual_computation op";
  }
  return std::nullopt;
}

// Unwraps a tuple of size 1; reports other tuple sizes.
std::optional<std::string> unwrapTuple(const ValueShapeInfo &value,
                                       const ValueShapeInfo *&inner) {
  inner = &value;
  if (value.kind != ValueShapeInfo::Kind::Tuple) {
    return std::nullopt;
  }
  if (value.tuple_elements.size() != 1) {
    return "ops can only have a sharding for a tuple of size 1: " +
           quoted(value.type_text);
  }
  inner = &value.tuple_elements.front();
  return std::nullopt;
}

} // namespace

std::optional<std::string>
axisBoundByParent(const TensorSharding &sharding,
                  const std::vector<std::string> &already_manual_axes) {
  auto isBound = [&](const AxisRef &axis) {
    return std::find(already_manual_axes.begin(), already_manual_axes.end(),
                     axis.name) != already_manual_axes.end();
  };
  for (const DimSharding &dim : sharding.dims) {
    for (const AxisRef &axis : dim.axes) {
      if (isBound(axis)) {
        return axis.name.str();
      }
    }
  }
  for (const auto *list : {&sharding.replicated, &sharding.unreduced}) {
    for (const AxisRef &axis : *list) {
      if (isBound(axis)) {
        return axis.name.str();
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string>
verifyTensorSharding(const TensorSharding &sharding, const Mesh *mesh,
                     const ValueShapeInfo &value,
                     const ShardingVerifyOptions &options) {
  if (!mesh) {
    return "unknown mesh: @" + sharding.mesh.symbol;
  }
  bool noType = value.kind == ValueShapeInfo::Kind::None;
  if (mesh->isMaximal() || (noType && allDimsEmpty(sharding))) {
    if (!hasOnlyRankZero(sharding)) {
      return std::string("a maximal sharding can only have a sharding with "
                         "rank 0 and no replicated or unreduced axes.");
    }
    return std::nullopt;
  }
  const ValueShapeInfo *inner = nullptr;
  if (auto error = unwrapTuple(value, inner)) {
    return error;
  }
  bool done = false;
  if (auto error = verifyNonRanked(sharding, *inner, value.type_text, done)) {
    return error;
  }
  if (done) {
    return std::nullopt;
  }
  return verifyRankedSharding(sharding, *mesh, inner->dims, options);
}

std::optional<std::string>
verifyShardingPerValue(const std::vector<TensorSharding> &shardings,
                       const std::vector<const Mesh *> &meshes,
                       const std::vector<ValueShapeInfo> &values,
                       const ShardingVerifyOptions &options) {
  auto meshAt = [&](size_t i) {
    return i < meshes.size() ? meshes[i] : nullptr;
  };
  if (values.empty() && shardings.size() == 1) {
    const Mesh *mesh = meshAt(0);
    if ((mesh && mesh->isMaximal()) || allDimsEmpty(shardings[0])) {
      auto error = verifyTensorSharding(shardings[0], mesh,
                                        ValueShapeInfo::none(), options);
      return error ? std::optional<std::string>(std::to_string(0) + " - " +
                                                *error)
                   : std::nullopt;
    }
  }
  if (shardings.size() != values.size()) {
    return "shardings don't match number of values: " +
           std::to_string(shardings.size()) + " shardings vs " +
           std::to_string(values.size()) + " values";
  }
  for (size_t i = 0; i < shardings.size(); ++i) {
    auto error =
        verifyTensorSharding(shardings[i], meshAt(i), values[i], options);
    if (error) {
      std::string layer = values.size() == 1 ? "" : std::to_string(i) + " ";
      return layer + "- " + *error;
    }
  }
  return std::nullopt;
}

} // namespace shardlab
