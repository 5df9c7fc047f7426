// Shape constants shared by the sharding model and the IR above it.
#pragma once

#include <cstdint>
#include <limits>

namespace shardlab {

/// Marks a dynamic dimension (`?`) in a tensor shape, as MLIR's
/// ShapedType::kDynamic does.
inline constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

} // namespace shardlab
