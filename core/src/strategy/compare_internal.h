// What compareStrategies and suggestShardings share: the prepared
// evaluation (arguments analysed, pipeline options, candidate plans), the
// ordering of rows and why one row beats another.
#pragma once

#include "shardlab/strategy/strategy.h"
#include "strategy/evaluate.h"
#include "strategy/plan.h"
#include "support/elapsed.h"

#include <chrono>

namespace shardlab::strategy {

struct Prepared {
  int64_t devices = 0;
  EvaluationContext context;
  std::vector<Plan> plans; ///< the candidates, filtered by options.only
  LayerStack layers;       ///< the layer and micro-batch loops, or why not
};

Result<Prepared> prepare(std::string_view text, const CompareOptions &options);

/// Rows that ran, fastest first, then the failed ones in their order.
void sortRows(std::vector<Candidate> &rows);

/// The user's module as written.
Plan userPlan();

/// The rows that ran and do not fit though their arguments do (when
/// `fitting`: that fit), not the user's (nor, unless `recomputed`, the
/// recomputation rows), fastest first: the rows layouts are derived from.
/// A row whose arguments alone fill the device is not: recomputing or
/// splitting shrinks what is live, never the arguments.
std::vector<size_t> fastestRows(const std::vector<Plan> &plans,
                                const std::vector<Candidate> &rows,
                                bool fitting, bool recomputed);

/// The cheap bound before deriving layouts (recomputed, micro-batches
/// split) from rows that do not fit: the fastest step of a row that fits
/// (infinity when none does). A derived layout's step is at least its
/// compute, which is at least leastDerivedCompute of its row's.
double fittingBound(const std::vector<Candidate> &rows);

/// The least compute a layout derived from `plan`'s row can have: the
/// row's `compute_us` (recomputing adds work, splitting keeps the FLOPs in
/// smaller GEMMs), but for a pipeline the M micro-batches' share of its
/// M + S - 1 ticks, which splitting shrinks towards (S = 8, M = 16: 16/23).
double leastDerivedCompute(const Plan &plan, double compute_us,
                           int64_t micro_batches);

/// Why `row` is faster (or slower) than `user`: each collective kind that
/// went, came or changed (calls, bytes, time, exposed time), compute,
/// exposed communication, and the peak memory where it matters, e.g.
/// "all-reduce: 52 x 1600.0 MiB -> 26 x 800.0 MiB (41.2 ms -> 20.6 ms,
/// exposed 12.0 ms -> 0.0 ms)".
std::vector<std::string> reasons(const Candidate &user, const Candidate &row);

/// The row a comparison explains: the fastest that fits (a faster one
/// that does not fit is no answer), or the fastest when none fits; null
/// when none ran. `rows` sorted.
const Candidate *fastestRow(const std::vector<Candidate> &rows);

/// reasons() for `fastest` (fastestRow(rows)) against the module as
/// written; empty when that is the module as written or it did not run.
std::vector<std::string> whyFastest(const std::vector<Candidate> &rows,
                                    const Candidate *fastest);

} // namespace shardlab::strategy
