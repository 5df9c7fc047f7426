// Exports of a schedule: the JSON report (totals, per-kind communication,
// memory, and `ops` with start/end on their streams and dependencies), a
// Chrome trace event file (one track for compute, one per collective
// stream, a memory counter; loads in Perfetto) and a text summary. The JSON
// is written as it is produced (no tree first: a 1M-op report was 6 GB as
// a nlohmann tree).
#pragma once

#include "shardlab/schedule/program.h"
#include "shardlab/schedule/scheduler.h"

#include <string>
#include <vector>

namespace shardlab::schedule {

/// {"step_time_us", "compute_us", "comm_us", "exposed_comm_us",
///  "results_only_comm_us" (of it, collectives only the results read),
///  "contention_us" (what kernels lost running beside transfers),
///  "serial_us", "lower_bound_us", "critical_path_us", "forward_sim_us",
///  "peak_memory_bytes", "overlap_limit", "per_kind_limits": {kind: n},
///  "memory_limit": {"limit_bytes", "initial_limit_bytes", "reruns",
///  "max_reruns", "over_limit", "attempts": [{"limit_bytes",
///  "peak_live_bytes", "step_time_us"}]}, "per_kind": {...},
///  "topology": {...}, "assumptions": [...], "memory_curve": [[us, bytes]],
///  "ops": [{"name", "kind": "compute"|"collective", "stream", "start_us",
///  "end_us", "deps": [indices], ...}]}.
std::string reportJson(const Program &program, const Schedule &schedule);

/// Chrome trace event JSON ({"traceEvents": [...]}, µs timestamps).
std::string chromeTraceJson(const Program &program, const Schedule &schedule);

/// A few lines for the terminal.
std::string summaryText(const Program &program, const Schedule &schedule);

/// A temporary live at the peak, named by the op that defines it (as in
/// the report's `ops`, e.g. "stablehlo.dot_general@12/stablehlo.while@9#0").
struct NamedBuffer {
  std::string name;
  int64_t line = 0;
  int64_t bytes = 0;
};

/// The `most` largest temporaries live at `schedule`'s peak, largest first.
std::vector<NamedBuffer> largestLive(const Program &program,
                                     const Schedule &schedule, size_t most);

} // namespace shardlab::schedule
