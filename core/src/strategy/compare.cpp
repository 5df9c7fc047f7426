// compareStrategies: every candidate plus the user's row, evaluated and
// sorted (see shardlab/strategy/strategy.h).
#include "strategy/candidates.h"
#include "strategy/compare_internal.h"
#include "strategy/evaluate.h"

#include <algorithm>
#include <chrono>

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
  p.plans = candidatePlans(p.context.args, p.devices,
                           options.pipeline.program.sol.gpus_per_node,
                           analysis->layers);
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
  sortRows(out.rows);
  out.elapsed_ms = msSince(start);
  return out;
}

} // namespace shardlab::strategy
