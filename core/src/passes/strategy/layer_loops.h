// The loops a pipeline splits into stages: in a training step written with
// scanned layers, the counted loops over the L layers (each body slices the
// stacked [L, ...] weights, or writes [L, ...] stacks, one layer at a time)
// and the loop over micro-batches around them (gradient accumulation).
//
//   %mb = stablehlo.while(%j = 0 ...)               // M micro-batches
//     %fw = stablehlo.while(%i = 0, %h = ...)       // forward, L layers
//       %w_i = dynamic_slice %w, %i, ... sizes = [1, ...]  // w: [L, ...]
//     %bw = stablehlo.while(%i = 0, %g = ...)       // backward, L layers
//       %dw = dynamic_update_slice %dw_acc, ..., %i, ...
//   -> layer_loops = [%fw, %bw], layers = L, micro_batch_loop = %mb
//
// A loop is a layer loop when its body (not a nested one) slices a tensor
// of L rows one row at a time, at a row its counter gives, L a multiple of
// its trip count T, and no loop inside it is one; the micro-batch loop is
// the innermost counted loop holding them all. T < L when each iteration
// runs K = L / T layers (jax.lax.scan's unroll=K: the body slices rows
// K i, K i + 1, ..., K i + K - 1):
//
//   %fw = stablehlo.while(%i = 0 ...)               // 4 trips
//     %a = dynamic_slice %w, 2 x %i, ...            // w: [8, ...]
//     %b = dynamic_slice %w, 2 x %i + 1, ...
//   -> layers = 8, trips = 4
#pragma once

#include "passes/pass_utils.h"
#include "shardlab/ir/ir.h"

#include <string>
#include <vector>

namespace shardlab {

struct LayerLoops {
  std::vector<Operation *> loops; ///< program order
  int64_t layers = 0;             ///< L, the rows of the stacks they slice
  int64_t trips = 0; ///< T, every layer loop's trip count (L / T a trip)
  Operation *micro_batch_loop = nullptr;
  int64_t micro_batches = 1; ///< its trip count (1: none)
  /// Why there is no micro-batch loop (empty when there is one), for the
  /// rewrites that need one to say.
  std::string no_micro_batches;
  /// Why `func` has no layer loops to split (empty when it has).
  std::string error;
};

LayerLoops findLayerLoops(Operation &func);

/// The loop's counter, as its body sees it (null: not a counted loop).
Value *bodyCounter(Operation &loop);

/// A copy of while `loop` in its place carrying the values `keep` marks
/// and then one more per `added` initial value (its body yields them
/// unchanged until the caller says otherwise); `loop`'s kept results are
/// replaced and it is erased (its other results must be unused). `map`
/// takes each old block argument and op result of the regions to its copy.
/// Null (and `loop` left as it was) when a dropped value is still read by
/// a live op of the loop.
Operation *rebuildLoop(Context &ctx, Operation &loop,
                       const std::vector<bool> &keep,
                       const std::vector<Value *> &added, ValueMap &map);

/// Whether `value` is a ranked tensor whose dimension 0 has `rows`.
bool leadingDimIs(const Value *value, int64_t rows);

/// The stacked tensor `op` slices or updates one layer of, at a row the
/// counter of `loop` gives (`op` in its body), or null. The stack's rows
/// are a multiple of the loop's trip count (one layer or more a trip).
Value *layerSliced(Operation &op, Operation &loop);

/// The same with the stack's rows exactly the loop's trip count: one row a
/// trip (a micro-batch loop reading its micro-batch).
Value *rowSliced(Operation &op, Operation &loop);

/// Makes a counted loop run `trips` times: its limit becomes a new constant
/// (the old one is erased once unused). False when the loop is not counted.
bool setTripCount(Context &ctx, Operation &loop, int64_t trips);

/// Sets `func`'s function_type from its arguments' and return's types, after
/// a rewrite changed them.
void updateFunctionType(Context &ctx, Operation &func);

} // namespace shardlab
