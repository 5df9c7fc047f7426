// The JSON API of strategy comparison (strategies.schema.json): module text
// and options in, a JSON reply out, errors as values like every entry point
// of api.h. Also the JSON form of the core's results, for the CLI's
// --report.
#pragma once

#include "shardlab/strategy/strategy.h"

#include <string>
#include <string_view>

namespace shardlab::api {

/// compareStrategies: every candidate beside the module as written.
std::string compareStrategiesJson(std::string_view text,
                                  std::string_view options_json);

/// suggestShardings: the bounded search's best strategies and why.
std::string suggestShardingsJson(std::string_view text,
                                 std::string_view options_json);

/// The Comparison / Suggestions replies of those calls for core results.
std::string comparisonJson(const strategy::Comparison &comparison);
std::string suggestionsJson(const strategy::Suggestions &suggestions);

} // namespace shardlab::api
