// Factor propagation: given the projection of an op's tensors onto the
// factors of its sharding rule, decide which axes each factor gets in every
// tensor. Basic propagation gives every tensor the axes all of them are
// compatible with; aggressive propagation resolves conflicts per tensor
// (Shardy's BasicFactorPropagation / AggressiveFactorPropagation).
#pragma once

#include "propagation/projection.h"

#include <functional>
#include <optional>
#include <vector>

namespace shardlab {

/// Direction along one factor; ordered NONE < FORWARD < BACKWARD < BOTH as in
/// Shardy (the union and intersection below rely on it).
enum class PropagationDirection { None, Forward, Backward, Both };

/// As sets of {Forward, Backward}: None = {}, Both = {Forward, Backward}.
/// Forward and Backward are the bits 1 and 2, so union and intersection are
/// bitwise (Forward | Backward = Both, Forward & Backward = None).
constexpr PropagationDirection unionOfDirections(PropagationDirection a,
                                                 PropagationDirection b) {
  return static_cast<PropagationDirection>(static_cast<int>(a) |
                                           static_cast<int>(b));
}
constexpr PropagationDirection
intersectionOfDirections(PropagationDirection a, PropagationDirection b) {
  return static_cast<PropagationDirection>(static_cast<int>(a) &
                                           static_cast<int>(b));
}

/// The direction for a factor index.
using FactorDirectionFn = std::function<PropagationDirection(int64_t factor)>;

/// Which factor propagation a driver runs.
enum class FactorStrategy { Basic, Aggressive };

/// Which tensors a factor propagation changed.
struct TensorUpdates {
  std::vector<bool> operands;
  std::vector<bool> results;
};

/// Buffers factor propagation may reuse from call to call (defined in the
/// implementation; the propagation driver keeps one).
struct FactorScratch;

/// Inputs shared by both strategies. `mesh` may be null (unit tests): then
/// divisibility is not checked.
struct FactorPropagationInput {
  const FactorDirectionFn *direction;
  const std::vector<int64_t> *factor_sizes;
  const Mesh *mesh = nullptr;
  bool conservative = false;
  /// The op is elementwise (aggressive tie-break and sideways rule).
  bool elementwise = false;
  /// Optional reusable buffers (null: local ones).
  FactorScratch *scratch = nullptr;
};

/// The longest compatible major axes of `factor` over all tensors, in the
/// visiting order given by `direction`, ignoring conflicts.
std::vector<AxisRef> compatibleMajorAxes(const ShardingProjection &projection,
                                         int64_t factor,
                                         PropagationDirection direction);
/// compatibleMajorAxes into `out` (its storage reused).
void compatibleMajorAxesInto(std::vector<AxisRef> &out,
                             const ShardingProjection &projection,
                             int64_t factor, PropagationDirection direction);

/// compatibleMajorAxes truncated at the first axis conflicting with another
/// factor, a replicated/unreduced axis, or divisibility in any tensor.
std::vector<AxisRef>
compatibleMajorShardingAxes(const ShardingProjection &projection,
                            int64_t factor, PropagationDirection direction,
                            const FactorPropagationInput &in);

/// Runs one strategy over `projection` in place.
TensorUpdates propagateFactors(FactorStrategy strategy,
                               ShardingProjection &projection,
                               const FactorPropagationInput &in);
/// propagateFactors into `updates`, reusing its storage (the driver runs
/// one step per op visit and keeps one).
void propagateFactorsInto(FactorStrategy strategy,
                          ShardingProjection &projection,
                          const FactorPropagationInput &in,
                          TensorUpdates &updates);

} // namespace shardlab
