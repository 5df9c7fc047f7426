// compareStrategies: every candidate plus the user's row, evaluated and
// sorted (see shardlab/strategy/strategy.h).
#include "strategy/candidates.h"
#include "strategy/compare_internal.h"
#include "strategy/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace shardlab::strategy {

Result<Prepared> prepare(std::string_view text, const CompareOptions &options) {
  Result<ModuleAnalysis> analysis = analyzeArguments(text);
  if (!analysis)
    return analysis.error();
  if (options.devices < 0)
    return makeError("devices: expected a positive number");
  Prepared p;
  p.devices = options.devices > 0          ? options.devices
              : analysis->mesh_devices > 1 ? analysis->mesh_devices
                                           : 8;
  p.plans = candidatePlans(*analysis, p.devices,
                           options.pipeline.program.sol.gpus_per_node);
  p.context = EvaluationContext{std::move(analysis->loaded),
                                std::move(analysis->args), options.pipeline};
  p.context.options.program.extrapolate_loops = options.extrapolate_loops;
  // The comparison reads each candidate's times, collectives and memory,
  // never a node's explanation.
  p.context.options.program.explain = false;
  // One table and its interpolators for every candidate (each program made
  // its own: 6% of a comparison's instructions).
  if (p.context.options.program.estimator == schedule::EstimatorMode::Real) {
    Result<std::shared_ptr<const schedule::CostTables>> tables =
        schedule::makeCostTables(p.context.options.program);
    if (!tables)
      return tables.error();
    p.context.options.program.cost_tables = *tables;
  }
  p.layers = analysis->layers;
  if (!options.only.empty())
    std::erase_if(p.plans, [&](const Plan &plan) {
      return std::find(options.only.begin(), options.only.end(), plan.name) ==
             options.only.end();
    });
  return p;
}

void sortRows(std::vector<Candidate> &rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Candidate &a, const Candidate &b) {
                     if (a.ok != b.ok)
                       return a.ok;
                     return a.ok && a.step_time_us < b.step_time_us;
                   });
}

Plan userPlan() {
  Plan user;
  user.name = "as written";
  user.description = "the module's own shardings";
  user.is_user = true;
  return user;
}

std::vector<size_t> fastestRows(const std::vector<Plan> &plans,
                                const std::vector<Candidate> &rows,
                                bool fitting, bool recomputed) {
  std::vector<size_t> out;
  for (size_t i = 0; i < rows.size() && i < plans.size(); ++i) {
    const Candidate &r = rows[i];
    if (!r.ok || plans[i].is_user || !r.fits ||
        (!recomputed && !plans[i].recompute.empty()))
      continue;
    if (fitting ? *r.fits : !*r.fits && r.argument_bytes < r.capacity_bytes)
      out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    return rows[a].step_time_us < rows[b].step_time_us;
  });
  return out;
}

// The cheap bound: the fastest step of a row that fits (infinity when none
// does). A layout derived from a row computes at least
// leastDerivedCompute, and a step is at least its compute: a row whose
// least derived compute reaches the bound cannot give the fastest layout
// that fits, and is not derived from.
double fittingBound(const std::vector<Candidate> &rows) {
  double bound = std::numeric_limits<double>::infinity();
  for (const Candidate &r : rows)
    if (r.ok && r.fits && *r.fits)
      bound = std::min(bound, r.step_time_us);
  return bound;
}

// The least compute a layout derived from `plan`'s row (`compute_us`) can
// have. Recomputing adds work; splitting micro-batches keeps the FLOPs in
// smaller GEMMs, except that a pipeline's bubble shrinks: its M + S - 1
// ticks, S - 1 of them idle, run at least the M micro-batches' work,
// e.g. S = 8, M = 16: 16/23 of the row's compute.
double leastDerivedCompute(const Plan &plan, double compute_us,
                           int64_t micro_batches) {
  if (plan.stages <= 1)
    return compute_us;
  const double m = double(microBatchesOf(plan, micro_batches));
  return compute_us * m / (m + double(plan.stages) - 1);
}

