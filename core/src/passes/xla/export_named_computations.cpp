// -xla-sdy-export-named-computations: Shardy's -sdy-export-named-computations
// (each sdy.named_computation becomes a call to a private func tagged
// sdy.original_func_name), plus the out shardings on the func's results,
// as XLA's copy of the pass writes them.
#include "shardlab/passes/call_graph_passes.h"
#include "shardlab/passes/pass_utils.h"
#include "shardlab/passes/xla_passes.h"

namespace shardlab {

bool xlaExportNamedComputationsPass(Module &module, const PassOptions &options,
                                    DiagnosticEngine &diags) {
  if (optionIsTrue(options, "dedup-functions-fully")) {
    diags.error(module.op().loc,
                "-xla-sdy-export-named-computations: option "
                "dedup-functions-fully=true is not implemented yet");
    return false;
  }
  PassOptions with_results = options;
  with_results["func-result-shardings"] = "true";
  return exportNamedComputationsPass(module, with_results, diags);
}

} // namespace shardlab
