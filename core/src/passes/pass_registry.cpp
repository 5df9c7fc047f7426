#include "shardlab/passes/pass_registry.h"

#include "shardlab/passes/call_graph_passes.h"
#include "shardlab/passes/canonicalize.h"
#include "shardlab/passes/explicit_collectives.h"
#include "shardlab/passes/populate_op_sharding_rules.h"
#include "shardlab/passes/propagate_passes.h"
#include "shardlab/passes/sdy_passes.h"
#include "shardlab/passes/xla_passes.h"

#include <cstdio>

namespace shardlab {

const std::vector<PassInfo> &allPasses() {
  // The flags of Shardy's sdy_opt. Passes land issue by issue; a flag with
  // no implementation is reported as such rather than silently ignored.
  static const std::vector<PassInfo> passes = {
      {"canonicalize",
       "Canonicalize operations (reshard and collective patterns)",
       canonicalizePass},
      {"symbol-dce", "Eliminate dead private symbols", symbolDcePass},
      {"sdy-add-data-flow-edges", "Add data-flow edges to region-based ops",
       addDataFlowEdgesPass},
      {"sdy-add-func-data-flow-edges", "Add func data-flow edges",
       addFuncDataFlowEdgesPass},
      {"sdy-aggressive-propagate", "Aggressive sharding propagation",
       runAggressivePropagate},
      {"sdy-apply-sharding-constraints", "Apply sharding constraints",
       applyShardingConstraintsPass},
      {"sdy-basic-propagate", "Basic sharding propagation", runBasicPropagate},
      {"sdy-close-shardings", "Close every sharding", closeShardingsPass},
      {"sdy-constant-or-scalar-merger", "Merge split constants",
       constantOrScalarMergerPass},
      {"sdy-constant-or-scalar-splitter", "Split constants per use",
       constantOrScalarSplitterPass},
      {"sdy-convert-global-to-local", "Convert to local (per-device) shapes"},
      {"sdy-drop-sharding-and-mesh", "Drop shardings and meshes",
       dropShardingAndMeshPass},
      {"sdy-drop-sharding-rules", "Drop sharding rules", dropShardingRulesPass},
      {"sdy-explicit-gather-scatter-batching",
       "Make gather/scatter batching dims explicit",
       explicitGatherScatterBatchingPass},
      {"sdy-export-named-computations", "Export named computations to funcs",
       exportNamedComputationsPass},
      {"sdy-export-pipeline", "Shardy's export pipeline", exportPipelinePass},
      {"sdy-flatten-call-graph", "Flatten the call graph",
       flattenCallGraphPass},
      {"sdy-import-func-calls", "Import func calls as named computations",
       importFuncCallsPass},
      {"sdy-import-pipeline", "Shardy's import pipeline", importPipeline},
      {"sdy-inline-meshes", "Inline meshes into shardings", inlineMeshesPass},
      {"sdy-insert-explicit-reshards", "Insert explicit reshards",
       insertExplicitReshardsPass},
      {"sdy-insert-func-call-reshards", "Insert reshards at func calls",
       insertFuncCallReshardsPass},
      {"sdy-lift-inlined-meshes", "Lift inlined meshes to sdy.mesh symbols",
       liftInlinedMeshesPass},
      {"sdy-manual-axes-cleanup", "Clean up manual axes",
       manualAxesCleanupPass},
      {"sdy-op-priority-propagate", "Op-priority sharding propagation",
       runOpPriorityPropagate},
      {"sdy-pad-for-divisibility", "Pad tensors for divisibility"},
      {"sdy-per-instruction-partitioning", "Per-instruction partitioning"},
      {"sdy-populate-op-sharding-rules", "Attach op sharding rules",
       populateOpShardingRules},
      {"sdy-pre-order-funcs", "Order funcs callee first", preOrderFuncsPass},
      {"sdy-propagate-sharding-from-func-to-call",
       "Propagate func shardings to call sites",
       propagateShardingFromFuncToCallPass},
      {"sdy-propagate-to-func-results", "Propagate shardings to func results",
       propagateToFuncResultsPass},
      {"sdy-propagation-pipeline", "Shardy's propagation pipeline",
       propagationPipeline},
      {"sdy-remove-all-gather-reduce-scatter-for-cmv1",
       "Remove all-gather/reduce-scatter pairs (CMV1)"},
      {"sdy-remove-propagation-debug-info", "Remove propagation debug info",
       removePropagationDebugInfoPass},
      {"sdy-remove-sharding-groups", "Remove sharding groups",
       removeShardingGroupsPass},
      {"sdy-remove-size-one-axes", "Remove mesh axes of size one",
       removeSizeOneAxesPass},
      {"sdy-remove-sub-axes-in-input-output-shardings",
       "Remove sub-axes from input/output shardings",
       removeSubAxesInInputOutputShardingsPass},
      {"sdy-reshard-to-collectives", "Lower reshards to collectives",
       reshardToCollectivesPass},
      {"sdy-resolve-permutation-factors", "Resolve permutation factors"},
      {"sdy-resolve-single-device-sharding", "Resolve single-device shardings"},
      // Shardy's own copy of XLA's round-trip import (its round_trip_import
      // library): the same pipeline under Shardy's flag.
      {"sdy-round-trip-import-pipeline",
       "Import Shardy attributes kept as strings through HLO",
       xlaRoundTripImportPipeline},
      {"sdy-sharding-constraint-to-reshard",
       "Turn sharding constraints into reshards",
       shardingConstraintToReshardPass},
      {"sdy-sharding-group-import", "Import sharding groups",
       shardingGroupImportPass},
      {"sdy-sink-data-flow-edges", "Sink data-flow edges",
       sinkDataFlowEdgesPass},
      {"sdy-sink-func-data-flow-edges", "Sink func data-flow edges",
       sinkFuncDataFlowEdgesPass},
      {"sdy-unflatten-call-graph", "Unflatten the call graph",
       unflattenCallGraphPass},
      {"sdy-update-non-divisible-input-output-shardings",
       "Make input/output shardings divisible",
       updateNonDivisibleInputOutputShardingsPass},
      {"sdy-user-priority-propagate", "User-priority sharding propagation",
       runUserPriorityPropagate},
      {"sdy-verify-unreduced-axes", "Verify unreduced axes",
       verifyUnreducedAxesPass},
      // XLA's Shardy integration (xla/service/spmd/shardy).
      {"xla-sdy-export-named-computations",
       "Named computations to funcs, shardings on arguments and results",
       xlaExportNamedComputationsPass},
      {"xla-sdy-import-constants", "stablehlo.constant to sdy.constant",
       xlaImportConstantsPass},
      {"xla-sdy-import-sdy-custom-calls",
       "Custom calls carrying sdy ops through HLO back to sdy ops",
       xlaImportSdyCustomCallsPass},
      {"xla-sdy-import-shardings",
       "Import GSPMD mhlo.sharding strings into a mesh and sdy.sharding",
       xlaImportShardingsPass},
      {"xla-sdy-mhlo-import-pipeline",
       "Import a module in MHLO with GSPMD shardings into Shardy form",
       xlaMhloImportPipeline},
      {"xla-sdy-round-trip-clone-manual-computation-calls",
       "Clone manual computation bodies called more than once",
       xlaRoundTripCloneManualComputationCallsPass},
      {"xla-sdy-round-trip-export-pipeline",
       "Keep Shardy attributes as strings and custom calls through HLO",
       xlaRoundTripExportPipeline},
      {"xla-sdy-round-trip-import-pipeline",
       "Import Shardy attributes kept as strings through HLO",
       xlaRoundTripImportPipeline},
      {"xla-sdy-round-trip-shard-map-export",
       "sdy.manual_computation to shape custom calls around a body call",
       xlaRoundTripShardMapExportPass},
      {"xla-sdy-round-trip-shard-map-import",
       "Manual computation bodies called through shape custom calls back to "
       "sdy.manual_computation",
       xlaRoundTripShardMapImportPass},
      {"xla-sdy-unflatten-call-graph",
       "Merge per-call-site function copies, copies where shardings differ",
       xlaUnflattenCallGraphPass},
      {"xla-sdy-stablehlo-export-pipeline",
       "Export a Shardy module to GSPMD mhlo.sharding form",
       xlaStablehloExportPipeline},
      {"xla-sdy-stablehlo-import-pipeline",
       "Import a module with GSPMD shardings into Shardy form",
       xlaStablehloImportPipeline},
  };
  return passes;
}

const PassInfo *lookupPass(std::string_view flag) {
  for (const PassInfo &pass : allPasses())
    if (pass.flag == flag)
      return &pass;
  return nullptr;
}

bool runRegisteredPass(const PassInfo &pass, Module &module,
                       const PassOptions &options, DiagnosticEngine &diags) {
  if (!pass.run) {
    diags.error(module.op().loc, "pass '-" + std::string(pass.flag) +
                                     "' is not implemented yet in shardlab");
    return false;
  }
  PassTimingScope scope(module, pass.flag);
  return pass.run(module, options, diags);
}

PassTimingScope::PassTimingScope(Module &module, std::string_view name)
    : timing_(module.timing) {
  if (!timing_)
    return;
  entry_ = timing_->entries.size();
  timing_->entries.push_back({std::string(name), timing_->depth, 0});
  ++timing_->depth;
  start_ = std::chrono::steady_clock::now();
}

PassTimingScope::~PassTimingScope() {
  if (!timing_)
    return;
  timing_->entries[entry_].seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  --timing_->depth;
}

std::string formatPassTiming(const PassTiming &timing) {
  double total = 0;
  for (const PassTiming::Entry &entry : timing.entries)
    if (entry.depth == 0)
      total += entry.seconds;
  const char *rule = "===-----------------------------------------------------"
                     "--------------------===\n";
  std::string out = rule;
  out += "                         ... Execution time report ...\n";
  out += rule;
  char line[160];
  std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds\n\n",
                total);
  out += line;
  out += "  ----Wall Time----  ----Name----\n";
  for (const PassTiming::Entry &entry : timing.entries) {
    double share = total > 0 ? 100.0 * entry.seconds / total : 0.0;
    std::snprintf(line, sizeof line, "  %8.4f (%5.1f%%)  %*s%s\n",
                  entry.seconds, share, 2 * entry.depth, "",
                  entry.flag.c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "  %8.4f (100.0%%)  Total\n", total);
  out += line;
  return out;
}

bool parsePassOptions(std::string_view text, PassOptions &options,
                      std::string &error) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ','))
      ++i;
    if (i >= text.size())
      break;
    size_t key_start = i;
    while (i < text.size() && text[i] != '=' && text[i] != ' ')
      ++i;
    std::string key(text.substr(key_start, i - key_start));
    std::string value = "true";
    if (i < text.size() && text[i] == '=') {
      ++i;
      value.clear();
      char quote = 0;
      while (i < text.size() && (quote || text[i] != ' ')) {
        char c = text[i++];
        if (quote && c == quote)
          quote = 0;
        else if (!quote && (c == '\'' || c == '"'))
          quote = c;
        else
          value += c;
      }
      if (quote) {
        error = "unbalanced quote in pass options: " + std::string(text);
        return false;
      }
    }
    options[key] = value;
  }
  return true;
}

} // namespace shardlab