// `candidates` without those the bound prunes, counted in `pruned`.
std::vector<size_t> underBound(const std::vector<size_t> &candidates,
                               const std::vector<Plan> &plans,
                               const std::vector<Candidate> &rows,
                               int64_t micro_batches, int64_t &pruned) {
  const double bound = fittingBound(rows);
  std::vector<size_t> out;
  for (size_t i : candidates)
    if (leastDerivedCompute(plans[i], rows[i].compute_us, micro_batches) <
        bound)
      out.push_back(i);
    else
      ++pruned;
  return out;
}

namespace {

// The plans of the first phase: the module as written, then every candidate.
std::vector<Plan> basePlans(const Prepared &p) {
  std::vector<Plan> plans = {userPlan()};
  plans.insert(plans.end(), p.plans.begin(), p.plans.end());
  return plans;
}

// Which of a phase's plans one instance evaluates: i % count == index.
struct Share {
  int index = 0, count = 1;
};

// The rows of one share's plans, with their indices among the plans.
struct ShareRows {
  std::vector<Candidate> rows;
  std::vector<int64_t> indices;
};

ShareRows evaluateShare(const Prepared &p, const std::vector<Plan> &plans,
                        Share share, int threads) {
  ShareRows out;
  std::vector<Plan> mine;
  for (size_t i = size_t(share.index); i < plans.size();
       i += size_t(share.count)) {
    mine.push_back(plans[i]);
    out.indices.push_back(int64_t(i));
  }
  out.rows = evaluatePlans(p.context, mine, threads);
  return out;
}

// Recomputation choices, each with the base row it is derived from.
struct RecomputeChoices {
  std::vector<Plan> plans;
  std::vector<size_t> base;
};

// Recomputation as a choice: the fastest layout that fits once more with
// less recomputed (faster, if it still fits), every one that does not fit
// (though its arguments do) with every layer recomputed (the least
// memory), but those the cheap bound prunes. Only where the step has layer
// loops.
RecomputeChoices recomputeChoices(const Prepared &p,
                                  const std::vector<Plan> &plans,
                                  const std::vector<Candidate> &rows,
                                  int64_t &pruned) {
  constexpr size_t kFitting = 1;
  RecomputeChoices out;
  // shardlab-recompute pairs loops of one layer a trip (not an unrolled
  // scan's).
  if (!p.layers.error.empty() || p.layers.trips != p.layers.layers)
    return out;
  const std::vector<size_t> fitting = fastestRows(plans, rows, true, false);
  const std::vector<size_t> over =
      underBound(fastestRows(plans, rows, false, false), plans, rows,
                 p.layers.micro_batches, pruned);
  auto add = [&](size_t from, const char *policy) {
    out.plans.push_back(recomputePlan(plans[from], policy));
    out.base.push_back(from);
  };
  for (size_t k = 0; k < fitting.size() && k < kFitting; ++k)
    for (const char *policy : {"none", "selective"})
      add(fitting[k], policy);
  for (size_t i : over)
    add(i, "full");
  return out;
}

// Whether recomputing as `choice` changed `was`: the policy the module
// already follows gives the same step and peak, and no row.
bool changesRow(const Candidate &choice, const Candidate &was) {
  return !choice.ok ||
         std::abs(choice.step_time_us - was.step_time_us) >
             1e-6 * was.step_time_us ||
         choice.peak_memory_bytes != was.peak_memory_bytes;
}

// `evaluated` (choices' rows) without those that change nothing.
ShareRows changedRows(const RecomputeChoices &choices,
                      const std::vector<Candidate> &rows, ShareRows evaluated) {
  ShareRows out;
  for (size_t k = 0; k < evaluated.rows.size(); ++k) {
    const size_t choice = size_t(evaluated.indices[k]);
    if (!changesRow(evaluated.rows[k], rows[choices.base[choice]]))
      continue;
    out.rows.push_back(std::move(evaluated.rows[k]));
    out.indices.push_back(evaluated.indices[k]);
  }
  return out;
}

// The layouts that ran but do not fit (their arguments do), but those the
// cheap bound prunes, once more with each micro-batch split as far as the
// batch allows (memory for time: the residuals of one row a micro-batch),
// as recipes that run micro-batches of one sequence do; a pipeline whose
// micro-batches were split towards 4 S is split again from its plan before
// that split. Only where the step loops over micro-batches. A split Shardy
// lowers by moving the batch across the split (cheaper than gathering a
// small weight) fails with that reason.
std::vector<Plan> splitChoices(const Prepared &p,
                               const std::vector<Plan> &plans,
                               const std::vector<Candidate> &rows,
                               int64_t &pruned) {
  constexpr int64_t kMostMicroBatches = 512;
  if (!p.layers.error.empty())
    return {};
  // Splitting shrinks what is live, never the arguments: only layouts
  // whose arguments leave room.
  const std::vector<size_t> over =
      underBound(fastestRows(plans, rows, false, true), plans, rows,
                 p.layers.micro_batches, pruned);
  std::vector<Plan> split;
  for (size_t i : over)
    if (std::optional<Plan> s = splitMicroBatchesPlan(
            plans[i], p.context.args, p.layers.micro_batches, kMostMicroBatches,
            kMostSplitLoweredDevices))
      split.push_back(std::move(*s));
  return split;
}

// The fastest pipelines that fit once more interleaved, 2 chunks a device
// (Megatron-LM's virtual stages: the bubble half as long, twice the
// permutes, more residuals in flight), as NVIDIA's recipes run large
// models; only where the layers and micro-batches divide, and not where
// even the bubble's saving could not beat the fastest row that fits (the
// cheap bound: M V + S - 1 ticks of 1/V the work for M + S - 1, e.g.
// S = 8, M = 16, V = 2: 39/46 of the compute).
std::vector<Plan> interleaveChoices(const Prepared &p,
                                    const std::vector<Plan> &plans,
                                    const std::vector<Candidate> &rows,
                                    int64_t &pruned) {
  constexpr size_t kPipelines = 2;
  constexpr int64_t kChunks = 2;
  const double bound = fittingBound(rows);
  std::vector<Plan> out;
  for (size_t i : fastestRows(plans, rows, true, true)) {
    if (out.size() == kPipelines)
      break;
    std::optional<Plan> v = interleavedPlan(plans[i], kChunks, p.layers);
    if (!v)
      continue;
    const double m = double(microBatchesOf(plans[i], p.layers.micro_batches));
    const double s = double(plans[i].stages), k = double(kChunks);
    const double saved =
        rows[i].compute_us * (1 - (m * k + s - 1) / (k * (m + s - 1)));
    if (rows[i].step_time_us - saved < bound)
      out.push_back(std::move(*v));
    else
      ++pruned;
  }
  return out;
}

Comparison finish(const Prepared &p, std::vector<Candidate> rows,
                  int64_t pruned) {
  Comparison out;
  out.devices = p.devices;
  for (const ArgAnalysis &a : p.context.args)
    out.args.push_back(a.info);
  out.rows = std::move(rows);
  out.pruned_by_bound = pruned;
  sortRows(out.rows);
  const Candidate *fastest = fastestRow(out.rows);
  out.why_fastest = whyFastest(out.rows, fastest);
  if (!out.why_fastest.empty())
    out.why_fastest_row = fastest->name;
  return out;
}

// The plans of `earlier` (the rows of the phases before `phase`, merged):
// the base plans, then for Split and Finish the recomputation choices
// made from the base rows, found by name; or which row does not belong.
Result<std::vector<Plan>> earlierPlans(const Prepared &p,
                                       const PhaseRequest &request) {
  const std::vector<Candidate> &earlier = request.earlier;
  std::vector<Plan> plans = basePlans(p);
  const size_t base = plans.size();
  if (earlier.size() < base ||
      (request.phase == ComparePhase::Recompute && earlier.size() != base))
    return makeError(
        "phase rows: expected the " + std::to_string(base) +
        " rows of the base phase" +
        (request.phase == ComparePhase::Recompute ? "" : " first") + ", got " +
        std::to_string(earlier.size()));
  for (size_t i = 0; i < base; ++i)
    if (earlier[i].name != plans[i].name)
      return makeError("phase rows: row " + std::to_string(i) + " is \"" +
                       earlier[i].name + "\", expected \"" + plans[i].name +
                       "\" (rows of another module or other options?)");
  if (earlier.size() == base || request.phase == ComparePhase::Finish)
    return plans; // Finish sorts the rows: it needs no more plans
  // The recomputation choices' rows, then (before Interleave) the splits':
  // each row from `next` on that names one of `choices` adds its plan.
  int64_t ignored = 0;
  const std::vector<Candidate> base_rows(earlier.begin(),
                                         earlier.begin() + ptrdiff_t(base));
  size_t next = base;
  const auto take = [&](const std::vector<Plan> &choices) {
    for (; next < earlier.size(); ++next) {
      auto found =
          std::find_if(choices.begin(), choices.end(), [&](const Plan &plan) {
            return plan.name == earlier[next].name;
          });
      if (found == choices.end())
        return;
      plans.push_back(*found);
    }
  };
  take(recomputeChoices(p, plans, base_rows, ignored).plans);
  const bool interleave = request.phase == ComparePhase::Interleave;
  if (interleave && next < earlier.size())
    take(splitChoices(p, plans,
                      {earlier.begin(), earlier.begin() + ptrdiff_t(next)},
                      ignored));
  if (next < earlier.size())
    return makeError("phase rows: row " + std::to_string(next) + " (\"" +
                     earlier[next].name + "\") is no " +
                     (interleave ? "recomputation or split choice of the rows "
                                   "before it"
                                 : "recomputation choice of the base rows"));
  return plans;
}

Comparison shareReply(ShareRows share, int64_t pruned) {
  Comparison out;
  out.rows = std::move(share.rows);
  out.plan_indices = std::move(share.indices);
  out.pruned_by_bound = pruned;
  return out;
}

Result<Comparison> runPhase(const Prepared &p, const CompareOptions &options,
                            const PhaseRequest &request) {
  if (request.shares < 1 || request.share < 0 ||
      request.share >= request.shares)
    return makeError("phase share: expected 0 <= share < shares");
  const Share share{request.share, request.shares};
  if (request.phase == ComparePhase::Base)
    return shareReply(evaluateShare(p, basePlans(p), share, options.threads),
                      0);
  Result<std::vector<Plan>> plans = earlierPlans(p, request);
  if (!plans)
    return plans.error();
  const std::vector<Candidate> &rows = request.earlier;
  int64_t pruned = 0;
  switch (request.phase) {
  case ComparePhase::Recompute: {
    const RecomputeChoices choices = recomputeChoices(p, *plans, rows, pruned);
    return shareReply(
        changedRows(choices, rows,
                    evaluateShare(p, choices.plans, share, options.threads)),
        pruned);
  }
  case ComparePhase::Split: {
    // On the threads too: two at once take ~0.5 GB more than one at a time.
    const std::vector<Plan> split = splitChoices(p, *plans, rows, pruned);
    return shareReply(evaluateShare(p, split, share, options.threads), pruned);
  }
  case ComparePhase::Interleave: {
    const std::vector<Plan> chosen = interleaveChoices(p, *plans, rows, pruned);
    return shareReply(evaluateShare(p, chosen, share, options.threads), pruned);
  }
  default:
    return finish(p, rows, request.pruned_by_bound);
  }
}

} // namespace

