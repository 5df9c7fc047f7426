// The JSON entry points behind the browser playground (and the WASM
// package): one call per edit that verifies, propagates with a chosen
// pipeline and estimates the schedule, and per-selection calls for the
// teaching views (factor table of an op, device layout of a value, the
// propagation trace). Same conventions as api.h: text/JSON in, one JSON
// object out with "ok", errors as values, nothing kept between calls
// unless the caller passes a ViewCache.
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

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::api {

namespace detail {
struct BeforeAfter;
}

/// The module the selection views (factor table, value layout) last read,
/// as written and after its pipeline, kept for the next such call on the
/// same text and pipeline: moving the cursor in the playground then costs
/// no parse and no propagation. Whoever makes the calls owns one (the WASM
/// binding keeps one per instance); it holds one module pair at a time.
/// Not thread-safe.
class ViewCache {
public:
  ViewCache();
  ~ViewCache();
  ViewCache(const ViewCache &) = delete;
  ViewCache &operator=(const ViewCache &) = delete;

  /// The pair stored under `key`, or null.
  std::shared_ptr<detail::BeforeAfter> find(const std::string &key) const;
  void store(std::string key, std::shared_ptr<detail::BeforeAfter> value);

private:
  std::string key_;
  std::shared_ptr<detail::BeforeAfter> value_;
};

/// The shardlab-opt flags of a playground pipeline name; empty when the
/// name is unknown.
std::vector<std::string> pipelineFlags(std::string_view pipeline);

/// playground.schema.json: everything the playground redraws after an
/// edit (diagnostics, the module after the pipeline, the schedule).
std::string playgroundJson(std::string_view text,
                           std::string_view options_json);

/// schedule.schema.json: the estimated schedule of a module ("pipeline":
/// "none" when it already has explicit collectives).
std::string scheduleJson(std::string_view text, std::string_view options_json);

/// sharding-report.schema.json: the sharding report (sharding_report.h).
std::string shardingReportApiJson(std::string_view text);

/// op-factors.schema.json: the factor table of the op at {"line",
/// "column"}, before and after {"pipeline"}.
/// With `cache`, the modules of the last call on the same text and pipeline
/// are reused (see ViewCache).
std::string opFactorsJson(std::string_view text, std::string_view options_json,
                          ViewCache *cache = nullptr);

/// value-layout.schema.json: which shard each device holds of the value at
/// {"line", "column"}, after {"pipeline"} (or before, "before": true).
std::string valueLayoutJson(std::string_view text,
                            std::string_view options_json,
                            ViewCache *cache = nullptr);

/// propagation-trace.schema.json: what propagation decided, in the
/// driver's order (propagation/trace.h). The pipelines ("pipeline",
/// "explicit") trace their propagation pass, user priorities, on the
/// module as written.
std::string propagationTraceJson(std::string_view text,
                                 std::string_view options_json);

/// dataflow-graph.schema.json: the entry function after {"pipeline"} as a
/// graph (ops as nodes, values as edges with type and sharding, collectives
/// marked), for the playground's Graph view.
std::string dataflowGraphJson(std::string_view text,
                              std::string_view options_json,
                              ViewCache *cache = nullptr);

} // namespace shardlab::api
