// Properties of StableHLO and sdy ops that several layers ask about: which
// ops are elementwise, which are collectives. One list, so the parser's
// elementwise syntax, propagation's tie-breaks and the constant splitter cannot
// drift apart.
#pragma once

#include "shardlab/ir/ir.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// The StableHLO and CHLO ops with MLIR's Elementwise trait (including the
/// broadcasting-elementwise ones), sorted by name.
const std::vector<std::string_view> &elementwiseOps();

/// Whether `op` is elementwise in Shardy's sense (op_properties.cc): a
/// StableHLO elementwise op, a bitcast_convert that keeps the shape, or one
/// of the sdy ops propagation treats as elementwise (propagation_barrier,
/// sharding_constraint, reshard).
bool isElementwise(const Operation &op);

/// Whether `op` ends a block by returning values to its parent:
/// func.return, stablehlo.return or sdy.return.
bool isBlockReturn(const Operation &op);

/// Whether `op` is one of StableHLO's collectives (all_gather, all_reduce,
/// all_to_all, reduce_scatter, collective_permute, collective_broadcast):
/// the ops a per-device program exchanges values with.
bool isStableHloCollective(const Operation &op);

/// Whether `op` is inside an `sdy.manual_computation`, whose body the user
/// partitioned by hand (it sees local values of the manual axes).
bool insideManualComputation(const Operation &op);

/// The target of a `stablehlo.custom_call` / `mhlo.custom_call`
/// (`@Sharding`); empty for any other op.
std::string_view customCallTarget(const Operation &op);

/// A call of cuDNN's fused attention (`__cudnn$fmhaSoftmax`, `...Backward`
/// and their variants), as jax.nn.dot_product_attention lowers on GPU.
bool isFusedAttention(const Operation &op);
/// Of a fused attention call: the backward (`...Backward`), and a causal
/// mask (mask_type CAUSAL in its backend_config).
bool isFusedAttentionBackward(const Operation &op);
bool isCausalAttention(const Operation &op);

/// A field of `op`'s backend_config, the JSON string XLA and JAX write
/// (`{"cudnn_fmha_backend_config": {"mask_type": "CAUSAL"}}`), found by its
/// keys from the root: a string's characters, or a number's spelling.
/// nullopt when there is no config, it is not JSON, or the field is absent
/// or is an object or array.
std::optional<std::string>
backendConfigField(const Operation &op,
                   std::initializer_list<std::string_view> path);
/// The field as a number: a JSON number, or a string that is one (XLA writes
/// 64-bit integers as strings: `{"known_trip_count": {"n": "8"}}`).
std::optional<double>
backendConfigNumber(const Operation &op,
                    std::initializer_list<std::string_view> path);

/// StableHLO's enum attributes are kept as MLIR spells them in every form,
/// `#stablehlo<comparison_direction LT>`, so the pretty and generic forms
/// read to the same attribute. `kind` is the enum's mnemonic
/// ("comparison_direction", "fft_type", "precision", ...).
const Attr *makeStablehloEnum(AttrArena &arena, std::string_view kind,
                              std::string_view value);
/// The enum value (`LT`) of such an attribute, or nothing when `attr` is not
/// a `kind` enum.
std::optional<std::string_view> stablehloEnum(const Attr *attr,
                                              std::string_view kind);

} // namespace shardlab