Result<Comparison> compareStrategies(std::string_view text,
                                     const CompareOptions &options) {
  auto start = std::chrono::steady_clock::now();
  Result<Prepared> prepared = prepare(text, options);
  if (!prepared)
    return prepared.error();
  // The phases as a pool runs them, with one share: every plan.
  PhaseRequest request;
  for (ComparePhase phase : {ComparePhase::Base, ComparePhase::Recompute,
                             ComparePhase::Split, ComparePhase::Interleave}) {
    request.phase = phase;
    Result<Comparison> part = runPhase(*prepared, options, request);
    if (!part)
      return part.error();
    for (Candidate &row : part->rows)
      request.earlier.push_back(std::move(row));
    request.pruned_by_bound += part->pruned_by_bound;
  }
  request.phase = ComparePhase::Finish;
  Result<Comparison> out = runPhase(*prepared, options, request);
  if (out)
    out->elapsed_ms = msSince(start);
  return out;
}

Result<Comparison> comparePhase(std::string_view text,
                                const CompareOptions &options,
                                const PhaseRequest &request) {
  auto start = std::chrono::steady_clock::now();
  Result<Prepared> prepared = prepare(text, options);
  if (!prepared)
    return prepared.error();
  Result<Comparison> out = runPhase(*prepared, options, request);
  if (out)
    out->elapsed_ms = msSince(start);
  return out;
}

} // namespace shardlab::strategy
