// Verification of meshes, tensor shardings and op sharding rules as pure
// functions of values, with Shardy's exact diagnostic texts (verifiers.cc).
// Each function returns the first error, or nullopt when valid.
//
// Message layering. Shardy builds a diagnostic in layers; these functions
// return the inner layers and the caller (the IR verifier) adds the outer
// ones:
//   * verifyMeshAxis / verifyMesh return the bare message. The caller emits it
//     at the mesh; inside a custom op's parser (e.g. `sdy.mesh`) MLIR prefixes
//     "custom op 'sdy.mesh' ". A bad axis size also makes the parser emit
//     "failed to parse Sdy_Mesh parameter 'axes' which is to be a
//     `::llvm::ArrayRef<MeshAxisAttr>`" after it.
//   * verifyTensorSharding returns the bare message, e.g.
//     `unknown axis name: "c"`. The caller adds:
//       func arg/result:       "'func.func' op arg 0 - " / "... op result 2 - "
//       sdy.sharding_constraint, sdy.reshard, sdy.data_flow_edge, collective
//       out_sharding:          "'<op>' op "
//   * verifyShardingPerValue adds the value layer itself: "- msg" for a single
//     value, "N - msg" for value N of several, or "shardings don't match
//     number of values: 3 shardings vs 2 values". The caller adds
//       op `sdy.sharding` attr: "'<op>' op result "
//       sdy.manual_computation: "'sdy.manual_computation' op operand " /
//                               "... op result " (see manual_verify.h)
//       sdy.named_computation:  "'sdy.named_computation' op in_shardings " /
//                               "... op out_shardings "
//   * verifyOpShardingRule returns "operand 0 - ...", "result - ...",
//     "number of operands and mappings must match: 2 != 1", "has factor k=2
//     that isn't used ...", "indices of special factors must be sorted", ...;
//     the caller adds "'<op>' op ".
// Types in messages are quoted as MLIR quotes a Type ('tensor<*xf32>');
// shardings and meshes are printed unquoted (#sdy.sharding<...>).
#pragma once

#include "shardlab/sharding/sharding.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shardlab {

/// What verification needs to know about the type of a sharded value.
struct ValueShapeInfo {
  enum class Kind {
    Ranked,    ///< ranked tensor (dims may hold kDynamic)
    Unranked,  ///< tensor<*x...>
    NonShaped, ///< token and other non-shaped, non-tuple types
    Tuple,     ///< tuple<...>; elements in tuple_elements
    None,      ///< no value at all (an op with no results)
  };
  Kind kind = Kind::Ranked;
  std::vector<int64_t> dims;
  std::string element_type;                   ///< e.g. "f32" (Ranked)
  std::string type_text;                      ///< printed type
  std::vector<ValueShapeInfo> tuple_elements; ///< Tuple only

  static ValueShapeInfo ranked(std::vector<int64_t> dims,
                               std::string element_type = "f32");
  static ValueShapeInfo unranked(std::string element_type = "f32");
  static ValueShapeInfo nonShaped(std::string type_text);
  static ValueShapeInfo tuple(std::vector<ValueShapeInfo> elements);
  static ValueShapeInfo none();
  bool isStaticRanked() const;
};

struct ShardingVerifyOptions {
  /// Also require every static dim to be divisible by its sharded size
  /// ("dim 0 with size 6 is not divisible by its sharded size 4").
  bool check_divisibility = false;
  /// Axes already manual in enclosing sdy.manual_computation ops; a sharding
  /// using one fails with "operates on axis "a" which is already bound by a
  /// parent sdy.manual_computation op" (the caller attaches the note "parent
  /// bounding this axis as manual" at that parent; see axisBoundByParent).
  std::vector<std::string> already_manual_axes;
};

/// "axis size must be at least 1, got: 0".
std::optional<std::string> verifyMeshAxis(const MeshAxis &axis);

/// Checks, in Shardy's order: axis sizes (verifyMeshAxis), "device id must be
/// non-negative, got: -1", "axes is empty and device_ids has more than one
/// element", "duplicate axis name: "a"", "total product of axis sizes must
/// match total number of device ids, got: 4 != 6", "sorted device ids must be
/// iota(product(axes)), got: 1, 1", and "if the ordered device ids are the
/// same as iota(product(axes)), no need to specify them for simplicity"
/// (unreachable for meshes built through makeMesh, as in Shardy).
std::optional<std::string> verifyMesh(const Mesh &mesh);

