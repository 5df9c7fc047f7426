// compareStrategies: every candidate plus the user's row, evaluated and
// sorted (see shardlab/strategy/strategy.h).
#include "strategy/candidates.h"
#include "strategy/compare_internal.h"
#include "strategy/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>

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
  p.plans =
      candidatePlans(p.context.args, p.devices,
                     options.pipeline.program.sol.gpus_per_node, p.layers);
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

// Recomputation as a choice: the fastest layouts that fit once more with
// less recomputed (faster, if it still fits), the fastest that do not fit
// (though their arguments do) with every layer recomputed (the least
// memory). Only where the step has layer loops; appended to `plans` and
// `rows` alike.
void addRecomputeChoices(const Prepared &p, std::vector<Plan> &plans,
                         std::vector<Candidate> &rows, int threads) {
  constexpr size_t kFitting = 1, kOver = 2;
  if (!p.layers.error.empty())
    return;
  const std::vector<size_t> fitting = fastestRows(plans, rows, true, false);
  const std::vector<size_t> over = fastestRows(plans, rows, false, false);
  std::vector<Plan> more;
  std::vector<size_t> base;
  auto add = [&](size_t from, const char *policy) {
    more.push_back(recomputePlan(plans[from], policy));
    base.push_back(from);
  };
  for (size_t k = 0; k < fitting.size() && k < kFitting; ++k)
    for (const char *policy : {"none", "selective"})
      add(fitting[k], policy);
  for (size_t k = 0; k < over.size() && k < kOver; ++k)
    add(over[k], "full");
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

// The fastest layouts that ran but do not fit (their arguments do), once
// more with each micro-batch split as far as the batch allows (memory for
// time: the residuals of one row a micro-batch), as recipes that run
// micro-batches of one sequence do; a pipeline whose micro-batches were
// split towards 4 S is split again from its plan before that split. Only
// where the step loops over micro-batches. A split Shardy lowers by moving the
// batch across the split (cheaper than gathering a small weight) fails with
// that reason.
void addSplitMicroBatches(const Prepared &p, const std::vector<Plan> &plans,
                          std::vector<Candidate> &rows, int threads) {
  constexpr size_t kMostSplit = 6;
  constexpr int64_t kMostMicroBatches = 512;
  if (!p.layers.error.empty())
    return;
  // Splitting shrinks what is live, never the arguments: only layouts
  // whose arguments leave room.
  const std::vector<size_t> over = fastestRows(plans, rows, false, true);
  std::vector<Plan> split;
  for (size_t i : over)
    if (split.size() < kMostSplit)
      if (std::optional<Plan> s = splitMicroBatchesPlan(
              plans[i], p.context.args, p.layers.micro_batches,
              kMostMicroBatches, kMostSplitLoweredDevices))
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
  addRecomputeChoices(*prepared, plans, out.rows, options.threads);
  addSplitMicroBatches(*prepared, plans, out.rows, options.threads);
  sortRows(out.rows);
  out.why_fastest = whyFastest(out.rows);
  out.elapsed_ms = msSince(start);
  return out;
}

} // namespace shardlab::strategy
