// -sdy-export-pipeline: the export passes in Shardy's addExportPipeline
// order, each looked up in the pass registry by its flag. The Shardy
// partitioner part (verify-unreduced-axes, insert-explicit-reshards and, with
// `enable-insert-explicit-collectives`, reshard-to-collectives between the
// two label-restricted canonicalizations) runs unless
// `avoid-export-for-partitioning`.
#include "export_passes.h"
#include "passes/canonicalize.h"
#include "passes/pass_utils.h"
#include "shardlab/passes/pass_manager.h"

namespace shardlab {

namespace {

// Runs the registered pass `flag` through the pass runner.
bool runPass(std::string_view flag, Module &module, DiagnosticEngine &diags,
             const RawPassOptions &options = {}) {
  return runNestedPass(module, flag, diags, options);
}

bool runAll(const std::vector<std::string_view> &flags, Module &module,
            DiagnosticEngine &diags) {
  for (std::string_view flag : flags)
    if (!runPass(flag, module, diags))
      return false;
  return true;
}

bool runPartitioner(Module &module, const PassOptions &options,
                    DiagnosticEngine &diags) {
  bool collectives = options.flag("enable-insert-explicit-collectives");
  RawPassOptions insert{
      {"enable-full-version", collectives ? "true" : "false"}};
  if (!runPass("sdy-verify-unreduced-axes", module, diags) ||
      !runPass("sdy-insert-explicit-reshards", module, diags, insert))
    return false;
  if (collectives) {
    {
      PassTimingScope scope(module, "canonicalize (reshard patterns)");
      runCanonicalizer(module, kLabelReshard);
    }
    if (!runPass("sdy-reshard-to-collectives", module, diags))
      return false;
  }
  {
    PassTimingScope scope(module, "canonicalize (collective patterns)");
    runCanonicalizer(module, kLabelCollective);
  }
  if (options.flag("remove-all-gather-reduce-scatter-for-cmv1"))
    return runPass("sdy-remove-all-gather-reduce-scatter-for-cmv1", module,
                   diags);
  return true;
}

} // namespace

bool exportPipelinePass(Module &module, const PassOptions &options,
                        DiagnosticEngine &diags) {
  bool avoid = options.flag("avoid-export-for-partitioning");
  if (!runAll({"sdy-constant-or-scalar-merger", "sdy-sink-data-flow-edges"},
              module, diags))
    return false;
  if (!avoid && !runAll({"sdy-remove-sharding-groups",
                         "sdy-sharding-constraint-to-reshard"},
                        module, diags))
    return false;
  if (options.flag("update-non-divisible-input-output-shardings") &&
      !runAll({"sdy-update-non-divisible-input-output-shardings",
               "sdy-remove-sub-axes-in-input-output-shardings"},
              module, diags))
    return false;
  if (!runPass("sdy-close-shardings", module, diags))
    return false;
  if (!avoid && !runPartitioner(module, options, diags))
    return false;
  if ((options.flag("dump-propagation-edges") ||
       options.flag("dump-sharding-origins")) &&
      !runPass("sdy-remove-propagation-debug-info", module, diags))
    return false;
  if (!options.flag("keep-sharding-rules") &&
      !runPass("sdy-drop-sharding-rules", module, diags))
    return false;
  if (!avoid && options.flag("inline-meshes"))
    return runPass("sdy-inline-meshes", module, diags);
  return true;
}

} // namespace shardlab
