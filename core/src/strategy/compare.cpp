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
  p.context =
      EvaluationContext{text, std::move(analysis->args), options.pipeline};
  p.context.options.program.extrapolate_loops = options.extrapolate_loops;
  p.layers = analysis->layers;
  p.plans = candidatePlans(p.context.args, p.devices,
                           options.pipeline.program.sol.gpus_per_node, p.layers,
                           analysis->updates, analysis->fused_attention);
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

// The rows that ran and do not fit though their arguments do (when
// `fitting`: that fit), not the user's (nor, unless `recomputed`, the
// recomputation rows), fastest first.
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
  const double m =
      double(micro_batches) * double(std::max<int64_t>(1, plan.micro_split));
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

// Recomputation as a choice: the fastest layout that fits once more with
// less recomputed (faster, if it still fits), every one that does not fit
// (though its arguments do) with every layer recomputed (the least
// memory), but those the cheap bound prunes. Only where the step has layer
// loops; appended to `plans` and `rows` alike.
void addRecomputeChoices(const Prepared &p, std::vector<Plan> &plans,
                         std::vector<Candidate> &rows, int threads,
                         int64_t &pruned) {
  constexpr size_t kFitting = 1;
  if (!p.layers.error.empty())
    return;
  const std::vector<size_t> fitting = fastestRows(plans, rows, true, false);
  const std::vector<size_t> over =
      underBound(fastestRows(plans, rows, false, false), plans, rows,
                 p.layers.micro_batches, pruned);
  std::vector<Plan> more;
  std::vector<size_t> base;
  auto add = [&](size_t from, const char *policy) {
    more.push_back(recomputePlan(plans[from], policy));
    base.push_back(from);
  };
  for (size_t k = 0; k < fitting.size() && k < kFitting; ++k)
    for (const char *policy : {"none", "selective"})
      add(fitting[k], policy);
  for (size_t i : over)
    add(i, "full");
  std::vector<Candidate> evaluated = evaluatePlans(p.context, more, threads);
  for (size_t k = 0; k < more.size(); ++k) {
    // The policy the module already follows changes nothing: no row.
    const Candidate &was = rows[base[k]];
    if (evaluated[k].ok &&
        std::abs(evaluated[k].step_time_us - was.step_time_us) <=
            1e-6 * was.step_time_us &&
        evaluated[k].peak_memory_bytes == was.peak_memory_bytes)
      continue;
    plans.push_back(more[k]);
    rows.push_back(evaluated[k]);
  }
}

// The layouts that ran but do not fit (their arguments do), but those the
// cheap bound prunes, once more with each micro-batch split as far as the
// batch allows (memory for time: the residuals of one row a micro-batch),
// as recipes that run micro-batches of one sequence do; a pipeline whose
// micro-batches were split towards 4 S is split again from its plan before
// that split. Only where the step loops over micro-batches. A split Shardy
// lowers by moving the batch across the split (cheaper than gathering a
// small weight) fails with that reason.
void addSplitMicroBatches(const Prepared &p, const std::vector<Plan> &plans,
                          std::vector<Candidate> &rows, int threads,
                          int64_t &pruned) {
  constexpr int64_t kMostMicroBatches = 512;
  if (!p.layers.error.empty())
    return;
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
  // On the threads too: two at once take ~0.5 GB more than one at a time.
  std::vector<Candidate> more = evaluatePlans(p.context, split, threads);
  rows.insert(rows.end(), more.begin(), more.end());
}

Result<Comparison> compareStrategies(std::string_view text,
                                     const CompareOptions &options) {
  auto start = std::chrono::steady_clock::now();
  Result<Prepared> prepared = prepare(text, options);
  if (!prepared)
    return prepared.error();
  Comparison out;
  out.devices = prepared->devices;
  for (const ArgAnalysis &a : prepared->context.args)
    out.args.push_back(a.info);
  std::vector<Plan> plans = {userPlan()};
  plans.insert(plans.end(), prepared->plans.begin(), prepared->plans.end());
  out.rows = evaluatePlans(prepared->context, plans, options.threads);
  addRecomputeChoices(*prepared, plans, out.rows, options.threads,
                      out.pruned_by_bound);
  addSplitMicroBatches(*prepared, plans, out.rows, options.threads,
                       out.pruned_by_bound);
  sortRows(out.rows);
  out.why_fastest = whyFastest(out.rows);
  out.elapsed_ms = msSince(start);
  return out;
}

} // namespace shardlab::strategy
