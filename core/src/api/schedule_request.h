// Internal to the API: the schedule settings of a request (the fields of
// ScheduleSettings in schedule.schema.json, shardlab-schedule's flags) and
// the pipeline options they give. Shared by schedule, playground,
// compareStrategies and suggestShardings.
#pragma once

#include "json_options.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/schedule/pipeline.h"
#include "shardlab/support/result.h"

#include <array>
#include <string>

namespace shardlab::api::detail {

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

/// Reads the ScheduleSettings fields into `request`.
Status readSchedule(OptionReader &reader, ScheduleRequest &request);

/// The same defaults and overrides as shardlab-schedule's flags. The
/// result points into `request.table`: keep the request alive.
Result<schedule::PipelineOptions>
pipelineOptions(const ScheduleRequest &request);

} // namespace shardlab::api::detail
