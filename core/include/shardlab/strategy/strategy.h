// Sharding strategies compared side by side, and a bounded search for
// better ones: the answer to "for this model on these devices, which
// sharding is fastest, and does it fit?".
//
// A strategy is a mesh plus a sharding for each argument of the entry
// function. Each one is applied to a copy of the module (the user's own
// shardings, constraints and meshes removed), then propagated, exported to
// explicit collectives, lowered to the per-device program and scheduled,
// exactly as shardlab-schedule does for one module. The user's module as
// written is always a row of its own.
//
// The entry function's arguments are first given roles (see arg_roles.h):
// data (activations: the batch lives in dimension 0, the sequence in
// dimension 1 of rank >= 3), parameters (weights, optimizer state) and
// scalars. The candidates for N devices are then
//
//   DP        data dim 0 on "data"=N; parameters replicated
//   FSDP      as DP, and each parameter's largest divisible dim on "data"
//             (ZeRO-3: parameters are all-gathered where they are used);
//             when none divides, its largest, padded (as FSDP pads its
//             flat shards: 440 devices split a 4096-wide weight)
//   TP        parameters Megatron-style on "model"=N: a matmul weight whose
//             input comes from a column-parallel matmul is row-parallel
//             (contracting dim sharded), others column-parallel
//             (non-contracting dim sharded); data replicated
//   SP        data dim 1 (sequence) on "seq"=N; parameters replicated
//   EP        data dim 0 and the expert dim of expert weights (a matmul
//             weight with batching dims, as a mixture of experts' [E, H, F]
//             is) on "expert"=N: tokens reach their experts by all-to-all;
//             other parameters replicated (failed, with the reason, when
//             no weight is an expert's)
//   CP        data dim 1 (sequence) on "context"=N, through attention
//             too: each fused attention call (cuDNN's, one op) runs as a
//             ring (shardlab-context-ring: each device keeps its queries,
//             keys and values passed on by collective_permute); parameters
//             replicated (failed, with the reason, when the step has no
//             fused attention call, when a device would keep fewer than
//             1,024 tokens, or when the batch splits over the devices: DP
//             then gives each as many tokens with no ring). Every CP mix
//             below follows the same rules for its context axis c and data
//             ways a: a ring only where the batch does not split a×c ways
//   CP FSDP, CP ZeRO-1  as CP, and the parameters (ZeRO-3) or the
//             optimizer state (ZeRO-1) split over the ring's devices too,
//             as Megatron's distributed optimizer shards over data and
//             context ranks
//   DP ZeRO-1 as DP, and the optimizer state (a parameter no matmul
//             depends on: Adam's moments) split over "data" on its largest
//             free dim; the weights written replicated and closed, each
//             new weight (a result computed elementwise from it) pinned to
//             its weight's sharding, so the step reduce-scatters the
//             gradients and gathers the updated shards (failed, with the
//             reason, when there is no optimizer state)
//   DP×TP, FSDP×TP, DP×SP  for every split N = a×b (a, b >= 2) on a 2-D
//             mesh ["data"=a, "model"|"seq"=b]; with optimizer state also
//             DP×TP a×b ZeRO-1 (ZeRO-1 with the weights Megatron-style)
//   HSDP, HSDP×TP  hybrid sharding (PyTorch FSDP's HYBRID_SHARD): for
//             every N = r×f×b (r, f >= 2; f×b dividing the GPUs of a node)
//             the mesh ["replica"=r, "data"=f, "model"=b (b > 1)]: the
//             batch over replica and data, each parameter's FSDP dim over
//             "data" only (whole over the r groups), with b > 1 the
//             weights Megatron-style over "model": a layer's gathers stay
//             in a node, only a gradient's shard crosses nodes
//   EP×TP     where there are expert weights, for every split N = a×b:
//             EP over "expert"=a and each expert's matmuls Megatron-style
//             over "model"=b (b in a node)
//   DP×EP, FSDP×EP, DP×EP×TP, FSDP×EP×TP  where there are E experts, EP
//             inside data parallelism: for every N = a×e×b (a, e >= 2; e
//             dividing E; b in a node) the mesh ["data"=a, "expert"=e,
//             "model"=b]: the batch over data and expert, the experts over
//             "expert" (replicated over "data"), with FSDP every parameter
//             over data and expert too (an expert weight's over "data");
//             only the expert dim takes the batch's priority (p0); with
//             optimizer state also DP×EP… ZeRO-1 (the state over data and
//             expert)
//   DP×CP, FSDP×CP, CP×TP  where CP runs, for every split N = a×b: the
//             batch over "data"=a and the sequence over "context"=b (FSDP:
//             the parameters over both); or the sequence over "context"=a
//             and the weights Megatron-style over "model"=b (b in a node)
//   DP×TP×SP, FSDP×TP×SP   for every split N = a×b×c (each >= 2; named
//             a×b×c: data, tensor, sequence) on a 3-D mesh ["data"=a,
//             "seq"=c, "model"=b], where a data argument has a sequence;
//             where CP runs also DP×TP×CP and FSDP×TP×CP (["data"=a,
//             "context"=c, "model"=b])
//   PP×DP, PP×DP×TP, PP×FSDP, PP×FSDP×TP  where the step's layer loops
//             (over weights stacked [L, ...]) sit in a loop over M
//             micro-batches: for S stages (S dividing L and N) and every
//             split N/S = a×e×c×b (b in a node; e >= 2 dividing the experts
//             where there are experts: PP×DP×EP, PP×DP×EP×TP, ...; c >= 2
//             where CP runs: PP×DP×CP×TP, ...), the mesh ["stage"=S,
//             "data"=a, "expert"=e, "context"=c, "model"=b] (with CP,
//             FSDP and ZeRO-1 split over the context axis too), with FSDP
//             the parameters over "data" (and "expert") too, with ZeRO-1
//             only the optimizer state (never their layer dim, which the
//             stages cut); where
//             S > M the micro-batches are split towards 4 S first (the
//             "micro" axis, "mb÷k"; left out if still fewer than S); the stage
//             axis shards nothing, and the lowered program is cut into
//             stages (shardlab-pipeline-stages: L/S layers a device, M+S-1
//             ticks, activations passed by collective_permute, 1F1B's
//             min(S, M) micro-batches of residuals in flight). Without that
//             structure, one "PP" row with the reason
//
// Every row with an expert axis runs shardlab-expert-exchange before
// propagation: the sharding constraints a JAX mixture-of-experts layer
// writes around its experts, so that the tokens reach their experts and
// come back by all-to-all (without them propagation carries the expert
// axis into the dispatch mask and gathers the tokens over it).
//
// e.g. 8 devices: 7 + 3 × 2 + 2 = 15 candidates (with the CP and DP ZeRO-1
// rows' reasons where there is no optimizer state; and a PP row), and with
// 8 GPUs a node 3 more: HSDP 4×2, HSDP 2×4, HSDP×TP 2×2×2. Recomputation
// and micro-batches are choices made on the rows after (compare.cpp): every one
// that does not fit is recomputed and split, unless the cheap bound rules it
// out (its compute alone reaches the fastest step that fits). A candidate whose
// sharding does not divide a dimension, or that propagation or scheduling
// rejects, is a row with the reason instead of numbers. Two rules prune before
// the full schedule, each with its reason: tensor parallelism stays inside a
// node (a "model" axis larger than the GPUs per node is not tried, as
// tensor-parallel all-reduces on every layer would cross the network), and
// a layout whose arguments alone (weights and optimizer state, as split)
// exceed the device memory does not fit whatever the schedule.
#pragma once

