// Reading a request's schedule settings (see schedule_request.h).
#include "schedule_request.h"

#include <algorithm>

namespace shardlab::api::detail {
namespace {

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

} // namespace

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
  reader.boolean("fusion", request.target.fusion);
  reader.boolean("pipeline_collectives", request.target.pipeline_collectives);
  reader.boolean("stream_per_link", request.target.stream_per_link);
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

} // namespace shardlab::api::detail
