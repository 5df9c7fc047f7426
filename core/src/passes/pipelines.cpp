// -sdy-import-pipeline and -sdy-propagation-pipeline in Shardy's order
// (import_pipeline.cc, propagation_pipeline.cc). Every step goes through the
// pass registry, so a pass that has not landed yet reports itself as not
// implemented instead of being skipped silently.
#include "shardlab/passes/call_graph_passes.h"
#include "shardlab/passes/pass_utils.h"

#include <string>
#include <utility>

namespace shardlab {

namespace {

// One step: a registered flag and its options.
using Step = std::pair<std::string_view, PassOptions>;

bool runSteps(Module &module, const std::vector<Step> &steps,
              DiagnosticEngine &diags) {
  for (const Step &step : steps) {
    const PassInfo *pass = lookupPass(step.first);
    if (!pass) {
      diags.error(module.op().loc,
                  "pass '" + std::string(step.first) + "' is not registered");
      return false;
    }
    if (!runRegisteredPass(*pass, module, step.second, diags) ||
        diags.hasErrors())
      return false;
  }
  return true;
}

// Shardy's PropagationOptions::enableExplicitGatherScatterBatching (off by
// default; no registered Shardy pipeline option sets it, shardlab's does).
bool gatherScatterBatching(const PassOptions &options) {
  return optionIsTrue(options, "enable-explicit-gather-scatter-batching");
}

// `debug`: the debug options apply-sharding-constraints reads.
std::vector<Step> importSteps(bool dedup, const PassOptions &debug,
                              bool batching) {
  std::vector<Step> steps = {{"symbol-dce", {}},
                             {"sdy-lift-inlined-meshes", {}},
                             {"sdy-remove-size-one-axes", {}},
                             {"sdy-propagate-sharding-from-func-to-call", {}},
                             {"sdy-constant-or-scalar-splitter", {}}};
  if (batching)
    steps.push_back({"sdy-explicit-gather-scatter-batching", {}});
  for (std::string_view flag :
       {"symbol-dce", "sdy-manual-axes-cleanup", "sdy-add-data-flow-edges"})
    steps.push_back({flag, {}});
  if (dedup) {
    steps.push_back({"sdy-apply-sharding-constraints", debug});
    steps.push_back({"sdy-sharding-group-import", {}});
  }
  return steps;
}

// The entries of `options` named in `keys`, renamed to `as[i]` when given.
PassOptions forwarded(const PassOptions &options,
                      const std::vector<std::string> &keys,
                      const std::vector<std::string> &as = {}) {
  PassOptions out;
  for (size_t i = 0; i < keys.size(); ++i)
    if (auto it = options.find(keys[i]); it != options.end())
      out[i < as.size() ? as[i] : keys[i]] = it->second;
  return out;
}

// The export pipeline's options from the propagation pipeline's, as Shardy's
// populateExportOptions maps them (meshes stay named unless asked).
PassOptions exportOptions(const PassOptions &options, bool dedup) {
  PassOptions out =
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
  out["inline-meshes"] =
      optionIsTrue(options, "inline-meshes") ? "true" : "false";
  out["avoid-reshards-on-calls"] = dedup ? "true" : "false";
  return out;
}

// Shardy registers only dedup-functions-fully on the pipeline flag; the
// other PropagationOptions are accepted too and reach the passes that read
// them, so a user can ask the whole pipeline for debug attributes.
std::vector<Step> propagationSteps(const PassOptions &options) {
  bool dedup = optionIsTrue(options, "dedup-functions-fully");
  PassOptions debug = forwarded(
      options, {"debug-sharding-origins", "debug-propagation-edge-sharding"});
  std::vector<Step> steps =
      importSteps(dedup, debug, gatherScatterBatching(options));
  if (dedup) {
    steps.push_back({"sdy-add-func-data-flow-edges", {}});
  } else {
    for (std::string_view flag : {"sdy-flatten-call-graph", "symbol-dce",
                                  "sdy-import-func-calls", "symbol-dce"})
      steps.push_back({flag, {}});
    steps.push_back({"sdy-apply-sharding-constraints", debug});
    steps.push_back({"sdy-sharding-group-import", {}});
  }
  steps.push_back({"sdy-pre-order-funcs", {}});
  PassOptions propagate =
      forwarded(options, {"conservative-propagation", "debug-sharding-origins",
                          "debug-propagation-edge-sharding"});
  propagate["keep-sharding-rules"] = "true";
  steps.push_back({"sdy-user-priority-propagate", propagate});
  if (dedup) {
    steps.push_back({"sdy-propagate-to-func-results", {}});
    steps.push_back({"sdy-sink-func-data-flow-edges", {}});
  } else {
    steps.push_back({"sdy-export-named-computations", {}});
    steps.push_back({"sdy-propagate-to-func-results", {}});
  }
  // Shardy adds the unflattening with its default options in both modes.
  steps.push_back({"sdy-unflatten-call-graph", {}});
  steps.push_back({"symbol-dce", {}});
  steps.push_back({"sdy-insert-func-call-reshards", {}});
  steps.push_back({"sdy-export-pipeline", exportOptions(options, dedup)});
  return steps;
}

} // namespace

bool importPipeline(Module &module, const PassOptions &options,
                    DiagnosticEngine &diags) {
  return runSteps(module,
                  importSteps(optionIsTrue(options, "dedup-functions-fully"),
                              {}, gatherScatterBatching(options)),
                  diags);
}

bool propagationPipeline(Module &module, const PassOptions &options,
                         DiagnosticEngine &diags) {
  return runSteps(module, propagationSteps(options), diags);
}

} // namespace shardlab
