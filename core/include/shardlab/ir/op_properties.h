// Properties of StableHLO and sdy ops that several layers ask about: which
// ops are elementwise. One list, so the parser's elementwise syntax,
// propagation's tie-breaks and the constant splitter cannot drift apart.
#pragma once

#include "shardlab/ir/ir.h"

#include <string_view>
#include <vector>

namespace shardlab {

/// The StableHLO ops with MLIR's Elementwise trait (including the
/// broadcasting-elementwise ones), sorted by name.
const std::vector<std::string_view> &stablehloElementwiseOps();

/// Whether `op` is elementwise in Shardy's sense (op_properties.cc): a
/// StableHLO elementwise op, a bitcast_convert that keeps the shape, or one
/// of the sdy ops propagation treats as elementwise (propagation_barrier,
/// sharding_constraint, reshard).
bool isElementwise(const Operation &op);

} // namespace shardlab
