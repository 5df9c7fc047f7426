// The dimension numbers of stablehlo.gather, stablehlo.scatter and
// stablehlo.convolution as text, read and written the way StableHLO prints
// them. The parser keeps these attributes as opaque text in that canonical
// form (so printing matches MLIR's whatever the source spelled), and the
// sharding rules and passes read and rewrite them through here.
//
//   #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [0],
//                     start_index_map = [0], index_vector_dim = 0>
//     prints  #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>
//   [b, 0, 1, f] x [0, 1, i, o] -> [b, 0, 1, f]
//     prints  [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// The dimension numbers of a gather or scatter, under gather's names.
struct GatherScatterDims {
  bool scatter = false;
  /// offset_dims (scatter: update_window_dims).
  std::vector<int64_t> offset_dims;
  /// collapsed_slice_dims (scatter: inserted_window_dims).
  std::vector<int64_t> collapsed_dims;
  /// operand_batching_dims (scatter: input_batching_dims).
  std::vector<int64_t> operand_batching_dims;
  /// start_indices_batching_dims (scatter: scatter_indices_batching_dims).
  std::vector<int64_t> indices_batching_dims;
  /// start_index_map (scatter: scatter_dims_to_operand_dims).
  std::vector<int64_t> index_map;
  int64_t index_vector_dim = 0;
};

/// `#stablehlo.gather<...>` or `#stablehlo.scatter<...>` read in any field
/// order (missing fields empty or 0); nullopt for other text or unknown
/// fields.
std::optional<GatherScatterDims> parseGatherScatterDims(std::string_view text);

/// As StableHLO prints it: fields in declaration order, empty lists and a
/// zero index_vector_dim left out.
std::string formatGatherScatterDims(const GatherScatterDims &dims);

/// A convolution's compact dimension numbers (`[b, 0, 1, f]x[0, 1, i,
/// o]->[b, 0, 1, f]`, the body of `#stablehlo.conv<...>`) spelled as
/// StableHLO prints them; nullopt when `text` is not three such lists.
std::optional<std::string> canonicalConvDims(std::string_view text);

} // namespace shardlab
