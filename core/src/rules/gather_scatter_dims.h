// The dimension numbers of stablehlo.gather and stablehlo.scatter as one
// struct under gather's names. The parser keeps `#stablehlo.gather<...>` and
// `#stablehlo.scatter<...>` as opaque text; these read that text and write it
// back the way MLIR prints it, so a pass can rewrite the dimension numbers;
// the gather and scatter sharding rules read them here too.
#pragma once

#include "shardlab/ir/ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlab {

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

/// The dimension numbers of a gather or scatter op; nullopt for other ops,
/// a missing attribute or text with fields these do not know.
std::optional<GatherScatterDims> readGatherScatterDims(const Operation &op);

/// `#stablehlo.gather<...>` / `#stablehlo.scatter<...>` as MLIR prints it:
/// fields in declaration order, empty lists and a zero index_vector_dim
/// left out.
std::string formatGatherScatterDims(const GatherScatterDims &dims);

/// Replaces the dimension numbers attribute of a gather or scatter op.
void writeGatherScatterDims(Operation &op, const GatherScatterDims &dims,
                            Context &ctx);

} // namespace shardlab
