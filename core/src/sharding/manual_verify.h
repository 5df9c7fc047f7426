// Verification of sdy.manual_computation as pure functions of its shardings,
// meshes, manual axes and the global (op) / local (region) value types, with
// the messages of manual_computation_verification.mlir (Shardy's
// ManualComputationOp::verify / verifySymbolUses and
// verifyManualComputationValue). Messages are the text after
// "'sdy.manual_computation' op "; the caller adds that prefix.
//
// Call order, as in Shardy: verifyManualAxesNotBound (verify()), then
// verifyManualComputationValues for "operand", then for "result", then
// verifyManualComputationMesh (all in verifySymbolUses).
#pragma once

#include "sharding/verify.h"
#include "shardlab/sharding/sharding.h"

#include <optional>
#include <string>
#include <vector>

namespace shardlab {

/// "operates on axis "a" which is already bound by a parent
/// sdy.manual_computation op" for the first manual axis in
/// `already_manual_axes` (the caller attaches the note "parent bounding this
/// axis as manual" at the parent that binds it).
std::optional<std::string>
verifyManualAxesNotBound(const std::vector<std::string> &manual_axes,
                         const std::vector<std::string> &already_manual_axes);

/// In- or out-shardings of a manual computation. `kind` is "operand" or
/// "result"; `meshes[i]` is the resolved mesh of `shardings[i]`; `global` are
/// the op's operand / result types, `local` the region's argument / returned
/// types. Messages: "<kind> shardings don't match number of values: 2
/// shardings vs 1 values", "<kind> - <verifyTensorSharding message>" (or
/// "<kind> N - ..."), "number of op <kind>s and region <kind>s must match. Op
/// has 1 op <kind>s and 2 region <kind>s", "<kind> sharding at index 0 must
/// have all manual axes come before free axes in its dimension sharding at
/// index 1. Saw manual axis "b" after free axis "a"", "<kind> dimension size
/// 6 is not divisible by the manual axes size 4", "<kind> shape,
/// corresponding sharding, and region <kind> shape at index 0 must match.
/// Expected local shape 'tensor<8x32xf32>', actual local shape
/// 'tensor<16x32xf32>'".
std::optional<std::string>
verifyManualComputationValues(const std::string &kind,
                              const std::vector<TensorSharding> &shardings,
                              const std::vector<const Mesh *> &meshes,
                              const std::vector<ValueShapeInfo> &global,
                              const std::vector<ValueShapeInfo> &local,
                              const std::vector<std::string> &manual_axes,
                              const ShardingVerifyOptions &options = {});

/// With `common` the commonMesh of all in/out shardings (mesh.h):
/// "all in and out shardings must be bound to the same mesh or an empty
/// mesh." and "unknown manual axis: "b"". Nothing is checked when there are
/// no in/out shardings (`has_shardings` false).
std::optional<std::string>
verifyManualComputationMesh(const Mesh *common, bool has_shardings,
                            const std::vector<std::string> &manual_axes);

/// The global shape divided, per dim, by the sizes of the manual axes that
/// shard it (kDynamic stays); nullopt when a static dim does not divide.
std::optional<std::vector<int64_t>>
manualLocalShape(const std::vector<int64_t> &global,
                 const TensorSharding &sharding, const Mesh &mesh,
                 const std::vector<std::string> &manual_axes);

} // namespace shardlab
