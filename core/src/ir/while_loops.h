// Counted stablehlo.while loops: the trip count of a loop that counts a
// constant-initialised iteration argument up to a constant limit (`compare
// LT`) by a constant step, as jax.lax.fori_loop and scan write them, and
// the counter that a rewrite changes. The scheduler reads trip counts to repeat
// a body; the pipeline-stages rewrite changes them.
//
//   %r:2 = stablehlo.while(%i = %c0, %h = %x) ...
//   cond { %lt = stablehlo.compare LT, %i, %c8 ; stablehlo.return %lt }
//   do   { ... %next = stablehlo.add %i, %c1 ; stablehlo.return %next, ... }
//   -> constantTripCount = 8
#pragma once

#include "shardlab/ir/ir.h"

#include <optional>

namespace shardlab {

/// Trip count of a counted `stablehlo.while` (see above); nullopt for any
/// other loop.
std::optional<int64_t> constantTripCount(Operation &while_op);

/// The counter of a counted loop: the compare in its condition (its
/// operand 1 is the constant limit), the counter's initial value and step.
struct LoopCounter {
  Operation *compare = nullptr;
  double limit = 0, init = 0, step = 0;
};
std::optional<LoopCounter> loopCounter(Operation &while_op);

} // namespace shardlab
