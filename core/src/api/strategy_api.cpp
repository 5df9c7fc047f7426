// compareStrategies / suggestShardings over JSON (strategies.schema.json).
#include "shardlab/api/strategy_api.h"

#include "candidate_json.h"
#include "guard.h"
#include "json_options.h"
#include "request_fields.h"
#include "schedule_request.h"

namespace shardlab::api {
namespace {

using detail::candidateJson;
using detail::dumpReply;
using detail::guarded;
using detail::json;
using detail::OptionReader;

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
          {"why_fastest_row", c.why_fastest_row},
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

Result<strategy::ComparePhase> phaseNamed(const std::string &name) {
  using strategy::ComparePhase;
  for (auto [known, phase] : {std::pair{"base", ComparePhase::Base},
                              std::pair{"recompute", ComparePhase::Recompute},
                              std::pair{"split", ComparePhase::Split},
                              std::pair{"interleave", ComparePhase::Interleave},
                              std::pair{"finish", ComparePhase::Finish}})
    if (name == known)
      return phase;
  return makeError("options.phase.name: expected \"base\", \"recompute\", "
                   "\"split\", \"interleave\" or \"finish\", got \"" +
                   name + "\"");
}

/// options.phase.rows: the rows of the phases before, as replied.
Status readRows(const json &rows, std::vector<strategy::Candidate> &out) {
  if (!rows.is_array())
    return makeError("options.phase.rows: expected an array of rows");
  for (size_t i = 0; i < rows.size(); ++i) {
    Result<strategy::Candidate> row = detail::candidateFromJson(
        rows[i], "options.phase.rows[" + std::to_string(i) + "]");
    if (!row)
      return row.error();
    out.push_back(std::move(*row));
  }
  return success();
}

/// options.phase (ComparePhase in strategies.schema.json).
Result<strategy::PhaseRequest> readPhase(const json &value) {
  if (!value.is_object())
    return makeError("options.phase: expected an object");
  OptionReader reader(value, "options.phase");
  reader.rejectUnknown(detail::fields::kComparePhase);
  std::string name;
  reader.string("name", name);
  strategy::PhaseRequest out;
  int64_t share = 0, shares = 1;
  reader.integer("share", share, 0, 1 << 16);
  reader.integer("shares", shares, 1, 1 << 16);
  reader.integer("pruned_by_bound", out.pruned_by_bound);
  if (!reader.ok())
    return makeError(reader.error());
  Result<strategy::ComparePhase> phase = phaseNamed(name);
  if (!phase)
    return phase.error();
  out.phase = *phase;
  out.share = int(share);
  out.shares = int(shares);
  if (const json *rows = reader.get("rows"))
    if (Status read = readRows(*rows, out.earlier); !read)
      return read.error();
  return out;
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
  reader.rejectUnknown(detail::fields::kCompareOptions);
  detail::ScheduleRequest request;
  strategy::CompareOptions compare;
  if (Status read = readCompare(reader, request, compare); !read)
    return detail::errorReply(read.error().message);
  bool svg = false;
  reader.boolean("svg", svg);
  if (!reader.ok())
    return detail::errorReply(reader.error());
  std::optional<strategy::PhaseRequest> phase;
  if (const json *value = reader.get("phase")) {
    Result<strategy::PhaseRequest> read = readPhase(*value);
    if (!read)
      return detail::errorReply(read.error().message);
    phase = std::move(*read);
  }
  Result<strategy::Comparison> c =
      phase ? strategy::comparePhase(text, compare, *phase)
            : strategy::compareStrategies(text, compare);
  if (!c)
    return detail::errorReply(c.error().message);
  json reply = comparisonValue(*c);
  if (phase && phase->phase != strategy::ComparePhase::Finish)
    reply["plan_indices"] = c->plan_indices;
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
