// Internal to the API: one evaluated strategy (strategy::Candidate) as the
// JSON of strategies.schema.json's Candidate, and back. The way back is for
// the phases of a comparison (comparePhase): a phase is given the rows the
// phases before it replied, which round-trip exactly (doubles are written
// in their shortest form that reads back to the same value).
#pragma once

#include "shardlab/strategy/strategy.h"
#include "shardlab/support/result.h"

#include <nlohmann/json.hpp>

#include <string>

namespace shardlab::api::detail {

nlohmann::json candidateJson(const strategy::Candidate &row);

/// The row `value` describes, or what is wrong with it, e.g.
/// "options.phase.rows[3].step_time_us: expected a number" for `where`
/// "options.phase.rows[3]".
Result<strategy::Candidate> candidateFromJson(const nlohmann::json &value,
                                              const std::string &where);

} // namespace shardlab::api::detail
