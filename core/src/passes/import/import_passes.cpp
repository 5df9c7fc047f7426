// The import stage's passes, as Shardy declares them in
// transforms/import/passes.td (plus the call-graph passes it runs first).
#include "import_passes.h"
#include "../stages.h"

namespace shardlab {

void addImportPasses(std::vector<PassInfo> &passes) {
  const std::string_view stage = "import";
  const OptionDecl dedup{
      "dedup-functions-fully", OptionType::Bool, "false",
      "Keep one function per callee (edges instead of per-call copies)"};
  const OptionDecl batching{
      "enable-explicit-gather-scatter-batching", OptionType::Bool, "false",
      "Also run -sdy-explicit-gather-scatter-batching (shardlab extension)"};
  passes.push_back(
      {"sdy-add-data-flow-edges",
       stage,
       "Add data-flow edges to region-based ops",
       "Wraps every result and block argument of a shardable data-flow op "
       "(while, case, optimization barrier, named computation) in "
       "sdy.data_flow_edge, so propagation sees one value per edge.",
       {},
       addDataFlowEdgesPass});
  passes.push_back(
      {"sdy-add-func-data-flow-edges",
       stage,
       "Add data-flow edges to function arguments and results",
       "With dedup-functions-fully, a function shared by several call sites "
       "gets sdy.func_data_flow_edge ops so its shardings propagate through "
       "every call.",
       {},
       addFuncDataFlowEdgesPass});
  passes.push_back(
      {"sdy-apply-sharding-constraints",
       stage,
       "Apply sharding constraints",
       "Moves the sharding of an sdy.sharding_constraint onto its input when "
       "the input has no other sharding and the constraint is its only "
       "user that constrains it.",
       {{"debug-sharding-origins", OptionType::Bool, "false",
         "Record where each sharding came from"},
        {"debug-propagation-edge-sharding", OptionType::Bool, "false",
         "Record which edge each sharding crossed"}},
       applyShardingConstraintsPass});
  passes.push_back(
      {"sdy-constant-or-scalar-splitter",
       stage,
       "Split constants per use",
       "Gives every user of a constant (or scalar broadcast chain) its own "
       "copy, so each use can be sharded independently.",
       {},
       constantOrScalarSplitterPass});
  passes.push_back(
      {"sdy-explicit-gather-scatter-batching",
       stage,
       "Make gather/scatter batching dims explicit",
       "Rewrites gathers and scatters whose batching is implicit in an iota "
       "index into explicit batching dimensions, which propagation can "
       "shard.",
       {},
       explicitGatherScatterBatchingPass});
  passes.push_back(
      {"sdy-flatten-call-graph",
       stage,
       "Flatten the call graph",
       "Gives every call site its own copy of the function it calls (tagged "
       "sdy.original_func_name), so each copy can be sharded for its site.",
       {},
       flattenCallGraphPass});
  passes.push_back(
      {"sdy-import-func-calls",
       stage,
       "Import func calls as named computations",
       "Replaces each func.call by an sdy.named_computation holding the "
       "callee's body.",
       {{"add-data-flow-edges-on-named-computations", OptionType::Bool, "true",
         "Add data-flow edges to the new named computations"}},
       importFuncCallsPass});
  passes.push_back(
      {"sdy-import-pipeline",
       stage,
       "Shardy's import pipeline",
       "symbol-dce, lift-inlined-meshes, remove-size-one-axes, "
       "propagate-sharding-from-func-to-call, constant-or-scalar-splitter, "
       "manual-axes-cleanup, add-data-flow-edges and, with "
       "dedup-functions-fully, apply-sharding-constraints and "
       "sharding-group-import.",
       {dedup,
        batching,
        {"debug-sharding-origins", OptionType::Bool, "false",
         "Passed to apply-sharding-constraints"},
        {"debug-propagation-edge-sharding", OptionType::Bool, "false",
         "Passed to apply-sharding-constraints"}},
       importPipeline});
  passes.push_back(
      {"sdy-lift-inlined-meshes",
       stage,
       "Lift inlined meshes to sdy.mesh symbols",
       "Every mesh written inline in a sharding becomes an sdy.mesh symbol "
       "(one per distinct mesh) that the sharding names.",
       {},
       liftInlinedMeshesPass});
  passes.push_back({"sdy-manual-axes-cleanup",
                    stage,
                    "Clean up manual axes",
                    "Drops manual axes from the shardings inside manual "
                    "computations and sorts the manual axes by mesh order.",
                    {},
                    manualAxesCleanupPass});
  passes.push_back(
      {"sdy-pre-order-funcs",
       stage,
       "Order funcs callee first",
       "Records the order in which propagation visits functions: callees "
       "before their callers.",
       {},
       preOrderFuncsPass});
  passes.push_back(
      {"sdy-propagate-sharding-from-func-to-call",
       stage,
       "Propagate func shardings to call sites",
       "Copies a function's argument and result shardings to the operands "
       "and results of its call sites where these have none.",
       {},
       propagateShardingFromFuncToCallPass});
  passes.push_back(
      {"sdy-remove-size-one-axes",
       stage,
       "Remove mesh axes of size one",
       "Axes of size one split nothing: they are dropped from every "
       "sharding.",
       {},
       removeSizeOneAxesPass});
  passes.push_back(
      {"sdy-sharding-group-import",
       stage,
       "Import sharding groups",
       "Merges sharding groups that share a value and gives every member of "
       "a group the group's sharding; an unsatisfiable group is an error.",
       {},
       shardingGroupImportPass});
}

} // namespace shardlab