#include "shardlab/schedule/pipeline.h"
#include "shardlab/schedule/report.h"
#include "shardlab/support/result.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::strategy {

/// What an argument of the entry function is, for choosing its sharding.
enum class ArgRole { Data, Parameter, Scalar };
std::string_view toString(ArgRole role);

/// An argument of the entry function and why it got its role.
struct ArgInfo {
  size_t index = 0;
  std::string name; ///< as written (`%x`), else `%argN`
  std::vector<int64_t> shape;
  ArgRole role = ArgRole::Data;
  std::string reason; ///< e.g. "weight of the dot_general at 21:8"
};

struct CompareOptions {
  /// Devices to spread over; 0: the size of the module's first mesh, or 8
  /// when it has none.
  int64_t devices = 0;
  /// How each candidate is costed and scheduled (see
  /// schedule::pipelineOptionsFor); `propagate` is ignored: candidates are
  /// always propagated.
  schedule::PipelineOptions pipeline;
  /// Candidate names to evaluate (empty: all); the user's row is always
  /// there.
  std::vector<std::string> only;
  /// Candidates evaluated at once (each on its own copy of the module as
  /// parsed once, see copyModule):
  /// 0 takes the machine's hardware threads; the WebAssembly build, which
  /// has no threads, evaluates one at a time. The rows do not depend on it.
  int threads = 0;
  /// Each candidate's loops scheduled as their first, one steady and their
  /// last three iterations, the steady one counted for the rest
  /// (schedule::ProgramOptions::extrapolate_loops): a 70B model's pipeline
  /// of 23 ticks over 80 layers is a few iterations, not thousands. false:
  /// every iteration is emitted.
  bool extrapolate_loops = true;
};

