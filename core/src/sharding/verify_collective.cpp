// Collective op verification (see collective_verify.h): Shardy's
// verifyCollectiveOp and the collectives' verifySymbolUses.
#include "sharding/collective_verify.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

#include <algorithm>

namespace shardlab {

namespace {

using AxesPerDim = std::vector<std::vector<AxisRef>>;
using ExpectedDimFn = std::optional<std::string> (*)(
    const std::vector<AxisRef> &operandAxes,
    const std::vector<AxisRef> &collectiveAxes, size_t dim, const Mesh &mesh,
    std::vector<AxisRef> &expected);

std::string mismatchMessage(const std::vector<AxisRef> &expected, size_t dim) {
  return "result sharding doesn't match expected sharding " +
         axisListToString(expected) + " on dimension " + std::to_string(dim);
}

std::optional<std::string> gatherFn(const std::vector<AxisRef> &operandAxes,
                                    const std::vector<AxisRef> &axes,
                                    size_t dim, const Mesh &mesh,
                                    std::vector<AxisRef> &expected) {
  return gatherAxesAlongDim(operandAxes, axes, dim, mesh, "gathering",
                            expected);
}

std::optional<std::string> s2uFn(const std::vector<AxisRef> &operandAxes,
                                 const std::vector<AxisRef> &axes, size_t dim,
                                 const Mesh &mesh,
                                 std::vector<AxisRef> &expected) {
  return gatherAxesAlongDim(operandAxes, axes, dim, mesh, "shard-to-unreduce",
                            expected);
}

std::optional<std::string> sliceFn(const std::vector<AxisRef> &operandAxes,
                                   const std::vector<AxisRef> &axes, size_t,
                                   const Mesh &mesh,
                                   std::vector<AxisRef> &expected) {
  expected = sliceAxesAlongDim(operandAxes, axes, mesh);
  return std::nullopt;
}

// Shardy's verifyCollectiveWithAxesPerDim.
std::optional<std::string> verifyAxesPerDim(const TensorSharding &operand,
                                            const TensorSharding &result,
                                            const AxesPerDim &axesPerDim,
                                            const Mesh &mesh,
                                            ExpectedDimFn expectedDim) {
  AxisListChecker checker(mesh);
  for (const auto &axes : axesPerDim) {
    if (auto error = checker.check(axes)) {
      return error;
    }
  }
  if (result.dims.size() != axesPerDim.size()) {
    return "result sharding has rank " + std::to_string(result.dims.size()) +
           " but collective axes has rank " + std::to_string(axesPerDim.size());
  }
  size_t rank = std::min(operand.dims.size(), axesPerDim.size());
  for (size_t dim = 0; dim < rank; ++dim) {
    std::vector<AxisRef> expected;
    if (auto error = expectedDim(operand.dims[dim].axes, axesPerDim[dim], dim,
                                 mesh, expected)) {
      return error;
    }
    if (expected != result.dims[dim].axes) {
      return mismatchMessage(expected, dim);
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string>
gatherAxesAlongDim(const std::vector<AxisRef> &dim_axes,
                   const std::vector<AxisRef> &axes, size_t dim,
                   const Mesh &mesh, const std::string &axis_kind,
                   std::vector<AxisRef> &expected) {
  expected = dim_axes;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    if (expected.empty() || !suffixOf(*it, expected.back(), mesh)) {
      return "can't apply " + axis_kind + " axis " + axisRefToString(*it) +
             " to operand sharding on dimension " + std::to_string(dim);
    }
    AxisRef last = expected.back();
    expected.pop_back();
    if (auto prefix = getPrefixWithoutOverlap(last, *it)) {
      expected.push_back(*prefix);
    }
  }
  return std::nullopt;
}

std::vector<AxisRef> sliceAxesAlongDim(const std::vector<AxisRef> &dim_axes,
                                       const std::vector<AxisRef> &axes,
                                       const Mesh &mesh) {
  std::vector<AxisRef> expected = dim_axes;
  for (const AxisRef &axis : axes) {
    addAxisOrMerge(expected, axis, mesh);
  }
  return expected;
}

std::optional<CollectiveError>
verifyCollectiveCommon(const TensorSharding *operand, const Mesh *operand_mesh,
                       const TensorSharding &result, const Mesh *result_mesh,
                       const ValueShapeInfo &result_type,
                       CollectiveTraits traits,
                       const ShardingVerifyOptions &options) {
  if (!operand && !traits.allow_missing_input_sharding) {
    return CollectiveError{"collective on operand without sharding", ""};
  }
  if (auto error =
          verifyTensorSharding(result, result_mesh, result_type, options)) {
    return CollectiveError{*error, ""};
  }
  if (!traits.allow_different_meshes && operand && operand_mesh &&
      !(result_mesh && *result_mesh == *operand_mesh)) {
    return CollectiveError{"result mesh does not match operand mesh",
                           "operand mesh: " + meshToString(*operand_mesh)};
  }
  if (operand && result.dims.size() != operand->dims.size()) {
    return CollectiveError{"result sharding has rank " +
                               std::to_string(result.dims.size()) +
                               " but operand sharding has rank " +
                               std::to_string(operand->dims.size()),
                           ""};
  }
  return std::nullopt;
}

std::optional<std::string>
verifyAllGather(const TensorSharding &operand, const TensorSharding &result,
                const std::vector<std::vector<AxisRef>> &gathering_axes,
                const Mesh &mesh) {
  return verifyAxesPerDim(operand, result, gathering_axes, mesh, gatherFn);
}

std::optional<std::string>
verifyAllSlice(const TensorSharding &operand, const TensorSharding &result,
               const std::vector<std::vector<AxisRef>> &slicing_axes,
               const Mesh &mesh) {
  return verifyAxesPerDim(operand, result, slicing_axes, mesh, sliceFn);
}

std::optional<std::string>
verifyReduceScatter(const TensorSharding &operand, const TensorSharding &result,
                    const std::vector<std::vector<AxisRef>> &axes,
                    ReductionKind kind, const Mesh &mesh) {
  if (auto error = verifyUnreducedAxesTransition(
          {{&operand, &mesh}}, {{&result, &mesh}}, std::nullopt, kind)) {
    return error;
  }
  return verifyAxesPerDim(operand, result, axes, mesh, sliceFn);
}

std::optional<std::string> verifyShardedToUnreduced(
    const TensorSharding &operand, const TensorSharding &result,
    const std::vector<std::vector<AxisRef>> &axes, const Mesh &mesh) {
  if (result.unreduced_kind != ReductionKind::Sum) {
    return std::string("out_sharding reduction_op must be SUM");
  }
  if (auto error = verifyAxesPerDim(operand, result, axes, mesh, s2uFn)) {
    return error;
  }
  std::vector<AxisRef> expected = operand.unreduced;
  for (const auto &dimAxes : axes) {
    expected.insert(expected.end(), dimAxes.begin(), dimAxes.end());
  }
  sortAndMergeAxes(expected, mesh);
  if (expected != result.unreduced) {
    return std::string("out_unreduced_axes should be in_unreduced_axes + "
                       "sharded_to_unreduced_axes");
  }
  return std::nullopt;
}

} // namespace shardlab
