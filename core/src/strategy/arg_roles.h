// Roles of the entry function's arguments, the ground the candidate
// strategies stand on. Rules, in order:
//
// 1. Seeds. A dot_general without batching dims (or a convolution) whose
//    two operands both come from arguments (through converts, reshapes,
//    transposes, slices, broadcasts, loops and calls) reads its lhs (the
//    convolution's input) as data and its rhs (the kernel) as a weight; a
//    gather's indices are data.
// 2. The batch. The seeds' dimension 0 is sharded on a probe axis and the
//    module propagated (Shardy's own propagation, so loops, calls and every
//    op's rule count): every argument the probe axis reaches is data, its
//    batch dimension where the axis landed (labels, upstream gradients and
//    masks are found so). With no seed, every non-scalar argument is data.
// 3. The rest: rank 0 is a scalar; anything else is a parameter (weights,
//    biases, optimizer moments: the batch never reaches them). A parameter
//    no matmul depends on is optimizer state (optimizer_state.h) and is
//    split as the first weight of its shape is.
//
// Each parameter read as a matmul weight also records its Megatron
// dimensions: "column" (the weight's non-contracting dims) and "row" (its
// contracting dims), outermost first (the first that divides is sharded:
// the heads of a `4096x32x128` projection, not the head dim), and which
// one tensor parallelism shards: row when the matmul's input comes (through
// elementwise ops) from a column-parallel matmul, column otherwise. In
//
//   %h = dot_general %x, %w1 (contract [2] x [0])  // w1 column: dim 1
//   %a = tanh %h
//   %y = dot_general %a, %w2 (contract [2] x [0])  // w2 row: dim 0
//
// both shard the FFN dimension, Megatron's MLP split.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/strategy/strategy.h"

#include <string_view>
#include <vector>

namespace shardlab::strategy {

struct ArgAnalysis {
  ArgInfo info;
  int64_t batch_dim = -1; ///< data: where the batch is
  /// Data: the sequence dim (the one after the batch in rank >= 3, or in
  /// token ids: rank 2 of integers), -1 when it has none.
  int64_t sequence_dim = -1;
  /// Weight: its non-contracting (column) and contracting (row) dims of
  /// size > 1, outermost first (heads before head_dim in `4096x32x128`).
  std::vector<int64_t> column_dims, row_dims;
  bool row_parallel = false; ///< tensor parallelism shards row_dim
  /// Weight: the dims a matmul batches over with the tokens routed to it
  /// (a mixture of experts' expert dim, [E, H, F] read by a dot_general
  /// with batching dims [1] x [0]); empty for other parameters.
  std::vector<int64_t> expert_dims;
  /// A parameter no matmul depends on (optimizer_state.h): Adam's moments,
  /// which ZeRO-1 splits over the data-parallel devices.
  bool optimizer_state = false;
};

/// The scanned layers a pipeline could split (passes/strategy/
/// layer_loops.h): L layers looped over inside M micro-batches, or why the
/// step has no such structure.
struct LayerStack {
  int64_t layers = 0;
  int64_t trips = 0; ///< the layer loops' trips (layers / trips a trip)
  int64_t micro_batches = 1;
  std::string error; ///< empty when a pipeline can be cut
};

struct ModuleAnalysis {
  /// The module as loaded (parsed, verified, imported) once: every use
  /// after the analysis runs on a copy of it (copyModule), not on the text
  /// parsed again.
  std::shared_ptr<const Module> loaded;
  std::vector<ArgAnalysis> args;
  /// Per result of the entry function: the weight (a parameter that is no
  /// optimizer state) whose new value it is, -1 for none
  /// (optimizer_state.h); ZeRO-1 leaves it split as the weight came.
  std::vector<int64_t> updates;
  int64_t mesh_devices = 0; ///< devices of the first mesh (0: none)
  LayerStack layers;
  /// The step calls a fused attention (cuDNN's `__cudnn$fmha...`), which
  /// shardlab-context-ring can run as a ring: context parallelism.
  bool fused_attention = false;
};

/// Analyses the arguments of the entry function of the module in `text`
/// (a copy of it for the probe propagation). An error when it does not
/// load or has no entry function.
Result<ModuleAnalysis> analyzeArguments(std::string_view text);

} // namespace shardlab::strategy
