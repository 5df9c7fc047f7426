// The candidate strategies for N devices (the list and its rules are in
// shardlab/strategy/strategy.h): DP, FSDP, TP, SP, EP, CP; for every split
// N = a x b, DP×TP, FSDP×TP, DP×SP, (with experts) EP×TP and (with a fused
// attention) DP×CP and CP×TP on a 2-D mesh, with optimizer state DP ZeRO-1
// and DP×TP ZeRO-1; for every N = a x b x c, DP×TP×SP and FSDP×TP×SP (and
// DP×TP×CP, FSDP×TP×CP) on a 3-D mesh; hybrid sharding (HSDP, HSDP×TP:
// the parameters over a group inside a node, replicated across groups);
// with experts, EP inside data parallelism (DP×EP, FSDP×EP, and ×TP); where
// the step loops over stacked layers inside a loop over micro-batches,
// PP×DP, PP×DP×TP, PP×FSDP and PP×FSDP×TP (with experts also ×EP, with a
// fused attention also ×CP; with optimizer state also PP×DP… ZeRO-1) with S
// pipeline stages (S dividing the layers; the micro-batches split where
// there are fewer than S) on the major "stage" axis, the tensor axis inside
// a node.
#pragma once

#include "strategy/arg_roles.h"
#include "strategy/plan.h"

#include <optional>
#include <vector>

namespace shardlab::strategy {

/// Every candidate for `devices` devices of the module `analysed`: its
/// arguments' roles, its layer loops (pipelines), the weights its results
/// update (which pin the new weights of ZeRO-1 plans) and whether it calls
/// a fused attention (the context-parallel plans). A plan whose sharding
/// does not divide a dimension, or whose "model" axis is larger than
/// `gpus_per_node` (0: no limit), carries the reason in Plan::error.
std::vector<Plan> candidatePlans(const ModuleAnalysis &analysed,
                                 int64_t devices, int64_t gpus_per_node = 0);

/// `base` with each micro-batch split as far as the batch allows (one row
/// per device and micro-batch): the data's batch dimension also on a minor
/// "micro" axis of that many, which shardlab-split-micro-batches turns into
/// iterations. nullopt when the batch leaves nothing to split. A plan
/// already split (a pipeline's, split towards 4 S) is split again from its
/// plan before the split, and only further than it was.
/// At most `max_micro_batches` after the split (the step's `micro_batches`
/// times the split): the schedule unrolls every one; and at most
/// `max_devices` on the mesh it is lowered on (the plan's devices times the
/// split): propagation and the collectives' groups grow with it.
/// The largest mesh a micro-batch split is lowered on (the plan's devices
/// times the split): 1,024 devices split 16 ways; 256 ways (as OPT-175B's
/// batch allows) took 10 s to lower.
inline constexpr int64_t kMostSplitLoweredDevices = 16384;

/// The fewest tokens of the sequence a context-parallel device keeps. A
/// ring of C devices is C attention calls on chunks of S/C tokens (its
/// program grows with C); below a thousand tokens a chunk's GEMMs are
/// small enough that the ring loses to the batch split, and the published
/// recipes split 8K-128K sequences into chunks of 2K-8K (Llama 3: 128K
/// over 16).
inline constexpr int64_t kFewestContextTokens = 1024;

std::optional<Plan> splitMicroBatchesPlan(const Plan &base,
                                          const std::vector<ArgAnalysis> &args,
                                          int64_t micro_batches,
                                          int64_t max_micro_batches,
                                          int64_t max_devices);

/// `base` with the backward recomputing as `policy` says (full, selective,
/// none: shardlab-recompute), its name and description saying so.
Plan recomputePlan(const Plan &base, const std::string &policy);
/// `base`, a pipeline of S stages over L layers and M micro-batches (M
/// counted after any split), interleaved: V chunks of L / (S V) layers a
/// device, M V + S - 1 ticks (a bubble V times shorter, V times the
/// permutes). nullopt unless S V divides the layer loops' trips (a chunk is
/// whole trips) and S divides M.
std::optional<Plan> interleavedPlan(const Plan &base, int64_t v,
                                    const LayerStack &stack);

} // namespace shardlab::strategy
