// Verification involving unreduced axes (see collective_verify.h):
// all_reduce, replicated_to_unreduced and unreduced-axis transitions.
#include "sharding/collective_verify.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

#include <algorithm>

namespace shardlab {

namespace {

bool anyOverlap(const std::vector<AxisRef> &axes, const AxisRef &axis) {
  return std::any_of(axes.begin(), axes.end(), [&](const AxisRef &other) {
    return overlaps(other, axis);
  });
}

bool dimsOverlap(const TensorSharding &sharding, const AxisRef &axis) {
  return std::any_of(
      sharding.dims.begin(), sharding.dims.end(),
      [&](const DimSharding &dim) { return anyOverlap(dim.axes, axis); });
}

} // namespace

std::optional<std::string>
verifyAllReduce(const TensorSharding &operand, const TensorSharding &result,
                const std::vector<AxisRef> &reduction_axes, ReductionKind kind,
                const Mesh &mesh) {
  if (!isEquivalent(operand, result, /*ignore_unreduced=*/true)) {
    return std::string("operand and result shardings are not equivalent");
  }
  AxisListChecker checker(mesh);
  if (auto error = checker.checkSorted(reduction_axes, "reduction")) {
    return error;
  }
  for (const AxisRef &axis : reduction_axes) {
    if (dimsOverlap(operand, axis) || anyOverlap(operand.replicated, axis)) {
      return "reduction axis " + axisRefToString(axis) +
             " overlaps with operand dimension sharding or replicated axes";
    }
    if (anyOverlap(result.unreduced, axis)) {
      return "reduction axis " + axisRefToString(axis) +
             " overlaps with result unreduced axes";
    }
  }
  return verifyUnreducedAxesTransition({{&operand, &mesh}}, {{&result, &mesh}},
                                       std::nullopt, kind);
}

std::optional<std::string> verifyReplicatedToUnreduced(
    const TensorSharding &operand, const TensorSharding &result,
    const std::vector<AxisRef> &axes, const Mesh &mesh) {
  if (result.unreduced_kind != ReductionKind::Sum) {
    return std::string("out_sharding reduction_op must be SUM");
  }
  if (operand.dims != result.dims) {
    return std::string(
        "input and output must share the same dimension shardings");
  }
  if (axes.empty()) {
    return std::string("r2u axes must not be empty");
  }
  AxisListChecker checker(mesh);
  if (auto error = checker.checkSorted(axes, "r2u")) {
    return error;
  }
  for (const AxisRef &axis : axes) {
    if (dimsOverlap(operand, axis)) {
      return "r2u axis " + axisRefToString(axis) +
             " overlaps with operand dimension sharding";
    }
    if (anyOverlap(operand.unreduced, axis)) {
      return "r2u axis " + axisRefToString(axis) +
             " overlaps with operand unreduced axes";
    }
  }
  std::vector<AxisRef> expected = operand.unreduced;
  expected.insert(expected.end(), axes.begin(), axes.end());
  sortAndMergeAxes(expected, mesh);
  if (expected != result.unreduced) {
    return std::string(
        "out_unreduced_axes should be in_unreduced_axes + r2u_axes");
  }
  return std::nullopt;
}

namespace {

std::vector<AxisRef> flatUnreduced(const std::vector<ShardingRef> &refs) {
  std::vector<AxisRef> axes;
  for (const ShardingRef &ref : refs) {
    if (ref.sharding) {
      axes.insert(axes.end(), ref.sharding->unreduced.begin(),
                  ref.sharding->unreduced.end());
    }
  }
  return axes;
}

// The one mesh of all shardings; `consistent` is false when two differ.
const Mesh *transitionMesh(const std::vector<ShardingRef> &operands,
                           const std::vector<ShardingRef> &results,
                           bool &consistent) {
  const Mesh *mesh = nullptr;
  consistent = true;
  for (const auto *refs : {&operands, &results}) {
    for (const ShardingRef &ref : *refs) {
      if (!ref.sharding || !ref.mesh) {
        continue;
      }
      if (mesh && !(*mesh == *ref.mesh)) {
        consistent = false;
      }
      mesh = mesh ? mesh : ref.mesh;
    }
  }
  return mesh;
}

// The first sharding whose unreduced axes overlap `diff` and whose kind is
// not `expected`, reported as prefix + kind + suffix + expected + "'.".
std::optional<std::string> checkKind(const std::vector<ShardingRef> &refs,
                                     const std::vector<AxisRef> &diff,
                                     ReductionKind expected,
                                     const std::string &prefix) {
  for (const ShardingRef &ref : refs) {
    if (!ref.sharding) {
      continue;
    }
    bool hit = std::any_of(
        ref.sharding->unreduced.begin(), ref.sharding->unreduced.end(),
        [&](const AxisRef &axis) { return anyOverlap(diff, axis); });
    if (hit && ref.sharding->unreduced_kind != expected) {
      return prefix + reductionKindName(ref.sharding->unreduced_kind) +
             "' unreduced axes. Expected '" + reductionKindName(expected) +
             "'.";
    }
  }
  return std::nullopt;
}

std::optional<std::string>
checkKeptKinds(const std::vector<ShardingRef> &operands,
               const std::vector<ShardingRef> &results) {
  for (const ShardingRef &res : results) {
    if (!res.sharding) {
      continue;
    }
    for (const ShardingRef &op : operands) {
      if (!op.sharding) {
        continue;
      }
      ReductionKind from = op.sharding->unreduced_kind;
      ReductionKind to = res.sharding->unreduced_kind;
      for (const AxisRef &axis : res.sharding->unreduced) {
        if (anyOverlap(op.sharding->unreduced, axis) && from != to) {
          return "cannot change the reduction operator of kept unreduced "
                 "axes from " +
                 reductionKindName(from) + " to " + reductionKindName(to) + ".";
        }
      }
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string>
verifyUnreducedAxesTransition(const std::vector<ShardingRef> &operands,
                              const std::vector<ShardingRef> &results,
                              std::optional<ReductionKind> introduced,
                              std::optional<ReductionKind> removed) {
  bool consistent = true;
  const Mesh *meshPtr = transitionMesh(operands, results, consistent);
  if (!consistent) {
    return std::nullopt;
  }
  Mesh mesh = meshPtr ? *meshPtr : Mesh{};
  std::vector<AxisRef> in = flatUnreduced(operands);
  std::vector<AxisRef> out = flatUnreduced(results);
  std::vector<AxisRef> added = getAxisSetDiff(out, in, mesh);
  std::vector<AxisRef> dropped = getAxisSetDiff(in, out, mesh);
  if (!added.empty()) {
    if (!introduced) {
      return "cannot add new unreduced axis '" + added[0].name + "'.";
    }
    if (auto error =
            checkKind(results, added, *introduced, "cannot introduce '")) {
      return error;
    }
  }
  if (!dropped.empty()) {
    if (!removed) {
      return "dropped unreduced axis '" + dropped[0].name +
             "' without a blessed operation (e.g., sdy.reshard). This is an "
             "invalid transition from unreduced to reduced.";
    }
    if (auto error =
            checkKind(operands, dropped, *removed, "cannot reduce '")) {
      return error;
    }
  }
  return checkKeptKinds(operands, results);
}

} // namespace shardlab
