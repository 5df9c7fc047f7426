// Builds shardlab cost models from one group's `setup` in XLA's conformance
// vectors (vectors.json) and evaluates one case's `query` in the case unit.
#pragma once

#include "shardlab/support/result.h"

#include <nlohmann/json.hpp>

#include <string>

namespace shardlab::conformance {

/// Evaluates one case; an error if the group is unknown or the query is
/// malformed or the model reports an error.
shardlab::Result<double> EvaluateCase(const std::string &group,
                                      const nlohmann::json &setup,
                                      const nlohmann::json &query);

/// True when EvaluateCase knows the group.
bool IsKnownGroup(const std::string &group);

} // namespace shardlab::conformance
