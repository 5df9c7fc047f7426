// -sdy-import-pipeline and -sdy-propagation-pipeline in Shardy's order
// (import_pipeline.cc, propagation_pipeline.cc). Every step goes through the
// pass registry, so a pass that has not landed yet reports itself as not
// implemented instead of being skipped silently.
#include "shardlab/passes/call_graph_passes.h"
#include "shardlab/passes/pass_utils.h"

#include <utility>

namespace shardlab {

namespace {

// One step: a registered flag and its options.
using Step = std::pair<std::string_view, PassOptions>;

bool runSteps(Module &module, const std::vector<Step> &steps,
              DiagnosticEngine &diags) {
  for (const Step &step : steps) {
    const PassInfo *pass = lookupPass(step.first);
    if (!pass || !pass->run) {
      diags.error(module.op().loc,
                  "pass '" + std::string(step.first) + "' is not implemented");
      return false;
    }
    if (!pass->run(module, step.second, diags) || diags.hasErrors())
      return false;
  }
  return true;
}

std::vector<Step> importSteps(bool dedup) {
  std::vector<Step> steps = {{"symbol-dce", {}},
                             {"sdy-lift-inlined-meshes", {}},
                             {"sdy-remove-size-one-axes", {}},
                             {"sdy-propagate-sharding-from-func-to-call", {}},
                             {"sdy-constant-or-scalar-splitter", {}},
                             {"symbol-dce", {}},
                             {"sdy-manual-axes-cleanup", {}},
                             {"sdy-add-data-flow-edges", {}}};
  if (dedup) {
    steps.push_back({"sdy-apply-sharding-constraints", {}});
    steps.push_back({"sdy-sharding-group-import", {}});
  }
  return steps;
}

std::vector<Step> propagationSteps(bool dedup) {
  std::vector<Step> steps = importSteps(dedup);
  if (dedup) {
    steps.push_back({"sdy-add-func-data-flow-edges", {}});
  } else {
    for (std::string_view flag :
         {"sdy-flatten-call-graph", "symbol-dce", "sdy-import-func-calls",
          "symbol-dce", "sdy-apply-sharding-constraints",
          "sdy-sharding-group-import"})
      steps.push_back({flag, {}});
  }
  steps.push_back({"sdy-pre-order-funcs", {}});
  steps.push_back(
      {"sdy-user-priority-propagate", {{"keep-sharding-rules", "true"}}});
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
  steps.push_back({"sdy-export-pipeline",
                   {{"inline-meshes", "false"},
                    {"avoid-reshards-on-calls", dedup ? "true" : "false"}}});
  return steps;
}

} // namespace

bool importPipeline(Module &module, const PassOptions &options,
                    DiagnosticEngine &diags) {
  return runSteps(module,
                  importSteps(optionIsTrue(options, "dedup-functions-fully")),
                  diags);
}

bool propagationPipeline(Module &module, const PassOptions &options,
                         DiagnosticEngine &diags) {
  return runSteps(
      module, propagationSteps(optionIsTrue(options, "dedup-functions-fully")),
      diags);
}

} // namespace shardlab