/// Count, bytes (per device, the collectives' outputs) and time of the
/// collectives of one kind in a candidate's program.
struct CollectiveTotals {
  std::string kind;
  int64_t count = 0;
  int64_t bytes = 0;
  double comm_us = 0, exposed_us = 0;
};

/// One argument's sharding in a candidate.
struct ArgSharding {
  std::string name;
  std::string sharding; ///< `[{"data"}, {}]`, the dims of #sdy.sharding
};

/// How many of the largest temporaries at its peak a row names.
constexpr size_t kLargestLive = 3;

/// One row of the comparison.
struct Candidate {
  std::string name;        ///< "DP", "FSDP×TP 2×4", "as written"
  std::string description; ///< one sentence: what is sharded on what
  std::string mesh;        ///< `<["data"=2, "model"=4]>`
  bool is_user = false;
  std::vector<ArgSharding> shardings;
  bool ok = false;
  std::string error; ///< why it failed (when !ok)
  std::string stage; ///< where it failed: plan, propagate, schedule, ...
  double step_time_us = 0, compute_us = 0, comm_us = 0;
  double exposed_comm_us = 0, hidden_comm_us = 0;
  std::vector<CollectiveTotals> collectives;
  int64_t peak_memory_bytes = 0;
  /// Of the peak, the arguments (weights, optimizer state, the batch, as
  /// split); the rest is what is live at the peak (activations saved for
  /// the backward, gathered weights, gradients).
  int64_t argument_bytes = 0;
  /// The op running at the peak, and the largest temporaries live then
  /// (schedule::Schedule::peak_live, at most kLargestLive): what a layout
  /// that does not fit holds.
  std::string peak_at;
  std::vector<schedule::NamedBuffer> largest_live;
  int64_t capacity_bytes = 0; ///< device memory (0: unknown)
  std::optional<bool> fits;
  /// What the estimate assumed (schedule::Program::assumptions): loops
  /// extrapolated, GEMMs or collectives beyond their tables, dimensions
  /// padded, collectives no model could cost.
  std::vector<std::string> assumptions;
  /// Collectives no model could cost, each taking XLA's 5 ms fallback: the
  /// row's time is not an estimate of them.
  int64_t uncosted_collectives = 0;
  double elapsed_ms = 0; ///< time to evaluate this row
};

struct Comparison {
  int64_t devices = 0;
  std::vector<ArgInfo> args;
  /// Rows that ran, fastest first, then the failed ones.
  std::vector<Candidate> rows;
  /// Why the fastest row that fits (the fastest, when none fits) beats the
  /// module as written, collective kind by kind, compute, exposed
  /// communication and memory (empty when the module as written is that
  /// row or did not run).
  std::vector<std::string> why_fastest;
  /// The row why_fastest explains ("" when it is empty).
  std::string why_fastest_row;
  /// Layouts not tried, as the cheap bound rules them out: not derived
  /// (recomputed or split) from a row that does not fit, as the row's
  /// compute alone reaches the fastest step of a row that fits; pipelines
  /// not interleaved, as even half their bubble saved could not beat it.
  int64_t pruned_by_bound = 0;
  /// Only in the reply of a phase (comparePhase): each row's place among
  /// the phase's plans, by which the shares' rows are merged.
  std::vector<int64_t> plan_indices;
  double elapsed_ms = 0;
};

/// Compares the candidates for `text` (a module, Shardy or GSPMD form).
/// An error when the module does not parse or verify, or has no entry
/// function.
Result<Comparison> compareStrategies(std::string_view text,
                                     const CompareOptions &options);

