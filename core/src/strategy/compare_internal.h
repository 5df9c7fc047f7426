// What compareStrategies and suggestShardings share: the prepared
// evaluation (arguments analysed, pipeline options, candidate plans) and
// the ordering of rows.
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

} // namespace shardlab::strategy
