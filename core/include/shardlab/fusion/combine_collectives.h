// Which collectives of a block XLA's GPU compiler would combine into one
// call, and the order in which the block's ops then run.
//
// XLA's combiner passes (all-reduce, all-gather and reduce-scatter
// combiners) merge collectives of one kind that move data among the same
// device groups (same reduction, element type and dimension) and do not
// depend on one another, up to a size threshold (30 MiB by default on GPU,
// xla_gpu_*_combine_threshold_bytes). One call pays the network latency
// once: across 128 nodes a ring step costs tens of microseconds, so nine
// small gradient all-reduces of one layer cost nine times what one
// combined all-reduce of their bytes costs.
//
// Rules, as the combiners apply them, simplified:
//  - Candidates are taken in program order; a candidate joins the open
//    group of its key unless it depends (through any chain of ops) on a
//    member of that group, or the group would exceed the threshold or 256
//    members; then the group is closed and a new one starts with it.
//  - The combined call runs once all members' operands are ready, and
//    every user of a member's result waits for it. The block's ops are
//    reordered (a topological order that keeps program order wherever it
//    can) so the combined call is one step; if groups would wait on each
//    other in a cycle, nothing in the block is combined.
// Worked example (per device, in a backward layer body):
//   %a = all_reduce(%grad_bias1)      key (all-reduce, f32, add, groups G)
//   %s = add %a, %acc1                uses %a: waits for the combined call
//   %b = all_reduce(%grad_ln_scale)   same key, independent of %a: joins
//   -> steps: [all_reduce %a + %b], %s
#pragma once

#include "shardlab/ir/ir.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardlab::fusion {

struct CombineOptions {
  bool enabled = true;
  /// XLA's default combine threshold on GPU, per combined call.
  int64_t threshold_bytes = int64_t{30} << 20;
  size_t max_members = 256;
};

/// What the combiner needs of a collective: ops with equal keys may be
/// combined; `bytes` counts toward the threshold.
struct CombineCandidate {
  std::string key;
  int64_t bytes = 0;
};

/// The ops of a block in the order to emit them: each step is one op, or
/// the members (two or more, program order) of one combined collective.
/// The block's terminator, if any, is the last step.
std::vector<std::vector<Operation *>> orderWithCombinedCollectives(
    Block &block, const CombineOptions &options,
    const std::function<std::optional<CombineCandidate>(Operation &)>
        &candidate);

} // namespace shardlab::fusion