/// The phases of a comparison. compareStrategies runs them in turn; a
/// caller with several instances of the core (the playground's pool of
/// workers) runs each of the first four on every instance with its share
/// of the plans, merges the shares' rows by plan index, gives them to the
/// next phase, and ends with Finish on one instance:
///   Base        the module as written and every candidate
///   Recompute   the recomputation choices, made from the base rows
///   Split       the micro-batch splits, made from the rows of both
///   Interleave  the fastest pipelines that fit, interleaved, made from the
///               rows of all three
///   Finish      all rows sorted, and why the fastest beats the user's
/// Each phase rebuilds the plans from the module and the rows it is given,
/// so the merged rows are exactly compareStrategies' (but elapsed_ms), e.g.
/// 2 instances: Base {0, 2} and {1, 2} evaluate rows 0, 2, 4, ... and
/// 1, 3, 5, ...; merged by plan_indices, they go to Recompute {0, 2} and
/// {1, 2}; both merged after them to Split; all three to Interleave; all
/// four to Finish.
enum class ComparePhase { Base, Recompute, Split, Interleave, Finish };

struct PhaseRequest {
  ComparePhase phase = ComparePhase::Base;
  /// This instance evaluates the phase's plans i with i % shares == share.
  int share = 0, shares = 1;
  /// The rows of the phases before, each phase's merged in plan order:
  /// none for Base; Base's for Recompute; Base's then Recompute's for
  /// Split; those and Split's for Interleave; all four for Finish.
  std::vector<Candidate> earlier;
  /// Finish: the phases' pruned_by_bound, summed (each share of a phase
  /// replies the same count).
  int64_t pruned_by_bound = 0;
};

/// One phase of compareStrategies (see ComparePhase): the share's rows
/// with their plan_indices, unsorted, and the phase's pruned_by_bound; or,
/// for Finish, the whole comparison. An error as compareStrategies', or
/// when `earlier` is not the rows this module's phases give (a row's name
/// differs from its plan's).
Result<Comparison> comparePhase(std::string_view text,
                                const CompareOptions &options,
                                const PhaseRequest &request);

/// How far a search has got: called after each batch of evaluations.
struct SearchProgress {
  int64_t evaluated = 0;   ///< strategies scheduled so far
  double best_step_us = 0; ///< the best found (0: none yet)
  bool best_fits = true;   ///< whether that one fits in memory
  double elapsed_ms = 0;
};

struct SuggestOptions {
  CompareOptions compare;
  double budget_ms = 2000; ///< stop searching after this long
  int beam = 3;            ///< strategies kept between search rounds
  int keep = 3;            ///< suggestions returned
  /// Told of the search's progress (the CLI prints it); may be empty.
  std::function<void(const SearchProgress &)> on_progress;
};

/// A strategy the search found, against the user's.
struct Suggestion {
  Candidate candidate;
  std::vector<std::string> changes; ///< "mesh: ... -> ...", "%w1: ... -> ..."
  std::vector<std::string> reasons; ///< which collectives went, got smaller
  double speedup = 0;               ///< user's step time / this one's
};

struct Suggestions {
  Candidate user;
  std::vector<Suggestion> suggestions; ///< fastest first
  int64_t evaluated = 0;               ///< strategies scheduled
  double elapsed_ms = 0;
  bool budget_exhausted = false;
};

/// Searches argument shardings from the best candidates: each round
/// changes one group of alike arguments (same role and shape) by one
/// sharded dimension, keeps the `beam` fastest, and stops when no change
/// helps or the budget is spent.
Result<Suggestions> suggestShardings(std::string_view text,
                                     const SuggestOptions &options);

/// The comparison as a text table (rows, then failed candidates with their
/// reasons, then the arguments' roles), for shardlab-schedule --compare.
std::string comparisonText(const Comparison &comparison);
/// The suggestions as text, for shardlab-schedule --suggest.
std::string suggestionsText(const Suggestions &suggestions);
/// The comparison as an SVG picture: per candidate a stacked bar (compute,
/// exposed communication) and a memory bar against the device's capacity.
std::string comparisonSvg(const Comparison &comparison);

} // namespace shardlab::strategy