/// Verifies `sharding` attached to a value of type `value`, with `mesh` the
/// resolved mesh (nullptr when the symbol is unknown). Messages, in order:
///   "unknown mesh: @m"
///   "a maximal sharding can only have a sharding with rank 0 and no
///    replicated or unreduced axes." (maximal mesh, or Kind::None with all
///    dims empty)
///   "ops can only have a sharding for a tuple of size 1: '<type>'"
///   "non-shaped tensors can only have a sharding with rank 0 and no
///    replicated or unreduced axes. type: '<type>', sharding: #sdy.sharding<>"
///   "only ranked tensors can have a sharding. type: '<type>'"
///   "sharding doesn't match tensor rank: 2 != 1"
///   per dim: "dim 0 has a negative priority", "dim 1 is empty and closed but
///     has a priority", then the axis list checks below, then (option)
///     "dim 0 with size 6 is not divisible by its sharded size 4"
///   replicated then unreduced: "replicated axes are not ordered w.r.t. mesh"
///     / "unreduced axes ...", then the axis list checks
///   axis list checks: "unknown axis name: "c"", "duplicate axis ref: "a"",
///     "two consecutive sub-axes can be merged: "a":(2)2, "a":(4)4"
///   sub-axes per axis name: "both sub-axis and full-axis are used for axis
///     name: "a"", "sub-axis pre-size must be at least 1: ...", "sub-axis
///     sizes must be greater than 1: ...", "sub-axis next pre-size 6 doesn't
///     divide the size of the full axis 8: "a":(3)2", "sub-axis size is equal
///     to the full axis size: "a":(1)8", "overlapping sub-axes: "a":(1)4,
///     "a":(2)4"
///   "operates on axis "a" which is already bound by a parent
///    sdy.manual_computation op" (options.already_manual_axes)
std::optional<std::string>
verifyTensorSharding(const TensorSharding &sharding, const Mesh *mesh,
                     const ValueShapeInfo &value,
                     const ShardingVerifyOptions &options = {});

/// The first axis name of `sharding` (dims, replicated, unreduced) that is in
/// `already_manual_axes`, for the note on the parent manual computation.
std::optional<std::string>
axisBoundByParent(const TensorSharding &sharding,
                  const std::vector<std::string> &already_manual_axes);

/// Verifies one sharding per value (Shardy's verifyTensorShardingPerValueAttr)
/// with `meshes[i]` the resolved mesh of `shardings[i]`. Adds the value
/// layer: "- msg" / "N - msg"; or "shardings don't match number of values: 3
/// shardings vs 2 values". An op with no values accepts one maximal or fully
/// replicated sharding.
std::optional<std::string>
verifyShardingPerValue(const std::vector<TensorSharding> &shardings,
                       const std::vector<const Mesh *> &meshes,
                       const std::vector<ValueShapeInfo> &values,
                       const ShardingVerifyOptions &options = {});

/// Verifies an op sharding rule against the op's operand and result types.
/// Messages (caller adds "'<op>' op "): "number of operands and mappings must
/// match: 2 != 1", "number of operands mappings cannot be 0. ...", then per
/// value ("operand 1 - " / "result - " prefixes): "expected a ranked tensor
/// with a static shape. type: '<type>'", "mapping rank must match: 1 != 2",
/// "dim mapping must have at least one factor", "expecting factor indices to
/// be within 0<=...<num_factors; received: 12, num_factors: 2", "cannot reuse
/// factors for the same tensor value", "dim mapping can't have a factor of
/// size 1 if there are multiple factors"; then "has factor k=2 that isn't
/// used in operand and result mappings", "indices of special factors must be
/// sorted" / "... unique", "index must be non-negative", "index must be less
/// than 3, got: 17", "a factor can only be in one of the reduction, need
/// replication, or permutation factor sets", "reduction factor cannot be in
/// result mappings".
std::optional<std::string>
verifyOpShardingRule(const OpShardingRule &rule,
                     const std::vector<ValueShapeInfo> &operands,
                     const std::vector<ValueShapeInfo> &results);

/// Shardy's verifyAxisRefList state, shared by the sharding and collective
/// verifiers: checks lists of axes against one mesh, remembering every axis
/// seen so far (duplicates across lists are errors) and the sub-axes of each
/// axis name (checked together by checkSubAxes).
class AxisListChecker {
public:
  explicit AxisListChecker(const Mesh &mesh) : mesh_(mesh) {}
  /// "unknown axis name", "duplicate axis ref", "two consecutive sub-axes".
  std::optional<std::string> check(const std::vector<AxisRef> &axes);
  /// "<what> axes are not ordered w.r.t. mesh", then check(axes).
  std::optional<std::string> checkSorted(const std::vector<AxisRef> &axes,
                                         const std::string &what);
  /// The sub-axis checks of verifyTensorSharding, per axis name.
  std::optional<std::string> checkSubAxes() const;

private:
  const Mesh &mesh_;
  std::vector<AxisRef> seen_;
  std::map<std::string, std::vector<AxisRef>> sub_axes_;
};

} // namespace shardlab
