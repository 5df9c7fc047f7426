// The dimension numbers of a stablehlo.gather or stablehlo.scatter op
// (GatherScatterDims, ir/stablehlo_dim_numbers.h): read from the op's
// opaque attribute and written back, so a pass can rewrite them; the gather
// and scatter sharding rules read them here too.
#pragma once

#include "ir/stablehlo_dim_numbers.h"
#include "shardlab/ir/ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlab {

/// The dimension numbers of a gather or scatter op; nullopt for other ops,
/// a missing attribute or text with fields these do not know.
std::optional<GatherScatterDims> readGatherScatterDims(const Operation &op);

/// Replaces the dimension numbers attribute of a gather or scatter op.
void writeGatherScatterDims(Operation &op, const GatherScatterDims &dims,
                            Context &ctx);

} // namespace shardlab
