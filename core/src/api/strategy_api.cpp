// compareStrategies / suggestShardings over JSON (strategies.schema.json).
#include "shardlab/api/strategy_api.h"

#include "guard.h"
#include "json_options.h"
#include "request_fields.h"
#include "schedule_request.h"

namespace shardlab::api {
namespace {

using detail::dumpReply;
using detail::guarded;
using detail::json;
using detail::OptionReader;

json candidateJson(const strategy::Candidate &row) {
  json shardings = json::array();
  for (const strategy::ArgSharding &s : row.shardings)
    shardings.push_back({{"name", s.name}, {"sharding", s.sharding}});
  json collectives = json::array();
  for (const strategy::CollectiveTotals &t : row.collectives)
    collectives.push_back({{"kind", t.kind},
                           {"count", t.count},
                           {"bytes", t.bytes},
                           {"comm_us", t.comm_us},
                           {"exposed_us", t.exposed_us}});
  json j = {{"name", row.name},
            {"description", row.description},
            {"mesh", row.mesh},
            {"is_user", row.is_user},
            {"shardings", shardings},
            {"ok", row.ok},
            {"stage", row.stage},
            {"step_time_us", row.step_time_us},
            {"compute_us", row.compute_us},
            {"comm_us", row.comm_us},
            {"exposed_comm_us", row.exposed_comm_us},
            {"hidden_comm_us", row.hidden_comm_us},
            {"collectives", collectives},
            {"peak_memory_bytes", row.peak_memory_bytes},
            {"argument_bytes", row.argument_bytes},
            {"capacity_bytes", row.capacity_bytes},
            {"assumptions", row.assumptions},
            {"uncosted_collectives", row.uncosted_collectives},
            {"elapsed_ms", row.elapsed_ms}};
  if (!row.ok)
    j["error"] = row.error;
  if (row.fits)
    j["fits"] = *row.fits;
  return j;
}

json comparisonValue(const strategy::Comparison &c) {
  json args = json::array();
  for (const strategy::ArgInfo &a : c.args)
    args.push_back({{"index", a.index},
                    {"name", a.name},
                    {"shape", a.shape},
                    {"role", std::string(strategy::toString(a.role))},
                    {"reason", a.reason}});
  json rows = json::array();
  for (const strategy::Candidate &row : c.rows)
    rows.push_back(candidateJson(row));
  return {{"ok", true},
          {"devices", c.devices},
          {"args", args},
          {"rows", rows},
          {"why_fastest", c.why_fastest},
          {"pruned_by_bound", c.pruned_by_bound},
          {"elapsed_ms", c.elapsed_ms}};
}

json suggestionsValue(const strategy::Suggestions &s) {
  json list = json::array();
  for (const strategy::Suggestion &g : s.suggestions)
    list.push_back({{"candidate", candidateJson(g.candidate)},
                    {"changes", g.changes},
                    {"reasons", g.reasons},
                    {"speedup", g.speedup}});
  return {{"ok", true},
          {"user", candidateJson(s.user)},
          {"suggestions", list},
          {"evaluated", s.evaluated},
          {"elapsed_ms", s.elapsed_ms},
          {"budget_exhausted", s.budget_exhausted}};
}

/// The options both calls read; `request` owns the table the pipeline
/// options point into.
Status readCompare(OptionReader &reader, detail::ScheduleRequest &request,
                   strategy::CompareOptions &out) {
  if (Status read = detail::readSchedule(reader, request); !read)
    return read;
  reader.integer("devices", out.devices, 1, 1 << 20);
  reader.boolean("extrapolate_loops", out.extrapolate_loops);
  if (const json *only = reader.get("only")) {
    if (!only->is_array())
      return makeError("options.only: expected an array of candidate names");
    for (const json &name : *only) {
      if (!name.is_string())
        return makeError("options.only: expected an array of candidate names");
      out.only.push_back(name.get<std::string>());
    }
  }
  if (!reader.ok())
    return makeError(reader.error());
  Result<schedule::PipelineOptions> pipeline = detail::pipelineOptions(request);
  if (!pipeline)
    return pipeline.error();
  out.pipeline = std::move(*pipeline);
  return success();
}

Result<json> parseOptions(std::string_view options_json) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return makeError("options: expected a JSON object");
  return options;
}

std::string compareReply(std::string_view text, std::string_view options_json) {
  Result<json> options = parseOptions(options_json);
  if (!options)
    return detail::errorReply(options.error().message);
  OptionReader reader(*options);
  reader.rejectUnknown(detail::fields::kStrategyOptions);
  detail::ScheduleRequest request;
  strategy::CompareOptions compare;
  if (Status read = readCompare(reader, request, compare); !read)
    return detail::errorReply(read.error().message);
  bool svg = false;
  reader.boolean("svg", svg);
  if (!reader.ok())
    return detail::errorReply(reader.error());
  Result<strategy::Comparison> c = strategy::compareStrategies(text, compare);
  if (!c)
    return detail::errorReply(c.error().message);
  json reply = comparisonValue(*c);
  if (svg)
    reply["svg"] = strategy::comparisonSvg(*c);
  return dumpReply(reply);
}

std::string suggestReply(std::string_view text, std::string_view options_json) {
  Result<json> options = parseOptions(options_json);
  if (!options)
    return detail::errorReply(options.error().message);
  OptionReader reader(*options);
  reader.rejectUnknown(detail::fields::kSuggestOptions);
  detail::ScheduleRequest request;
  strategy::SuggestOptions suggest;
  if (Status read = readCompare(reader, request, suggest.compare); !read)
    return detail::errorReply(read.error().message);
  if (const json *budget = reader.get("budget_ms")) {
    if (!budget->is_number() || budget->get<double>() < 1)
      return detail::errorReply("options.budget_ms: expected a number >= 1");
    suggest.budget_ms = budget->get<double>();
  }
  int64_t beam = suggest.beam, keep = suggest.keep;
  reader.integer("beam", beam, 1, 32);
  reader.integer("keep", keep, 1, 32);
  if (!reader.ok())
    return detail::errorReply(reader.error());
  suggest.beam = int(beam);
  suggest.keep = int(keep);
  Result<strategy::Suggestions> s = strategy::suggestShardings(text, suggest);
  if (!s)
    return detail::errorReply(s.error().message);
  return dumpReply(suggestionsValue(*s));
}

} // namespace

std::string compareStrategiesJson(std::string_view text,
                                  std::string_view options_json) {
  return guarded([&] { return compareReply(text, options_json); });
}

std::string suggestShardingsJson(std::string_view text,
                                 std::string_view options_json) {
  return guarded([&] { return suggestReply(text, options_json); });
}

std::string comparisonJson(const strategy::Comparison &comparison) {
  return dumpReply(comparisonValue(comparison));
}

std::string suggestionsJson(const strategy::Suggestions &suggestions) {
  return dumpReply(suggestionsValue(suggestions));
}

} // namespace shardlab::api
