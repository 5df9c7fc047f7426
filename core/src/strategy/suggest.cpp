// suggestShardings: a beam search over argument shardings from the best
// candidates (see shardlab/strategy/strategy.h).
//
// A move changes one group of alike arguments (same role and shape, so the
// layers of a model move together) in one dimension: puts a mesh axis the
// arguments do not use on it, takes an axis off it, or moves an axis there
// from another dimension. Each round expands the `beam` fastest strategies
// not yet expanded; the search ends when a round finds nothing faster or
// the budget is spent.
#include "strategy/compare_internal.h"
#include "strategy/units.h"

#include <algorithm>
#include <map>
#include <set>

namespace shardlab::strategy {
namespace {

using Clock = std::chrono::steady_clock;

/// Arguments that move together: same role and shape.
std::vector<std::vector<size_t>> argGroups(const std::vector<ArgAnalysis> &a) {
  std::map<std::pair<int, std::vector<int64_t>>, std::vector<size_t>> by_key;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].info.role != ArgRole::Scalar)
      by_key[{int(a[i].info.role), a[i].info.shape}].push_back(i);
  std::vector<std::vector<size_t>> groups;
  for (auto &[key, members] : by_key)
    groups.push_back(std::move(members));
  return groups;
}

int64_t axisSize(const Plan &plan, const std::string &axis) {
  for (const MeshAxis &m : plan.mesh)
    if (m.name == axis)
      return m.size;
  return 1;
}

// `axes` with `axis` set on dim `d` only (taken off any other dim), or
// taken off `d` when it was there.
ArgAxes toggled(ArgAxes axes, size_t d, const std::string &axis) {
  auto &dim = axes[d];
  if (auto at = std::find(dim.begin(), dim.end(), axis); at != dim.end()) {
    dim.erase(at);
    return axes;
  }
  for (auto &other : axes)
    std::erase(other, axis);
  axes[d].push_back(axis);
  return axes;
}

std::string moveText(const std::vector<ArgAnalysis> &args,
                     const std::vector<size_t> &group, const ArgAxes &before,
                     const ArgAxes &after) {
  std::string who = args[group[0]].info.name;
  if (group.size() > 1)
    who += " and " + std::to_string(group.size() - 1) + " alike";
  return who + " " + argAxesText(before) + " -> " + argAxesText(after);
}

/// Every plan one move away from `plan` whose shardings divide.
std::vector<Plan> neighbours(const Plan &plan,
                             const std::vector<ArgAnalysis> &args,
                             const std::vector<std::vector<size_t>> &groups) {
  std::vector<Plan> out;
  for (const std::vector<size_t> &group : groups) {
    const ArgAnalysis &rep = args[group[0]];
    for (size_t d = 0; d < rep.info.shape.size(); ++d)
      for (const MeshAxis &mesh_axis : plan.mesh) {
        // A pipeline's stage axis holds the stages: no sharding uses it.
        if (plan.stages > 0 && mesh_axis.name == axis::kStage)
          continue;
        ArgAxes after = toggled(plan.args[group[0]], d, mesh_axis.name.str());
        int64_t ways = 1;
        for (const std::string &a : after[d])
          ways *= axisSize(plan, a);
        if (rep.info.shape[d] % ways != 0)
          continue;
        Plan next = plan;
        for (size_t member : group)
          next.args[member] = after;
        next.name = plan.name.find(" + ") == std::string::npos
                        ? plan.name + " + tuned"
                        : plan.name;
        next.description = plan.description + "; " +
                           moveText(args, group, plan.args[group[0]], after);
        out.push_back(std::move(next));
      }
  }
  return out;
}

// Whether `row` fits in device memory (unknown capacity: it does).
bool fitsMemory(const Candidate &row) { return !row.fits || *row.fits; }

std::vector<std::string> changes(const Candidate &user, const Candidate &row) {
  std::vector<std::string> out;
  if (user.mesh != row.mesh)
    out.push_back("mesh: " + (user.mesh.empty() ? "none" : user.mesh) + " -> " +
                  row.mesh);
  for (size_t i = 0; i < row.shardings.size(); ++i) {
    const std::string before =
        i < user.shardings.size() ? user.shardings[i].sharding : "";
    if (before != row.shardings[i].sharding)
      out.push_back(row.shardings[i].name + ": " +
                    (before.empty() ? "unsharded" : before) + " -> " +
                    row.shardings[i].sharding);
  }
  return out;
}

