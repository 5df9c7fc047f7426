// The playground's per-edit call and the schedule: parse + verify, the
// chosen propagation, then (on the same module) explicit collectives and
// the latency-hiding schedule with the cost model.
#include "shardlab/api/playground_api.h"
#include "passes/xla_support.h"

#include "guard.h"
#include "playground_internal.h"
#include "request_fields.h"
#include "shardlab/api/sharding_report.h"
#include "shardlab/cost/hardware.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/schedule/pipeline.h"
#include "shardlab/schedule/report.h"
#include "shardlab/text/text.h"

#include <algorithm>
#include <array>
#include <chrono>

namespace shardlab::api {
namespace {

using detail::dumpReply;
using detail::guarded;
using detail::json;
using detail::OptionReader;

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Schedule options read from the request: shardlab-schedule's flags.
struct ScheduleRequest {
  schedule::TargetOptions target;
  int64_t overlap_limit = 1;
  int64_t memory_limit = 0;   ///< 0: XLA's rule from the device memory
  int64_t device_memory = -1; ///< -1: the preset's; 0: no memory limit
  int64_t reruns = 1;
  std::array<int64_t, schedule::kNumCollectiveKinds> kind_limits{};
  std::string estimator = "real";
  bool trace = false;
  cost::PerfTable table;
  bool has_table = false;
};

Status readTable(OptionReader &reader, ScheduleRequest &request) {
  const json *table = reader.get("table");
  if (!table)
    return success();
  std::string text =
      table->is_string() ? table->get<std::string>() : dumpReply(*table);
  auto parsed = cost::parsePerfTable(text);
  if (!parsed.ok())
    return makeError("options.table: " + parsed.error().message);
  request.table = std::move(*parsed);
  request.has_table = true;
  return success();
}

// `all_gather_limit` and the other per-kind in-flight limits.
void readKindLimits(OptionReader &reader, ScheduleRequest &request) {
  for (int k = 1; k < schedule::kNumCollectiveKinds; ++k) {
    std::string key(schedule::toString(schedule::CollectiveKind(k)));
    std::replace(key.begin(), key.end(), '-', '_');
    key += "_limit";
    reader.integer(key.c_str(), request.kind_limits[size_t(k)], 1, 1023);
  }
}

Status readSchedule(OptionReader &reader, ScheduleRequest &request) {
  reader.string("preset", request.target.preset);
  reader.integer("gpus_per_node", request.target.gpus_per_node, 0, 1 << 20);
  reader.string("sol_options", request.target.sol_options);
  reader.integer("overlap_limit", request.overlap_limit, 1, 64);
  reader.integer("while_trip_count", request.target.while_trip_count, 0,
                 1000000);
  reader.integer("memory_limit", request.memory_limit);
  reader.integer("device_memory", request.device_memory, 0);
  reader.integer("reruns", request.reruns, 0, 999);
  readKindLimits(reader, request);
  reader.string("estimator", request.estimator);
  if (const json *trace = reader.get("trace"))
    request.trace = trace->is_boolean() && trace->get<bool>();
  if (!reader.ok())
    return makeError(reader.error());
  if (request.estimator != "real" && request.estimator != "approximate")
    return makeError("options.estimator: expected \"real\" or \"approximate\"");
  request.target.approximate = request.estimator == "approximate";
  return readTable(reader, request);
}

// The same defaults and overrides as shardlab-schedule's flags.
Result<schedule::PipelineOptions>
pipelineOptions(const ScheduleRequest &request) {
  // The table pointer is taken here, not stored: a copied request would
  // otherwise point into the original.
  schedule::TargetOptions target = request.target;
  target.table = request.has_table ? &request.table : nullptr;
  Result<schedule::PipelineOptions> defaults =
      schedule::pipelineOptionsFor(target);
  if (!defaults)
    return makeError("options." + defaults.error().message);
  schedule::PipelineOptions options = std::move(*defaults);
  options.scheduler.overlap_limit = static_cast<int>(request.overlap_limit);
  for (size_t k = 0; k < request.kind_limits.size(); ++k)
    options.scheduler.kind_limits[k] = static_cast<int>(request.kind_limits[k]);
  if (request.memory_limit > 0)
    options.scheduler.memory_limit_bytes = request.memory_limit;
  options.scheduler.reruns = static_cast<int>(request.reruns);
  if (request.device_memory >= 0)
    options.device_memory_bytes = request.device_memory;
  return options;
}

/// Lowers `module` (already propagated) to collectives unless it has them,
/// then builds and schedules the program. Returns the reply's fields.
json scheduleModule(Module &module, bool lowered,
                    const ScheduleRequest &request, std::string_view text) {
  DiagnosticEngine diags;
  // The export pipeline with explicit collectives: the last step of the
  // "explicit" pipeline (it also all-reduces sharded reductions).
  if (!lowered)
    if (Status ran =
            detail::runFlags(module, {pipelineFlags("explicit").back()}, diags);
        !ran)
      return detail::failureReply(ran.error().message, diags.diagnostics(),
                                  text);
  json reply = {{"ok", false}, {"explicit_module", printModule(module)}};
  Result<schedule::PipelineOptions> options = pipelineOptions(request);
  if (!options)
    return detail::failureReply(options.error().message, {}, text);
  schedule::PipelineResult scheduled =
      schedule::scheduleLowered(module, *options);
  if (!scheduled.ok)
    return detail::failureReply(scheduled.error, scheduled.diagnostics, text);
  reply["ok"] = true;
  reply["report"] =
      schedule::reportValue(scheduled.program, scheduled.schedule);
  if (request.trace)
    reply["trace"] =
        schedule::chromeTraceValue(scheduled.program, scheduled.schedule);
  return reply;
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
  const json *want = reader.get("schedule");
  request.want_schedule = !want || !want->is_boolean() || want->get<bool>();
  return request;
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
  auto finish = [&](const char *stage) {
    reply["stage"] = stage;
    reply["diagnostics"] = detail::diagnosticsJson(diags.diagnostics(), text);
    timings["total"] = msSince(start);
    reply["timings_ms"] = timings;
    return dumpReply(reply);
  };
  timings["parse_verify"] = msSince(start);
  if (!module)
    return finish(loaded.failed_stage == "parse" ? "parse" : "verify");
  // Printed before the GSPMD import: the input as the user wrote it.
  reply["input"] = printModule(*module);
  bool gspmd = false;
  if (!importGspmdForm(*module, diags, gspmd) || diags.hasErrors())
    return finish("import");
  reply["input_form"] = gspmd ? "gspmd" : "shardy";
  if (Status ran = detail::runFlags(*module, flags, diags); !ran) {
    reply["error"] = ran.error().message;
    return finish("propagate");
  }
  reply["output"] = printModule(*module);
  timings["propagate"] = msSince(start);
  if (request.want_schedule) {
    reply["schedule"] = scheduleModule(*module, isLowered(request.pipeline),
                                       request.schedule, text);
    timings["schedule"] = msSince(start);
  }
  reply["ok"] = true;
  return finish("done");
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
  return dumpReply(scheduleModule(*module, lowered, request.schedule, text));
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
