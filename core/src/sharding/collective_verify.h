// Verification of Shardy's collective ops (sdy.all_gather, all_slice,
// all_to_all, collective_permute, all_reduce, reduce_scatter,
// sharded_to_unreduced, replicated_to_unreduced) and of unreduced-axis
// transitions (sdy.reshard, sdy.sharding_constraint, collectives), as pure
// functions of shardings and meshes, with the messages of
// collective_verification.mlir, reshard_verification.mlir and
// sharding_constraint_verification.mlir (Shardy's verifiers.cc and
// verifyUnreducedAxesTransition in utils.cc).
//
// Every message is the text after "'<op>' op "; the caller adds that prefix.
// A CollectiveError's `note`, when not empty, is attached at the operand's
// location ("operand mesh: #sdy.mesh<...>").
//
// Call order for one collective, as in Shardy (op verify() runs for every op
// before any verifySymbolUses):
//   1. verifyCollectiveCommon (verify(), CollectiveOpInterface);
//   2. the op's own verifier below (verifySymbolUses).
// For the op verifiers, `operand` is the operand's sharding; when the operand
// has none, pass fullyOpenSharding(result.mesh, rank) (sharding_utils.h), as
// Shardy's getOrCreateSharding does. `mesh` is the result's resolved mesh.
#pragma once

#include "sharding/verify.h"
#include "shardlab/sharding/sharding.h"

#include <optional>
#include <string>
#include <vector>

