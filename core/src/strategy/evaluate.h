// Evaluating one plan: a copy of the module as loaded, the plan applied, then
// propagation, explicit collectives, the per-device program and the
// latency-hiding schedule (schedule::lowerToCollectives and
// scheduleLowered, as shardlab-schedule runs them), read into a Candidate
// row.
#pragma once

#include "shardlab/schedule/pipeline.h"
#include "shardlab/strategy/strategy.h"
#include "strategy/arg_roles.h"
#include "strategy/plan.h"

#include <string_view>

namespace shardlab::strategy {

/// What every evaluation of one comparison shares.
struct EvaluationContext {
  /// The module parsed, verified and imported once; each plan runs on a
  /// copy of it (copyModule), made on the plan's own thread.
  std::shared_ptr<const Module> module;
  std::vector<ArgAnalysis> args;
  schedule::PipelineOptions options;
};

/// The row of `plan`: its numbers, or why it failed and where.
Candidate evaluatePlan(const EvaluationContext &context, const Plan &plan);

/// How many plans evaluatePlans runs at once for `threads` (0: the
/// hardware threads; 1 where there are no threads).
int effectiveThreads(int threads);

/// The rows of `plans`, in their order, evaluated `threads` at a time
/// (0: the hardware threads; 1, or a build without threads: in turn).
std::vector<Candidate> evaluatePlans(const EvaluationContext &context,
                                     const std::vector<Plan> &plans,
                                     int threads);

} // namespace shardlab::strategy
