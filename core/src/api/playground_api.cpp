// The playground's per-edit call and the schedule: parse + verify, the
// chosen propagation, then (on the same module) explicit collectives and
// the latency-hiding schedule with the cost model.
#include "shardlab/api/playground_api.h"

#include "guard.h"
#include "playground_internal.h"
#include "shardlab/api/sharding_report.h"
#include "shardlab/cost/hardware.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/schedule/report.h"
#include "shardlab/text/text.h"
#include "shardlab/verify/verifier.h"

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

/// Schedule options read from the request.
struct ScheduleRequest {
  std::string preset = "h100";
  int64_t gpus_per_node = 0;
  std::string sol_options;
  int64_t overlap_limit = 1;
  int64_t memory_limit = 0;
  std::string estimator = "real";
  bool trace = false;
  bool has_table = false;
  cost::PerfTable table;
};

bool readTable(OptionReader &reader, ScheduleRequest &request,
               std::string &error) {
  const json *table = reader.get("table");
  if (!table)
    return true;
  std::string text =
      table->is_string() ? table->get<std::string>() : dumpReply(*table);
  auto parsed = cost::ParsePerfTable(text);
  if (!parsed.ok()) {
    error = "options.table: " + parsed.error().message;
    return false;
  }
  request.table = std::move(*parsed);
  request.has_table = true;
  return true;
}

bool readSchedule(OptionReader &reader, ScheduleRequest &request,
                  std::string &error) {
  reader.string("preset", request.preset);
  reader.integer("gpus_per_node", request.gpus_per_node, 0, 1 << 20);
  reader.string("sol_options", request.sol_options);
  reader.integer("overlap_limit", request.overlap_limit, 1, 64);
  reader.integer("memory_limit", request.memory_limit);
  reader.string("estimator", request.estimator);
  if (const json *trace = reader.get("trace"))
    request.trace = trace->is_boolean() && trace->get<bool>();
  if (!reader.ok()) {
    error = reader.error();
    return false;
  }
  if (request.estimator != "real" && request.estimator != "approximate") {
    error = "options.estimator: expected \"real\" or \"approximate\"";
    return false;
  }
  return readTable(reader, request, error);
}

bool programOptions(const ScheduleRequest &request,
                    schedule::ProgramOptions &options, std::string &error) {
  auto hw = cost::FindHardwarePreset(request.preset);
  if (!hw.ok()) {
    error = "options.preset: " + hw.error().message;
    return false;
  }
  options.hardware = *hw;
  options.estimator = request.estimator == "approximate"
                          ? schedule::EstimatorMode::kApproximate
                          : schedule::EstimatorMode::kReal;
  options.sol = cost::SolPlatformDefaults(hw->device_name);
  options.sol.gpus_per_node =
      request.gpus_per_node > 0 ? request.gpus_per_node : hw->gpus_per_node;
  auto sol = cost::ApplySolOptions(options.sol, request.sol_options);
  if (!sol.ok()) {
    error = "options.sol_options: " + sol.error().message;
    return false;
  }
  options.sol = *sol;
  options.table = request.has_table ? &request.table : nullptr;
  return true;
}

/// Lowers `module` (already propagated) to collectives unless it has them,
/// then builds and schedules the program. Returns the reply's fields.
json scheduleModule(Module &module, bool lowered,
                    const ScheduleRequest &request) {
  DiagnosticEngine diags;
  std::string error;
  // The export pipeline with explicit collectives, as the "explicit"
  // playground pipeline runs it (it also all-reduces sharded reductions).
  if (!lowered && !detail::runFlags(module, {pipelineFlags("explicit").back()},
                                    diags, error))
    return detail::failureReply(error, diags.diagnostics());
  json reply = {{"ok", false}, {"explicit_module", printModule(module)}};
  schedule::ProgramOptions options;
  if (!programOptions(request, options, error))
    return detail::failureReply(error, {});
  schedule::ProgramResult program = schedule::buildProgram(module, options);
  if (!program.ok)
    return detail::failureReply(program.error, {});
  schedule::SchedulerConfig config;
  config.overlap_limit = static_cast<int>(request.overlap_limit);
  if (request.memory_limit > 0)
    config.memory_limit_bytes = request.memory_limit;
  schedule::ScheduleResult scheduled =
      schedule::scheduleGraph(program.program.graph, config);
  if (!scheduled.ok)
    return detail::failureReply(scheduled.error, {});
  reply["ok"] = true;
  reply["report"] = detail::parseJson(
      schedule::reportJson(program.program, scheduled.schedule));
  if (request.trace)
    reply["trace"] = detail::parseJson(
        schedule::chromeTraceJson(program.program, scheduled.schedule));
  return reply;
}

bool isExplicit(const std::vector<std::string> &flags) {
  return flags.size() > 1;
}

std::string playgroundReply(std::string_view text,
                            std::string_view options_json) {
  auto start = std::chrono::steady_clock::now();
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return detail::errorReply("options: expected a JSON object");
  OptionReader reader(options);
  std::vector<std::string> flags;
  std::string pipeline, error;
  ScheduleRequest request;
  if (!detail::pipelineOption(reader, flags, pipeline, error) ||
      !readSchedule(reader, request, error))
    return detail::errorReply(error);
  const json *want = reader.get("schedule");
  bool want_schedule = !want || !want->is_boolean() || want->get<bool>();

  json reply = {{"ok", false},
                {"stage", "parse"},
                {"pipeline", pipeline},
                {"flags", flags},
                {"input", ""},
                {"output", ""},
                {"diagnostics", json::array()}};
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(text, diags);
  json timings = json::object();
  auto finish = [&](const char *stage) {
    reply["stage"] = stage;
    reply["diagnostics"] = detail::diagnosticsJson(diags.diagnostics());
    timings["total"] = msSince(start);
    reply["timings_ms"] = timings;
    return dumpReply(reply);
  };
  if (!module || diags.hasErrors())
    return finish("parse");
  reply["input"] = printModule(*module);
  verifyModule(*module, diags);
  timings["parse_verify"] = msSince(start);
  if (diags.hasErrors())
    return finish("verify");
  if (!detail::runFlags(*module, flags, diags, error)) {
    reply["error"] = error;
    return finish("propagate");
  }
  reply["output"] = printModule(*module);
  timings["propagate"] = msSince(start);
  if (want_schedule) {
    reply["schedule"] = scheduleModule(*module, isExplicit(flags), request);
    timings["schedule"] = msSince(start);
  }
  reply["ok"] = true;
  return finish("done");
}

std::string scheduleReply(std::string_view text,
                          std::string_view options_json) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return detail::errorReply("options: expected a JSON object");
  OptionReader reader(options);
  std::vector<std::string> flags;
  std::string pipeline, error;
  ScheduleRequest request;
  if (!detail::pipelineOption(reader, flags, pipeline, error) ||
      !readSchedule(reader, request, error))
    return detail::errorReply(error);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = detail::parseVerified(text, diags);
  if (!module)
    return dumpReply(
        detail::failureReply("invalid module", diags.diagnostics()));
  if (!detail::runFlags(*module, flags, diags, error))
    return dumpReply(detail::failureReply(error, diags.diagnostics()));
  bool lowered = pipeline == "none" || isExplicit(flags);
  return dumpReply(scheduleModule(*module, lowered, request));
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
