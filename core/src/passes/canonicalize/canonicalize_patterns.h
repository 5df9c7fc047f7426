// The canonicalization patterns of the sdy ops, grouped by op; each returns
// true when it changed the IR. Used by canonicalize_driver.cpp only.
#pragma once

#include "passes/canonicalize.h"

namespace shardlab::canon {

/// Patterns of one op kind, in MLIR's application order (higher benefit
/// first), filtered by label.
bool applyReshardPatterns(Operation &op, Rewriter &rw, unsigned labels);
bool applyCollectivePatterns(Operation &op, Rewriter &rw, unsigned labels);
/// sdy.all_reduce whose users are all one same sdy.all_slice becomes
/// sdy.reduce_scatter (+ the residual all_slice).
bool reduceScatterFusion(Operation &all_slice, Rewriter &rw);
bool applyManualComputationPatterns(Operation &op, Rewriter &rw,
                                    unsigned labels);

} // namespace shardlab::canon
