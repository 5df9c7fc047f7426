// execute (execute.schema.json): the interpreter behind the JSON API, as
// shardlab-run runs it. Without shardings, the module's entry runs once
// (the global run, on random inputs when it takes arguments) and its
// checks and results come back; with
// "module" or "random:SEED", the partition check runs as well
// (partition_check.h), optionally keeping what every device held before
// and after each collective (the playground's Devices view).
#include "shardlab/api/api.h"

#include "diagnostics_json.h"
#include "guard.h"
#include "request_fields.h"

#include "shardlab/interpreter/interpreter.h"
#include "shardlab/partition_check/partition_check.h"
#include "shardlab/passes/pass_manager.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace shardlab::api {
namespace {

using detail::json;
using interpreter::Tensor;

struct ExecuteOptions {
  partition_check::Options check;
  bool partition = false;
  bool collectives = false;
  int64_t max_elements = 64;
  int64_t max_collectives = 64;
};

json number(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return value;
}

json element(const Tensor &t, int64_t i) {
  if (t.isInteger())
    return t.integer(i);
  if (t.isComplex())
    return json::array({number(t.real(i)), number(t.imag(i))});
  return number(t.real(i));
}

// The order min/max use: integers as integers, reals as doubles (NaN
// skipped); complex tensors have none.
void addRange(const Tensor &t, json &out) {
  if (t.isComplex() || t.size() == 0)
    return;
  if (t.isInteger()) {
    int64_t lo = t.integer(0), hi = lo;
    for (int64_t i = 1; i < t.size(); ++i) {
      lo = std::min(lo, t.integer(i));
      hi = std::max(hi, t.integer(i));
    }
    out["min"] = lo;
    out["max"] = hi;
    return;
  }
  std::optional<double> lo, hi;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = t.real(i);
    if (std::isnan(v))
      continue;
    lo = lo ? std::min(*lo, v) : v;
    hi = hi ? std::max(*hi, v) : v;
  }
  if (lo) {
    out["min"] = number(*lo);
    out["max"] = number(*hi);
  }
}

json tensorJson(const Tensor &t, int64_t max_elements) {
  json values = json::array();
  const int64_t shown = std::min(t.size(), max_elements);
  for (int64_t i = 0; i < shown; ++i)
    values.push_back(element(t, i));
  json out = {{"type", t.type() ? t.type()->text : std::string()},
              {"shape", t.shape()},
              {"elements", t.size()},
              {"values", values}};
  if (shown < t.size())
    out["elided"] = true;
  addRange(t, out);
  return out;
}

json tensorsJson(const std::vector<Tensor> &tensors, int64_t max_elements) {
  json out = json::array();
  for (const Tensor &t : tensors)
    out.push_back(tensorJson(t, max_elements));
  return out;
}

json checksJson(const std::vector<interpreter::CheckResult> &checks) {
  json out = json::array();
  for (const interpreter::CheckResult &c : checks) {
    json check = {{"op", c.op}, {"line", c.line}, {"passed", c.passed}};
    if (!c.detail.empty())
      check["detail"] = c.detail;
    if (c.device >= 0)
      check["device"] = c.device;
    out.push_back(std::move(check));
  }
  return out;
}

json collectiveJson(const interpreter::CollectiveStep &step,
                    int64_t max_elements) {
  json devices = json::array();
  for (size_t l = 0; l < step.devices.size(); ++l)
    devices.push_back({{"id", step.devices[l]},
                       {"before", tensorsJson(step.before[l], max_elements)},
                       {"after", tensorsJson(step.after[l], max_elements)}});
  return {{"op", std::string(step.op->name)},
          {"line", step.op->loc.line},
          {"column", step.op->loc.col},
          {"devices", devices}};
}

