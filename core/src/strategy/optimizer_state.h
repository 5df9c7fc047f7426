// Telling a training step's optimizer state from its weights, and which
// result is the new value of which weight: what ZeRO-1 candidates split and
// pin. Rules:
//
// 1. A parameter is optimizer state when no matmul depends on it: nothing
//    it flows into (through any op, loop, call or named computation) is a
//    dot_general, a convolution or a custom call. Adam's moments only meet
//    the gradient and the new weight; a norm's scale or a bias reaches the
//    next matmul through the activations, so they are weights, whatever
//    their shape.
// 2. A result is the new value of weight w when it is computed by
//    elementwise ops (at most a few deep) one of which reads a view of w
//    of the result's shape: AdamW's `w - lr (m / (sqrt(v) + eps) + wd w)`.
//
//   func @main(%w: [H, F], %m: [H, F], %v: [H, F], %x: [B, H])
//       -> ([H, F], [H, F], [H, F]) {
//     %g = dot_general %x, ...           // the gradient of w
//     %m2 = add (mul b1, %m), (mul (1 - b1), %g)
//     ...
//     %w2 = subtract %w, (mul lr, ...)
//     return %w2, %m2, %v2
//
// %m and %v are optimizer state (only %m2, %v2 and %w2 depend on them);
// result 0 is the new value of %w.
#pragma once

#include "shardlab/ir/ir.h"

#include <vector>

namespace shardlab::strategy {

/// Per argument of `entry`: whether no matmul depends on it (rule 1).
std::vector<bool> reachesNoMatmul(Module &module, Operation &entry);

/// Per result of `entry`: the argument whose new value it is (rule 2),
/// among those `candidates` marks; -1 for none.
std::vector<int64_t> updatedArguments(Module &module, Operation &entry,
                                      const std::vector<bool> &candidates);

} // namespace shardlab::strategy