namespace shardlab {

/// A collective verifier's error (distinct from the text module's
/// shardlab::Diagnostic, which carries a severity and a location).
struct CollectiveError {
  std::string message;
  std::string note; ///< empty when none
};

/// Properties that differ per collective op (CollectiveOpInterface).
struct CollectiveTraits {
  /// all_slice, all_reduce, reduce_scatter: true.
  bool allow_missing_input_sharding = false;
  /// collective_permute: true.
  bool allow_different_meshes = false;
};

/// Checks shared by all collectives, in order: "collective on operand without
/// sharding" (operand == nullptr unless allowed); verifyTensorSharding of the
/// result sharding (bare message, e.g. "duplicate axis ref: "x""); "result
/// mesh does not match operand mesh" with note "operand mesh: #sdy.mesh<..>";
/// "result sharding has rank 2 but operand sharding has rank 1".
std::optional<CollectiveError>
verifyCollectiveCommon(const TensorSharding *operand, const Mesh *operand_mesh,
                       const TensorSharding &result, const Mesh *result_mesh,
                       const ValueShapeInfo &result_type,
                       CollectiveTraits traits,
                       const ShardingVerifyOptions &options = {});

/// sdy.all_gather: axis list checks over all gathering axes, "result sharding
/// has rank 2 but collective axes has rank 1", "can't apply gathering axis
/// "y" to operand sharding on dimension 1", "result sharding doesn't match
/// expected sharding ["x":(1)2] on dimension 1".
std::optional<std::string>
verifyAllGather(const TensorSharding &operand, const TensorSharding &result,
                const std::vector<std::vector<AxisRef>> &gathering_axes,
                const Mesh &mesh);

/// sdy.all_slice: as all_gather, the slicing axes appended (merged) to the
/// operand dims; "result sharding doesn't match expected sharding ...".
std::optional<std::string>
verifyAllSlice(const TensorSharding &operand, const TensorSharding &result,
               const std::vector<std::vector<AxisRef>> &slicing_axes,
               const Mesh &mesh);

/// sdy.all_to_all (rank = the result's tensor rank): "parameter list is
/// empty", axis list checks, "source dimension 2 is out of range [0, 2)",
/// "target dimension -1 is out of range [0, 2)", "overlapping source/target
/// dimensions in all-to-all params: 0", "source dimensions are not sorted in
/// ascending order: 0 appears after 2", "can't apply all-to-all axis "x" to
/// operand sharding on dimension 0", "result sharding doesn't match expected
/// sharding ["x"] on dimension 1".
std::optional<std::string>
verifyAllToAll(const TensorSharding &operand, const TensorSharding &result,
               const std::vector<AllToAllParam> &params, const Mesh &mesh,
               int64_t rank);

/// sdy.collective_permute: "result mesh has different axes than operand
/// mesh" / "result mesh name is different but same device ids as operand"
/// (both with the operand-mesh note), "sharded size of result doesn't match
/// operand on dimension 1: 4 != 2".
std::optional<CollectiveError>
verifyCollectivePermute(const TensorSharding &operand, const Mesh &operand_mesh,
                        const TensorSharding &result, const Mesh &result_mesh);

/// sdy.all_reduce: "operand and result shardings are not equivalent",
/// "reduction axes are not ordered w.r.t. mesh", axis list checks,
/// "reduction axis "y" overlaps with operand dimension sharding or replicated
/// axes", "reduction axis "z" overlaps with result unreduced axes", then
/// verifyUnreducedAxesTransition(no introduction, removal with `kind`).
std::optional<std::string>
verifyAllReduce(const TensorSharding &operand, const TensorSharding &result,
                const std::vector<AxisRef> &reduction_axes, ReductionKind kind,
                const Mesh &mesh);

/// sdy.reduce_scatter: verifyUnreducedAxesTransition first, then as
/// all_slice.
std::optional<std::string>
verifyReduceScatter(const TensorSharding &operand, const TensorSharding &result,
                    const std::vector<std::vector<AxisRef>> &axes,
                    ReductionKind kind, const Mesh &mesh);

/// sdy.sharded_to_unreduced: "out_sharding reduction_op must be SUM", then as
/// all_gather with "shard-to-unreduce" axes, then "out_unreduced_axes should
/// be in_unreduced_axes + sharded_to_unreduced_axes".
std::optional<std::string> verifyShardedToUnreduced(
    const TensorSharding &operand, const TensorSharding &result,
    const std::vector<std::vector<AxisRef>> &axes, const Mesh &mesh);

/// sdy.replicated_to_unreduced: "out_sharding reduction_op must be SUM",
/// "input and output must share the same dimension shardings", "r2u axes must
/// not be empty", "r2u axes are not ordered w.r.t. mesh", axis list checks,
/// "r2u axis "z" overlaps with operand dimension sharding", "r2u axis "z"
/// overlaps with operand unreduced axes", "out_unreduced_axes should be
/// in_unreduced_axes + r2u_axes".
std::optional<std::string>
verifyReplicatedToUnreduced(const TensorSharding &operand,
                            const TensorSharding &result,
                            const std::vector<AxisRef> &axes, const Mesh &mesh);

/// Expected dim axes after gathering `axes` off the minor end of `dim_axes`
/// (all_gather, sharded_to_unreduced, all-to-all source dim), in `expected`;
/// or "can't apply <axis_kind> axis "x" to operand sharding on dimension
/// <dim>" when an axis is not a suffix there.
std::optional<std::string>
gatherAxesAlongDim(const std::vector<AxisRef> &dim_axes,
                   const std::vector<AxisRef> &axes, size_t dim,
                   const Mesh &mesh, const std::string &axis_kind,
                   std::vector<AxisRef> &expected);
/// `dim_axes` with `axes` appended, each merged into the previous one when
/// possible (all_slice, reduce_scatter, all-to-all target dim).
std::vector<AxisRef> sliceAxesAlongDim(const std::vector<AxisRef> &dim_axes,
                                       const std::vector<AxisRef> &axes,
                                       const Mesh &mesh);

/// A sharding with its resolved mesh (either may be nullptr).
struct ShardingRef {
  const TensorSharding *sharding = nullptr;
  const Mesh *mesh = nullptr;
};

/// Shardy's verifyUnreducedAxesTransition. Skipped when the shardings'
/// meshes differ. Messages: "cannot add new unreduced axis 'z'." (no
/// introduction allowed), "cannot introduce 'max' unreduced axes. Expected
/// 'sum'.", "dropped unreduced axis 'y' without a blessed operation (e.g.,
/// sdy.reshard). This is an invalid transition from unreduced to reduced."
/// (no removal allowed), "cannot reduce 'max' unreduced axes. Expected
/// 'sum'.", "cannot change the reduction operator of kept unreduced axes from
/// max to sum.". sdy.reshard / sdy.sharding_constraint call it with
/// introduced = Sum and removed = the source sharding's kind.
std::optional<std::string>
verifyUnreducedAxesTransition(const std::vector<ShardingRef> &operands,
                              const std::vector<ShardingRef> &results,
                              std::optional<ReductionKind> introduced,
                              std::optional<ReductionKind> removed);

} // namespace shardlab