// The request's options, or an error naming the field.
Result<ExecuteOptions> readOptions(std::string_view options_json) {
  json request = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!request.is_object())
    return makeError("options: expected a JSON object");
  detail::OptionReader reader(request);
  reader.rejectUnknown(detail::fields::kExecuteRequest);
  ExecuteOptions options;
  reader.string("entry", options.check.entry);
  std::string shardings;
  reader.string("shardings", shardings);
  options.partition = !shardings.empty();
  if (options.partition &&
      !partition_check::readShardingsChoice(shardings, options.check))
    reader.fail("shardings", "\"module\" or \"random:SEED\"");
  reader.integer("devices", options.check.max_devices, 1, 4096);
  reader.boolean("collectives", options.collectives);
  reader.integer("max_elements", options.max_elements, 0, 4096);
  reader.integer("max_collectives", options.max_collectives, 0, 10000);
  reader.boolean("program", options.check.keep_program);
  if (!reader.ok())
    return makeError(reader.error());
  return options;
}

void addGlobalRun(const interpreter::RunResult &run, int64_t max_elements,
                  json &reply) {
  int64_t passed = 0;
  for (const interpreter::CheckResult &c : run.checks)
    passed += c.passed;
  reply["checks"] = checksJson(run.checks);
  reply["checks_passed"] = passed;
  reply["results"] = tensorsJson(run.results, max_elements);
  reply["ops_run"] = run.ops_run;
  reply["elements"] = run.elements;
  if (!run.ok)
    reply["error"] = run.error;
}

std::string globalReply(std::string_view text, const ExecuteOptions &options) {
  DiagnosticEngine diags;
  LoadOptions load;
  load.import_gspmd = true;
  LoadedModule loaded = loadModule(text, diags, load);
  if (!loaded.module)
    return detail::dumpReply(detail::failureReply("the module does not parse",
                                                  diags.diagnostics(), text));
  interpreter::RunOptions run_options;
  run_options.entry = options.check.entry;
  const interpreter::RunResult run =
      partition_check::runGlobally(*loaded.module, run_options);
  json reply = {{"ok", run.ok}};
  addGlobalRun(run, options.max_elements, reply);
  return detail::dumpReply(reply);
}

json outcomeJson(const partition_check::Outcome &out) {
  json outcome = {{"status", partition_check::statusName(out.status)},
                  {"stage", out.stage},
                  {"message", out.message},
                  {"mesh", out.mesh},
                  {"shardings", out.shardings},
                  {"devices", out.devices},
                  {"exact", out.exact},
                  {"checks_passed", out.checks_passed},
                  {"checks_run", out.checks_run}};
  if (!out.program.empty())
    outcome["program"] = out.program;
  return outcome;
}

std::string partitionedReply(std::string_view text, ExecuteOptions options) {
  json collectives = json::array();
  int64_t elided = 0;
  if (options.collectives)
    options.check.on_collective = [&](const interpreter::CollectiveStep &step) {
      if (int64_t(collectives.size()) < options.max_collectives)
        collectives.push_back(collectiveJson(step, options.max_elements));
      else
        ++elided;
    };
  const partition_check::Outcome out =
      partition_check::checkPartitioned(text, options.check);
  if (out.stage == "parse" && out.global.ops_run == 0) {
    // Parse errors come back as diagnostics, as every other method's do.
    DiagnosticEngine diags;
    LoadOptions load;
    load.import_gspmd = true;
    if (!loadModule(text, diags, load).module)
      return detail::dumpReply(detail::failureReply("the module does not parse",
                                                    diags.diagnostics(), text));
  }
  json reply = {{"ok", out.status == partition_check::Status::Match}};
  addGlobalRun(out.global, options.max_elements, reply);
  if (out.global.ok && out.status != partition_check::Status::Match)
    reply["error"] = "partitioned run: " +
                     std::string(partition_check::statusName(out.status)) +
                     (out.stage.empty() ? "" : " at " + out.stage) + ": " +
                     out.message;
  else if (!out.global.ok && out.global.error.empty())
    reply["error"] = out.message;
  reply["partition"] = outcomeJson(out);
  if (options.collectives) {
    reply["collectives"] = std::move(collectives);
    if (elided)
      reply["collectives_elided"] = elided;
  }
  return detail::dumpReply(reply);
}

} // namespace

std::string executeJson(std::string_view text, std::string_view options_json) {
  return detail::guarded([&] {
    Result<ExecuteOptions> options = readOptions(options_json);
    if (!options)
      return detail::errorReply(options.error().message);
    if (!options->partition)
      return globalReply(text, *options);
    return partitionedReply(text, std::move(*options));
  });
}

} // namespace shardlab::api
