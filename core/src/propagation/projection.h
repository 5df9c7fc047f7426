// The projection of tensor shardings onto the factors of an op sharding rule
// (Shardy's ShardingProjection): every operand and result of an op becomes a
// row of factor shardings, which factor propagation expands, and which is
// then projected back to dimension shardings.
#pragma once

#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <vector>

namespace shardlab {

/// The axes sharding one factor in one tensor. `present` is false when the
/// tensor has no dimension mapped to the factor.
struct FactorSharding {
  std::vector<AxisRef> axes;
  bool present = false;
  bool closed = false;
  bool minor_most = false;
  /// Axes that do not divide a non-minor-most factor; nothing after them in
  /// the dimension can be sharded.
  std::vector<AxisRef> overflow;
};

/// One row of the projection: a factor sharding per factor index (absent
/// ones have present == false), plus the tensor's replicated and unreduced
/// axes.
struct TensorFactorShardings {
  std::vector<FactorSharding> factors;
  std::vector<AxisRef> replicated;
  std::vector<AxisRef> unreduced;
  ReductionKind unreduced_kind = ReductionKind::Sum;

  const FactorSharding *find(int64_t factor) const {
    const FactorSharding &f = factors[factor];
    return f.present ? &f : nullptr;
  }
  /// Sets the factor's axes to `axes` if its current axes are a strict
  /// prefix of them; returns whether it changed.
  bool expand(int64_t factor, const std::vector<AxisRef> &axes);
};

/// All rows of one op: operands first, then results.
struct ShardingProjection {
  std::vector<TensorFactorShardings> operands;
  std::vector<TensorFactorShardings> results;
};

enum class PrefixStatus { NotAPrefix, StrictPrefix, Equal };

/// How `first` relates to `second` as an axis list, where the last axis of
/// `first` may be a sub-axis prefix of the matching axis of `second`.
PrefixStatus axisListPrefixStatus(const std::vector<AxisRef> &first,
                                  const std::vector<AxisRef> &second);
inline bool isStrictPrefix(const std::vector<AxisRef> &first,
                           const std::vector<AxisRef> &second) {
  return axisListPrefixStatus(first, second) == PrefixStatus::StrictPrefix;
}

/// Projects `sharding` (null: no sharding, dims closed iff
/// `closed_if_missing`) onto the factors of `mapping`.
TensorFactorShardings
projectTensor(const OpShardingRule::TensorMapping &mapping,
              const TensorSharding *sharding,
              const std::vector<int64_t> &factor_sizes, const Mesh &mesh,
              bool closed_if_missing);

/// projectTensor into `row`, reusing the storage it already has.
void projectTensorInto(TensorFactorShardings &row,
                       const OpShardingRule::TensorMapping &mapping,
                       const TensorSharding *sharding,
                       const std::vector<int64_t> &factor_sizes,
                       const Mesh &mesh, bool closed_if_missing);

/// Projects every operand and result sharding (null entries are missing).
ShardingProjection
buildProjection(const std::vector<const TensorSharding *> &operands,
                const std::vector<const TensorSharding *> &results,
                const OpShardingRule &rule, const Mesh &mesh);
/// buildProjection into `out`, reusing its storage (the propagation driver
/// keeps one projection for all its steps).
void buildProjectionInto(ShardingProjection &out,
                         const std::vector<const TensorSharding *> &operands,
                         const std::vector<const TensorSharding *> &results,
                         const OpShardingRule &rule, const Mesh &mesh);

/// Projects a row back to a tensor sharding on `mesh_ref`: factors of a dim
/// are concatenated until one is not fully sharded or has overflow axes; a
/// dim is closed iff one of its factors is.
TensorSharding unproject(const TensorFactorShardings &row,
                         const OpShardingRule::TensorMapping &mapping,
                         const std::vector<int64_t> &factor_sizes,
                         const MeshRef &mesh_ref, const Mesh &mesh);
/// unproject into `out`, reusing its storage.
void unprojectInto(TensorSharding &out, const TensorFactorShardings &row,
                   const OpShardingRule::TensorMapping &mapping,
                   const std::vector<int64_t> &factor_sizes,
                   const MeshRef &mesh_ref, const Mesh &mesh);

} // namespace shardlab
