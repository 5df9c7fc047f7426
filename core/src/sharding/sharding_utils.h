// Queries and constructors on TensorSharding values that several passes need:
// sharded sizes, per-device (local) shapes, fully open / closed shardings,
// equivalence, and the canonical order of replicated / unreduced axes.
#pragma once

#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <vector>

namespace shardlab {

/// Product of the sizes of the axes sharding `dim`.
int64_t shardedSize(const DimSharding &dim, const Mesh &mesh);
/// The shards of dimension `dim` of `sharding` (1 when it has no such dim).
int64_t shardedSizeAt(const TensorSharding &sharding, size_t dim,
                      const Mesh &mesh);

/// Per-device shape of a tensor of shape `global` with `sharding`: each
/// static dim is divided by its sharded size rounding up (non-divisible
/// shardings are padded); kDynamic dims stay dynamic. Returns `global`
/// unchanged when the ranks differ.
std::vector<int64_t> localShape(const std::vector<int64_t> &global,
                                const TensorSharding &sharding,
                                const Mesh &mesh);
/// `global` with each static dim rounded up to a multiple of its sharded
/// size: the shape -sdy-pad-for-divisibility pads a value to. Returns
/// `global` unchanged when the ranks differ.
std::vector<int64_t> paddedShape(const std::vector<int64_t> &global,
                                 const TensorSharding &sharding,
                                 const Mesh &mesh);
/// Whether every static dim of `global` divides by its sharded size.
bool isDivisible(const std::vector<int64_t> &global,
                 const TensorSharding &sharding, const Mesh &mesh);

/// `<mesh, [{?}, ...]>` of the given rank (Shardy's getFullyOpen).
TensorSharding fullyOpenSharding(const MeshRef &mesh, size_t rank);
/// `<mesh, [{}, ...]>` of the given rank (Shardy's getFullyClosed).
TensorSharding fullyClosedSharding(const MeshRef &mesh, size_t rank);
/// No dimension has axes (replicated / unreduced axes are allowed).
bool isFullyReplicated(const TensorSharding &sharding);
/// TensorShardingAttr::isEquivalent: same mesh ref and the same dim axes
/// (open/closed and priorities ignored); both fully replicated counts as
/// equivalent. Unreduced axes must match unless `ignore_unreduced`.
bool isEquivalent(const TensorSharding &a, const TensorSharding &b,
                  bool ignore_unreduced = false);

/// Sorts (mesh order) and merges the replicated and unreduced axes, the form
/// Shardy's verifier requires and its passes produce.
void canonicalizeReplicatedAndUnreduced(TensorSharding &sharding,
                                        const Mesh &mesh);

/// `sharding` without the axes named in `axes` (in dims, replicated and
/// unreduced): a global sharding as seen inside a manual computation over
/// `axes` (Shardy's getInShardingWithoutManualAxes).
TensorSharding withoutAxes(TensorSharding sharding,
                           const std::vector<std::string> &axes);

} // namespace shardlab