struct Searched {
  Plan plan;
  Candidate row;
  bool expanded = false;
};

} // namespace

Result<Suggestions> suggestShardings(std::string_view text,
                                     const SuggestOptions &options) {
  auto start = Clock::now();
  Result<Prepared> prepared = prepare(text, options.compare);
  if (!prepared)
    return prepared.error();
  const EvaluationContext &context = prepared->context;
  Suggestions out;
  out.user = evaluatePlan(context, userPlan());
  std::vector<Searched> pool;
  std::set<std::string> seen;
  auto spent = [&] { return msSince(start) >= options.budget_ms; };
  // A layout that fits in device memory comes before one that does not;
  // then the faster one.
  auto better = [](const Searched &a, const Searched &b) {
    if (fitsMemory(a.row) != fitsMemory(b.row))
      return fitsMemory(a.row);
    return a.row.step_time_us < b.row.step_time_us;
  };
  // The best found so far, as the search ranks it.
  auto report = [&] {
    if (!options.on_progress)
      return;
    SearchProgress progress;
    progress.evaluated = out.evaluated;
    progress.elapsed_ms = msSince(start);
    if (!pool.empty()) {
      const Searched &s = *std::min_element(pool.begin(), pool.end(), better);
      progress.best_step_us = s.row.step_time_us;
      progress.best_fits = fitsMemory(s.row);
    }
    options.on_progress(progress);
  };
  // Plans not seen before, evaluated a batch of `threads` at a time; the
  // budget is checked between batches.
  const size_t batch = size_t(effectiveThreads(options.compare.threads));
  auto evaluate = [&](std::vector<Plan> plans) {
    std::vector<Plan> fresh;
    for (Plan &plan : plans)
      if (plan.error.empty() && seen.insert(planKey(plan)).second)
        fresh.push_back(std::move(plan));
    for (size_t at = 0; at < fresh.size() && !spent(); at += batch) {
      std::vector<Plan> some(
          fresh.begin() + std::ptrdiff_t(at),
          fresh.begin() + std::ptrdiff_t(std::min(fresh.size(), at + batch)));
      std::vector<Candidate> rows =
          evaluatePlans(context, some, options.compare.threads);
      out.evaluated += int64_t(rows.size());
      for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i].ok)
          pool.push_back({std::move(some[i]), std::move(rows[i]), false});
      report();
    }
  };
  evaluate(prepared->plans);
  const auto groups = argGroups(context.args);
  auto bestOf = [&] {
    const Searched &s = *std::min_element(pool.begin(), pool.end(), better);
    return std::pair{!fitsMemory(s.row), s.row.step_time_us};
  };
  std::pair<bool, double> best = pool.empty() ? std::pair{true, 0.0} : bestOf();
  while (!pool.empty() && !spent()) {
    std::sort(pool.begin(), pool.end(), better);
    std::vector<Plan> frontier;
    for (Searched &s : pool)
      if (!s.expanded && int(frontier.size()) < options.beam) {
        s.expanded = true;
        frontier.push_back(s.plan);
      }
    if (frontier.empty())
      break;
    std::vector<Plan> next;
    for (const Plan &plan : frontier)
      for (Plan &n : neighbours(plan, context.args, groups))
        next.push_back(std::move(n));
    evaluate(std::move(next));
    const std::pair<bool, double> now = bestOf();
    if (now >= best)
      break;
    best = now;
  }
  out.budget_exhausted = spent();
  std::sort(pool.begin(), pool.end(), better);
  for (const Searched &s : pool) {
    if (int(out.suggestions.size()) >= options.keep)
      break;
    // A strategy as fast as one already suggested (a change that made no
    // difference) is not another suggestion.
    if (!out.suggestions.empty() &&
        fitsMemory(s.row) == fitsMemory(out.suggestions.back().candidate) &&
        s.row.step_time_us <=
            out.suggestions.back().candidate.step_time_us * 1.001)
      continue;
    Suggestion suggestion;
    suggestion.candidate = s.row;
    suggestion.changes = changes(out.user, s.row);
    if (out.user.ok) {
      suggestion.reasons = reasons(out.user, s.row);
      suggestion.speedup = s.row.step_time_us > 0
                               ? out.user.step_time_us / s.row.step_time_us
                               : 0;
    }
    out.suggestions.push_back(std::move(suggestion));
  }
  out.elapsed_ms = msSince(start);
  return out;
}

} // namespace shardlab::strategy
