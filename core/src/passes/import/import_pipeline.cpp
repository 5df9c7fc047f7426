// -sdy-import-pipeline in Shardy's order (import_pipeline.cc). Every step
// goes through the pass runner, so a step that has not landed reports
// itself as not implemented instead of being skipped silently.
#include "import_passes.h"
#include "shardlab/passes/pass_manager.h"

namespace shardlab {

bool importPipeline(Module &module, const PassOptions &options,
                    DiagnosticEngine &diags) {
  std::vector<std::string_view> steps = {
      "symbol-dce", "sdy-lift-inlined-meshes", "sdy-remove-size-one-axes",
      "sdy-propagate-sharding-from-func-to-call",
      "sdy-constant-or-scalar-splitter"};
  // Shardy's PropagationOptions::enableExplicitGatherScatterBatching (off by
  // default; no registered Shardy pipeline option sets it, shardlab's does).
  if (options.flag("enable-explicit-gather-scatter-batching"))
    steps.push_back("sdy-explicit-gather-scatter-batching");
  for (std::string_view flag :
       {"symbol-dce", "sdy-manual-axes-cleanup", "sdy-add-data-flow-edges"})
    steps.push_back(flag);
  for (std::string_view flag : steps)
    if (!runNestedPass(module, flag, diags))
      return false;
  if (!options.flag("dedup-functions-fully"))
    return true;
  RawPassOptions debug = options.given();
  debug.erase("dedup-functions-fully");
  debug.erase("enable-explicit-gather-scatter-batching");
  return runNestedPass(module, "sdy-apply-sharding-constraints", diags,
                       debug) &&
         runNestedPass(module, "sdy-sharding-group-import", diags);
}

} // namespace shardlab
