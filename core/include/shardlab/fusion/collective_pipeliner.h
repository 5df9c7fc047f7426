// Which ops of a while loop's body XLA's collective pipeliner moves across
// iterations, so that a loop's collectives overlap the compute of the
// iteration next to theirs (xla_gpu_enable_pipelined_all_gather,
// _reduce_scatter and _all_reduce; off by default in XLA, on in the flags
// JAX users set for FSDP).
//
// Without it, XLA schedules a loop body on its own: an FSDP layer loop
// gathers a layer's weights at the top of its iteration, and nothing can
// hide that all-gather. The pipeliner, simplified:
//  - Backward (all-gather): an all-gather whose operand is computed only
//    from values the loop does not change (weights captured or carried
//    through unchanged) and from the induction variable is issued one
//    iteration early, with the ops that compute its operand (the
//    dynamic_slice of the stacked weights, reshapes).
//  - Forward sink (reduce-scatter, all-reduce): a collective whose result
//    is only formatted and stored into a loop output (reshape, convert,
//    transpose, dynamic_update_slice into a carried buffer) finishes in the
//    next iteration, with those ops.
//  - Sends (collective-permute): a permute whose result the body does not
//    read (a pipeline stage's send, read by the next stage in its next
//    tick) finishes in the next iteration, as XLA's pipelined
//    send/recv do (xla_gpu_enable_pipelined_p2p) and PyTorch's isend.
// A collective moves one iteration, no further: the schedule starts what
// iteration k prefetches after iteration k - 2 ends, and ends what it sinks
// before iteration k + 1 ends (XLA moves it into the neighbouring body).
// Worked example (a backward layer loop, FSDP):
//   %w = dynamic_slice %stacked_w, %i     prefetched: %stacked_w is carried
//   %wf = all_gather %w                   unchanged, %i is the counter
//   %dw = dot_general %x, %dy             (compute: stays)
//   %rs = reduce_scatter %dw              sunk: only stored, by
//   %g = dynamic_update_slice %gs, %rs, %i   this update into a carried
//                                            buffer
#pragma once

#include "shardlab/ir/ir.h"

#include <unordered_set>

namespace shardlab::fusion {

struct PipelinedOps {
  /// Ops of the body that run one iteration early: all-gathers and the ops
  /// their operands are computed by.
  std::unordered_set<const Operation *> prefetched;
  /// Reduce-scatters and all-reduces that finish in the next iteration,
  /// with the ops that format and store their results, and unread sends.
  std::unordered_set<const Operation *> sunk;
};

/// The ops of `while_op`'s body (its top-level ops) the pipeliner moves.
PipelinedOps pipelinedOps(Operation &while_op);

} // namespace shardlab::fusion
