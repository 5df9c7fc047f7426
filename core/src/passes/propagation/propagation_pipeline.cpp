// -sdy-propagation-pipeline in Shardy's order (propagation_pipeline.cc):
// import, the call-graph handling, user-priority propagation, export. Every
// step goes through the pass runner.
#include "propagation_passes.h"
#include "shardlab/passes/pass_manager.h"

#include <string>

namespace shardlab {

namespace {

// The given options among `keys`, renamed to `as[i]` when given.
RawPassOptions forwarded(const PassOptions &options,
                         const std::vector<std::string> &keys,
                         const std::vector<std::string> &as = {}) {
  RawPassOptions given = options.given(), out;
  for (size_t i = 0; i < keys.size(); ++i)
    if (auto it = given.find(keys[i]); it != given.end())
      out[i < as.size() ? as[i] : keys[i]] = it->second;
  return out;
}

const std::vector<std::string> kDebugOptions = {
    "debug-sharding-origins", "debug-propagation-edge-sharding"};

// The export pipeline's options from the propagation pipeline's, as Shardy's
// populateExportOptions maps them (meshes stay named unless asked).
RawPassOptions exportOptions(const PassOptions &options) {
  RawPassOptions out =
      forwarded(options,
                {"keep-sharding-rules", "avoid-export-for-partitioning",
                 "enable-insert-explicit-collectives",
                 "remove-all-gather-reduce-scatter-for-cmv1",
                 "update-non-divisible-input-output-shardings",
                 "debug-sharding-origins", "debug-propagation-edge-sharding"},
                {"keep-sharding-rules", "avoid-export-for-partitioning",
                 "enable-insert-explicit-collectives",
                 "remove-all-gather-reduce-scatter-for-cmv1",
                 "update-non-divisible-input-output-shardings",
                 "dump-sharding-origins", "dump-propagation-edges"});
  out["inline-meshes"] = options.flag("inline-meshes") ? "true" : "false";
  return out;
}

bool runAll(Module &module, DiagnosticEngine &diags,
            std::initializer_list<std::string_view> flags) {
  for (std::string_view flag : flags)
    if (!runNestedPass(module, flag, diags))
      return false;
  return true;
}

// Flattened call graph (the default): per-call-site copies imported as
// named computations; with dedup-functions-fully, function data-flow edges.
bool importCallGraph(Module &module, const PassOptions &options,
                     DiagnosticEngine &diags) {
  if (options.flag("dedup-functions-fully"))
    return runAll(module, diags, {"sdy-add-func-data-flow-edges"});
  return runAll(module, diags,
                {"sdy-flatten-call-graph", "symbol-dce",
                 "sdy-import-func-calls", "symbol-dce"}) &&
         runNestedPass(module, "sdy-apply-sharding-constraints", diags,
                       forwarded(options, kDebugOptions)) &&
         runAll(module, diags, {"sdy-sharding-group-import"});
}

bool exportCallGraph(Module &module, const PassOptions &options,
                     DiagnosticEngine &diags) {
  bool dedup = options.flag("dedup-functions-fully");
  // Shardy adds the unflattening with its default options in both modes.
  return runAll(module, diags,
                {dedup ? "sdy-propagate-to-func-results"
                       : "sdy-export-named-computations",
                 dedup ? "sdy-sink-func-data-flow-edges"
                       : "sdy-propagate-to-func-results",
                 "sdy-unflatten-call-graph", "symbol-dce",
                 "sdy-insert-func-call-reshards"});
}

} // namespace

// Shardy registers only dedup-functions-fully on the pipeline flag; the
// other PropagationOptions are accepted too and reach the passes that read
// them, so a user can ask the whole pipeline for debug attributes.
bool propagationPipeline(Module &module, const PassOptions &options,
                         DiagnosticEngine &diags) {
  RawPassOptions import = forwarded(
      options,
      {"dedup-functions-fully", "enable-explicit-gather-scatter-batching",
       "debug-sharding-origins", "debug-propagation-edge-sharding"});
  RawPassOptions propagate =
      forwarded(options, {"conservative-propagation", "debug-sharding-origins",
                          "debug-propagation-edge-sharding"});
  propagate["keep-sharding-rules"] = "true";
  return runNestedPass(module, "sdy-import-pipeline", diags, import) &&
         importCallGraph(module, options, diags) &&
         runAll(module, diags, {"sdy-pre-order-funcs"}) &&
         runNestedPass(module, "sdy-user-priority-propagate", diags,
                       propagate) &&
         exportCallGraph(module, options, diags) &&
         runNestedPass(module, "sdy-export-pipeline", diags,
                       exportOptions(options));
}

} // namespace shardlab
