// Reading the attributes the rule registry needs from StableHLO ops, whether
// the op was parsed in its pretty form (typed attributes) or in the generic
// form (dialect attributes such as `#stablehlo.gather<...>` kept as text).
#pragma once

#include "shardlab/ir/ir.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::rules {

/// The attribute `name` of `op`, looked up in its attributes, then in its
/// properties (`<{...}>` of a generic-form op); nullptr when absent.
const Attr *findAttr(const Operation &op, std::string_view name);
/// An integer attribute (`3 : i64`), or nullopt.
std::optional<int64_t> intAttr(const Operation &op, std::string_view name);
/// A boolean attribute, `fallback` when absent or not a bool.
bool boolAttr(const Operation &op, std::string_view name, bool fallback);
/// A string attribute's value, or empty.
std::string_view stringAttr(const Operation &op, std::string_view name);
/// The integers of `array<i64: ...>`, `[1, 2]` or `dense<...>` (splats
/// are not expanded); nullopt when absent or of another kind.
std::optional<std::vector<int64_t>> intsAttr(const Operation &op,
                                             std::string_view name);
/// The integers of a dense elements attribute, a splat repeated `count`
/// times; nullopt for other kinds or literal text kept raw.
std::optional<std::vector<int64_t>> denseInts(const Attr &attr, size_t count);
/// The rows of a 2-D dense integer attribute (replica_groups,
/// source_target_pairs), without XLA's -1 padding; empty when unreadable.
std::vector<std::vector<int64_t>> denseIntRows(const Attr &attr);

/// The fields of a `#stablehlo.name<key = value, ...>` attribute, each value
/// an integer or a list of integers (a single integer becomes a one-element
/// list); nullopt when the text does not have that shape.
using DimNumberFields =
    std::map<std::string, std::vector<int64_t>, std::less<>>;
std::optional<DimNumberFields> parseDimNumberFields(std::string_view text);

/// Dimension numbers of stablehlo.dot_general.
struct DotDims {
  std::vector<int64_t> lhs_batching, rhs_batching;
  std::vector<int64_t> lhs_contracting, rhs_contracting;
};
std::optional<DotDims> dotDims(const Attr &attr);

/// Dimension numbers of stablehlo.convolution.
struct ConvDims {
  int64_t input_batch = -1, input_feature = -1;
  int64_t kernel_input_feature = -1, kernel_output_feature = -1;
  int64_t output_batch = -1, output_feature = -1;
  std::vector<int64_t> input_spatial, kernel_spatial, output_spatial;
};
/// From `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` (pretty or inside
/// `#stablehlo.conv<...>`) or the keyed `#stablehlo.conv<input_batch_dimension
/// = 0, ...>` form.
std::optional<ConvDims> parseConvDims(std::string_view text);

} // namespace shardlab::rules
