// The JSON entry points behind the browser playground (and the WASM
// package): one call per edit that verifies, propagates with a chosen
// pipeline and estimates the schedule, and per-selection calls for the
// teaching views (factor table of an op, device layout of a value, the
// propagation trace). Same conventions as api.h: text/JSON in, one JSON
// object out with "ok", errors as values, nothing kept between calls.
//
// Values and ops are picked by a source position {"line", "column"}
// (1-based) in the input text: the op whose location is on that line, and
// for values the result or block argument defined nearest before the
// column on that line.
//
// "pipeline" names the propagation the playground offers:
//   "basic" | "aggressive" | "op-priority" | "user-priority" |
//   "pipeline" (-sdy-propagation-pipeline, the default) |
//   "explicit" (the pipeline, then the export pipeline with explicit
//   collectives).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardlab::api {

/// The shardlab-opt flags of a playground pipeline name; empty when the
/// name is unknown.
std::vector<std::string> pipelineFlags(std::string_view pipeline);

/// Everything the playground redraws after an edit. `options_json`:
/// {"pipeline", "schedule": bool (default true), "trace": bool (Chrome
///  trace too, default false), plus the schedule options of scheduleJson}.
/// Returns {"ok", "stage": "parse"|"verify"|"propagate"|"schedule"|"done",
///  "diagnostics", "input" (the input printed), "output" (after the
///  pipeline), "flags", "schedule": {"ok", "error", "explicit_module",
///  "report", "trace"} (when asked), "timings_ms": {...}}.
std::string playgroundJson(std::string_view text,
                           std::string_view options_json);

/// The estimated schedule of a module. `options_json`: {"pipeline"
///  (default "pipeline"; "none": the module already has explicit
///  collectives), "preset": "h100", "gpus_per_node" (0: the preset's),
///  "sol_options": "k=v,...", "overlap_limit": 1, "memory_limit": bytes,
///  "estimator": "real"|"approximate", "table": shardlab table (object or
///  JSON text, as loadTable returns it), "trace": bool}.
/// Returns {"ok", "error", "diagnostics", "explicit_module", "report":
///  <schedule report>, "trace": <Chrome trace> (when asked)}.
std::string scheduleJson(std::string_view text, std::string_view options_json);

/// The sharding report (see sharding_report.h) as an API reply.
std::string shardingReportApiJson(std::string_view text);

/// The factor table of the op at {"line", "column"} before and after
/// {"pipeline"}: {"ok", "op", "line", "mesh", "factors": [{"index",
///  "symbol", "size", "kind"}], "rows": [{"tensor": "operand 0" | "result
///  0", "dims": [[factor indices]], "before": {...}, "after": {...}}]} where
///  a row state is {"factors": [{"axes": [...], "present", "closed",
///  "overflow": [...]}], "replicated": [...], "unreduced": [...],
///  "sharding": text}.
std::string opFactorsJson(std::string_view text, std::string_view options_json);

/// The layout of the value at {"line", "column"} after {"pipeline"} (or
/// before it with "before": true): {"ok", "value": {"line", "column",
///  "kind": "argument"|"result", "index"}, "op", "sharding", "shape",
///  "local_shape", "mesh": {"name", "axes": [{"name", "size"}],
///  "device_ids"}, "dims": [{"axes", "shards"}], "devices": [{"id",
///  "coords", "shard": [index per dim], "offsets", "sizes"}]}.
std::string valueLayoutJson(std::string_view text,
                            std::string_view options_json);

/// What propagation decided, in the driver's order (propagation/trace.h):
/// {"ok", "pipeline", "exact": true, "order": "decision", "seeds", "values"
///  (as traceToJson writes them), "steps": [{"index" (Shardy's step-N),
///  "kind", "op", "line", "column", "strategy", "user_priority",
///  "op_priority_level", "operands", "results": [printed names],
///  "decisions": [{"axis", "factor", "symbol", "target": "result 0",
///  "source": "operand 1", "priority"}], "group_copies": count}]}. The
/// pipelines ("pipeline", "explicit") trace their propagation pass, user
/// priorities, on the module as written.
std::string propagationTraceJson(std::string_view text,
                                 std::string_view options_json);

} // namespace shardlab::api
