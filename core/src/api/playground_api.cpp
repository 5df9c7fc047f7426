// The playground's per-edit call and the schedule: parse + verify, the
// chosen propagation, then (on the same module) explicit collectives and
// the latency-hiding schedule with the cost model.
#include "shardlab/api/playground_api.h"
#include "passes/xla_support.h"

#include "changed_spans.h"
#include "guard.h"
#include "playground_internal.h"
#include "request_fields.h"
#include "schedule_request.h"
#include "shardlab/api/sharding_report.h"
#include "shardlab/cost/hardware.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/schedule/pipeline.h"
#include "shardlab/schedule/report.h"
#include "shardlab/text/text.h"
#include "support/elapsed.h"
#include "support/json_writer.h"

#include <algorithm>
#include <array>
#include <chrono>

namespace shardlab::api {
namespace {

using detail::dumpReply;
using detail::dumpReplyWith;
using detail::guarded;
using detail::json;
using detail::OptionReader;
using detail::pipelineOptions;
using detail::readSchedule;
using detail::ScheduleRequest;

/// Lowers `module` (already propagated) to collectives unless it has them,
/// then builds and schedules the program. Returns the reply (schedule.schema
/// .json's ScheduleResult) as JSON text: the report and trace are written
/// as they are produced, never held as a tree.
std::string scheduleModule(Module &module, bool lowered,
                           const ScheduleRequest &request,
                           std::string_view text) {
  DiagnosticEngine diags;
  // The export pipeline with explicit collectives: the last step of the
  // "explicit" pipeline (it also all-reduces sharded reductions).
  if (!lowered)
    if (Status ran =
            detail::runFlags(module, {pipelineFlags("explicit").back()}, diags);
        !ran)
      return dumpReply(
          detail::failureReply(ran.error().message, diags.diagnostics(), text));
  // Moved into the reply's tree below: at 1M ops it is hundreds of MB.
  std::string explicit_module = printModule(module);
  Result<schedule::PipelineOptions> options = pipelineOptions(request);
  if (!options)
    return dumpReply(detail::failureReply(options.error().message, {}, text));
  schedule::PipelineResult scheduled =
      schedule::scheduleLowered(module, *options);
  if (!scheduled.ok)
    return dumpReply(
        detail::failureReply(scheduled.error, scheduled.diagnostics, text));
  const std::string report =
      schedule::reportJson(scheduled.program, scheduled.schedule);
  if (!request.trace)
    return dumpReplyWith(
        {{"ok", true}, {"explicit_module", std::move(explicit_module)}},
        {{"report", report}});
  return dumpReplyWith(
      {{"ok", true}, {"explicit_module", std::move(explicit_module)}},
      {{"report", report},
       {"trace",
        schedule::chromeTraceJson(scheduled.program, scheduled.schedule)}});
}

/// Whether the pipeline already lowered the module to collectives (and, for
/// "partition", to the per-device program).
bool isLowered(const std::string &pipeline) {
  return pipeline == "explicit" || pipeline == "partition";
}

/// The options both entry points read: the pipeline and the schedule
/// settings.
struct Request {
  std::vector<std::string> flags;
  std::string pipeline;
  ScheduleRequest schedule;
  bool want_schedule = true; ///< the playground's "schedule" option
  bool want_input = true;    ///< the playground's "input" option
};

/// Reads `options_json`, which may have `fields`.
Result<Request> readRequest(std::string_view options_json,
                            std::span<const std::string_view> fields) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return makeError("options: expected a JSON object");
  OptionReader reader(options);
  reader.rejectUnknown(fields);
  Result<detail::PipelineChoice> choice = detail::pipelineOption(reader);
  if (!choice)
    return choice.error();
  Request request;
  request.pipeline = choice->name;
  request.flags = choice->flags;
  if (Status read = readSchedule(reader, request.schedule); !read)
    return read.error();
  reader.boolean("schedule", request.want_schedule);
  reader.boolean("input", request.want_input);
  if (!reader.ok())
    return makeError(reader.error());
  return request;
}

// The changes as JSON text: a 2k-op module has about as many, which
// nlohmann would build as one object and four members each.
std::string changesJson(const std::vector<LineChange> &changes) {
  std::string out;
  JsonWriter writer(out);
  writer.beginArray();
  for (const LineChange &change : changes)
    writer.beginObject()
        .field("line", int64_t(change.line))
        .field("from", int64_t(change.from))
        .field("to", int64_t(change.to))
        .field("inserted", change.inserted)
        .endObject();
  writer.endArray();
  return out;
}

std::string playgroundReply(std::string_view text,
                            std::string_view options_json) {
  auto start = std::chrono::steady_clock::now();
  Result<Request> read =
      readRequest(options_json, detail::fields::kPlaygroundOptions);
  if (!read)
    return detail::errorReply(read.error().message);
  const Request &request = *read;
  const std::vector<std::string> &flags = request.flags;

  json reply = {{"ok", false},
                {"stage", "parse"},
                {"pipeline", request.pipeline},
                {"flags", flags},
                {"input", ""},
                {"output", ""},
                {"diagnostics", json::array()}};
  DiagnosticEngine diags;
  LoadedModule loaded = loadModule(text, diags);
  std::unique_ptr<Module> module = std::move(loaded.module);
  json timings = json::object();
  auto settle = [&](const char *stage) {
    reply["stage"] = stage;
    reply["diagnostics"] = detail::diagnosticsJson(diags.diagnostics(), text);
    timings["total"] = msSince(start);
    reply["timings_ms"] = timings;
  };
  auto finish = [&](const char *stage) {
    settle(stage);
    return dumpReply(reply);
  };
  timings["parse_verify"] = msSince(start);
  if (!module)
    return finish(loaded.failed_stage == "parse" ? "parse" : "verify");
  // Printed before the GSPMD import: the input as the user wrote it.
  std::string input = printModule(*module);
  if (request.want_input)
    reply["input"] = input;
  bool gspmd = false;
  if (!importGspmdForm(*module, diags, gspmd) || diags.hasErrors())
    return finish("import");
  reply["input_form"] = gspmd ? "gspmd" : "shardy";
  if (Status ran = detail::runFlags(*module, flags, diags); !ran) {
    reply["error"] = ran.error().message;
    return finish("propagate");
  }
  std::string output = printModule(*module);
  const std::string changes = changesJson(changedSpans(input, output));
  reply["output"] = std::move(output);
  timings["propagate"] = msSince(start);
  std::string schedule;
  if (request.want_schedule) {
    schedule = scheduleModule(*module, isLowered(request.pipeline),
                              request.schedule, text);
    timings["schedule"] = msSince(start);
  }
  reply["ok"] = true;
  settle("done");
  if (schedule.empty())
    return dumpReplyWith(reply, {{"changes", changes}});
  return dumpReplyWith(reply, {{"changes", changes}, {"schedule", schedule}});
}

std::string scheduleReply(std::string_view text,
                          std::string_view options_json) {
  Result<Request> read =
      readRequest(options_json, detail::fields::kScheduleOptions);
  if (!read)
    return detail::errorReply(read.error().message);
  const Request &request = *read;
  const std::vector<std::string> &flags = request.flags;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = detail::parseVerified(text, diags);
  if (!module)
    return dumpReply(
        detail::failureReply("invalid module", diags.diagnostics(), text));
  if (Status ran = detail::runFlags(*module, flags, diags); !ran)
    return dumpReply(
        detail::failureReply(ran.error().message, diags.diagnostics(), text));
  bool lowered = request.pipeline == "none" || isLowered(request.pipeline);
  return scheduleModule(*module, lowered, request.schedule, text);
}

} // namespace

std::string playgroundJson(std::string_view text,
                           std::string_view options_json) {
  return guarded([&] { return playgroundReply(text, options_json); });
}

std::string scheduleJson(std::string_view text, std::string_view options_json) {
  return guarded([&] { return scheduleReply(text, options_json); });
}

std::string shardingReportApiJson(std::string_view text) {
  return guarded([&] { return shardingReportJson(shardingReport(text)); });
}

} // namespace shardlab::api
