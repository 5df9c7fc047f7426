// Collective op verification (see collective_verify.h):
// all_to_all and collective_permute.
#include "sharding/collective_verify.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

#include <algorithm>

namespace shardlab {

namespace {

std::optional<std::string> checkAllToAllDims(const AllToAllParam &param,
                                             int64_t rank,
                                             std::vector<bool> &seenDims,
                                             int64_t &prevSrc) {
  for (auto [dim, name] :
       {std::pair<int64_t, const char *>{param.src_dim, "source"},
        {param.tgt_dim, "target"}}) {
    if (dim < 0 || dim >= rank) {
      return std::string(name) + " dimension " + std::to_string(dim) +
             " is out of range [0, " + std::to_string(rank) + ")";
    }
  }
  for (int64_t dim : {param.src_dim, param.tgt_dim}) {
    if (seenDims[dim]) {
      return "overlapping source/target dimensions in all-to-all params: " +
             std::to_string(dim);
    }
    seenDims[dim] = true;
  }
  if (prevSrc >= param.src_dim) {
    return "source dimensions are not sorted in ascending order: " +
           std::to_string(param.src_dim) + " appears after " +
           std::to_string(prevSrc);
  }
  prevSrc = param.src_dim;
  return std::nullopt;
}

std::optional<std::string> expectDim(const TensorSharding &result, size_t dim,
                                     const std::vector<AxisRef> &expected) {
  if (dim >= result.dims.size() || expected != result.dims[dim].axes) {
    return "result sharding doesn't match expected sharding " +
           axisListToString(expected) + " on dimension " + std::to_string(dim);
  }
  return std::nullopt;
}

std::optional<std::string> checkAllToAllMove(const TensorSharding &operand,
                                             const TensorSharding &result,
                                             const AllToAllParam &param,
                                             const Mesh &mesh) {
  size_t src = static_cast<size_t>(param.src_dim);
  size_t tgt = static_cast<size_t>(param.tgt_dim);
  if (src >= operand.dims.size() || tgt >= operand.dims.size()) {
    return std::string("result sharding has rank ") +
           std::to_string(result.dims.size()) +
           " but operand sharding has rank " +
           std::to_string(operand.dims.size());
  }
  std::vector<AxisRef> srcAxes;
  if (auto error = gatherAxesAlongDim(operand.dims[src].axes, param.axes, src,
                                      mesh, "all-to-all", srcAxes)) {
    return error;
  }
  if (auto error = expectDim(result, src, srcAxes)) {
    return error;
  }
  std::vector<AxisRef> tgtAxes =
      sliceAxesAlongDim(operand.dims[tgt].axes, param.axes, mesh);
  return expectDim(result, tgt, tgtAxes);
}

} // namespace

std::optional<std::string>
verifyAllToAll(const TensorSharding &operand, const TensorSharding &result,
               const std::vector<AllToAllParam> &params, const Mesh &mesh,
               int64_t rank) {
  if (params.empty()) {
    return std::string("parameter list is empty");
  }
  std::vector<bool> seenDims(static_cast<size_t>(std::max<int64_t>(rank, 0)));
  int64_t prevSrc = -1;
  AxisListChecker checker(mesh);
  for (const AllToAllParam &param : params) {
    if (auto error = checker.check(param.axes)) {
      return error;
    }
    if (auto error = checkAllToAllDims(param, rank, seenDims, prevSrc)) {
      return error;
    }
  }
  for (const AllToAllParam &param : params) {
    if (auto error = checkAllToAllMove(operand, result, param, mesh)) {
      return error;
    }
  }
  size_t common = std::min(operand.dims.size(), seenDims.size());
  for (size_t dim = 0; dim < common; ++dim) {
    if (!seenDims[dim]) {
      if (auto error = expectDim(result, dim, operand.dims[dim].axes)) {
        return error;
      }
    }
  }
  return std::nullopt;
}

std::optional<CollectiveError>
verifyCollectivePermute(const TensorSharding &operand, const Mesh &operand_mesh,
                        const TensorSharding &result, const Mesh &result_mesh) {
  std::string note = "operand mesh: " + meshToString(operand_mesh);
  if (result_mesh.axes != operand_mesh.axes) {
    return CollectiveError{"result mesh has different axes than operand mesh",
                           note};
  }
  if (!(operand.mesh == result.mesh) &&
      result_mesh.device_ids == operand_mesh.device_ids) {
    return CollectiveError{
        "result mesh name is different but same device ids as operand", note};
  }
  size_t rank = std::min(operand.dims.size(), result.dims.size());
  for (size_t dim = 0; dim < rank; ++dim) {
    const DimSharding &in = operand.dims[dim];
    const DimSharding &out = result.dims[dim];
    if (in.axes == out.axes) {
      continue;
    }
    int64_t inSize = shardedSize(in, result_mesh);
    int64_t outSize = shardedSize(out, result_mesh);
    if (inSize != outSize) {
      return CollectiveError{
          "sharded size of result doesn't match operand on dimension " +
              std::to_string(dim) + ": " + std::to_string(outSize) +
              " != " + std::to_string(inSize),
          ""};
    }
  }
  return std::nullopt;
}

} // namespace shardlab
