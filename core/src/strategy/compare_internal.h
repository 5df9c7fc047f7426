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

/// Why `row` is faster (or slower) than `user`: each collective kind that
/// went, came or changed (calls, bytes, time, exposed time), compute,
/// exposed communication, and the peak memory where it matters, e.g.
/// "all-reduce: 52 x 1600.0 MiB -> 26 x 800.0 MiB (41.2 ms -> 20.6 ms,
/// exposed 12.0 ms -> 0.0 ms)".
std::vector<std::string> reasons(const Candidate &user, const Candidate &row);

/// reasons() for the fastest row that ran against the module as written;
/// empty when that is the fastest or did not run. `rows` sorted.
std::vector<std::string> whyFastest(const std::vector<Candidate> &rows);

} // namespace shardlab::strategy
