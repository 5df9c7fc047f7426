// The export stage's passes, as Shardy declares them in
// transforms/export/passes.td (with the call-graph passes it runs after
// propagation). Passes with no entry point are Shardy's that shardlab has
// not implemented yet: they are listed so they fail with a clear message.
#include "export_passes.h"
#include "../stages.h"

namespace shardlab {

namespace {

void addCallGraphExportPasses(std::vector<PassInfo> &passes,
                              std::string_view stage) {
  passes.push_back(
      {"sdy-export-named-computations",
       stage,
       "Export named computations to funcs",
       "Every sdy.named_computation becomes a func.func and a call to it; "
       "the computation's shardings go on the call.",
       {{"func-result-shardings", OptionType::Bool, "false",
         "Also put the out shardings on the new function's results (the "
         "XLA variant's behaviour; shardlab extension)"}},
       exportNamedComputationsPass});
  passes.push_back(
      {"sdy-insert-func-call-reshards",
       stage,
       "Insert reshards at func calls",
       "Where a call's operand or result sharding differs from the callee's "
       "argument or result sharding, an sdy.reshard makes them agree.",
       {},
       insertFuncCallReshardsPass});
  passes.push_back(
      {"sdy-sink-func-data-flow-edges",
       stage,
       "Sink func data-flow edges",
       "Moves the shardings of sdy.func_data_flow_edge ops onto the function "
       "arguments and results and removes the ops.",
       {},
       sinkFuncDataFlowEdgesPass});
  passes.push_back(
      {"sdy-unflatten-call-graph",
       stage,
       "Unflatten the call graph",
       "Merges the per-call-site copies of a function back into one per "
       "distinct sharding.",
       {{"dedup-functions-fully", OptionType::Bool, "false",
         "Merge all copies into the most-called one"}},
       unflattenCallGraphPass});
}

void addPartitionerPasses(std::vector<PassInfo> &passes,
                          std::string_view stage) {
  passes.push_back(
      {"sdy-insert-explicit-reshards",
       stage,
       "Insert explicit reshards",
       "Makes every op's operand and result shardings agree with its "
       "sharding rule by inserting sdy.reshard, and sdy.all_reduce where a "
       "reduction factor is sharded.",
       {{"enable-full-version", OptionType::Bool, "false",
         "Handle every op, not only those Shardy's partial version covers"}},
       insertExplicitReshardsPass});
  passes.push_back(
      {"sdy-reshard-to-collectives",
       stage,
       "Lower reshards to collectives",
       "Lowers each sdy.reshard to sdy.all_slice, sdy.collective_permute, "
       "sdy.all_to_all and sdy.all_gather.",
       {{"keep-redundant-reshards", OptionType::Bool, "false",
         "Keep reshards whose input and output shardings are equal"}},
       reshardToCollectivesPass});
  passes.push_back({"sdy-verify-unreduced-axes",
                    stage,
                    "Verify unreduced axes",
                    "An op may only produce unreduced axes its rule allows; "
                    "anything else is an error.",
                    {},
                    verifyUnreducedAxesPass});
  passes.push_back(
      {"sdy-convert-global-to-local",
       stage,
       "Convert the global program to the per-device program",
       "Every value takes its local (per-device) type; sdy collectives "
       "become StableHLO collectives with replica groups and channel ids; "
       "all_slice, sharded constants and iotas read the device's offset "
       "from a table indexed by partition_id; manual computations are "
       "inlined.",
       {{"per-dim-all-gather", OptionType::Bool, "false",
         "Gather a multi-dimension all_gather one dimension at a time "
         "instead of as one all_gather on a reshaped tensor"},
        {"combine-multi-dimension-reduce-scatter", OptionType::Bool, "false",
         "Scatter a multi-dimension reduce_scatter as one reduce_scatter on "
         "a reshaped tensor instead of an all_reduce and a slice"},
        {"enable-rgv3", OptionType::Bool, "false",
         "Write replica groups as mesh axes "
         "(#stablehlo.replica_group_mesh_axes) when they are full axes"},
        {"replica-count", OptionType::Int, "1", "Number of replicas"},
        {"partition-count", OptionType::Int, "0",
         "Number of partitions (0: the mesh's devices); with one partition "
         "and several replicas, offsets are indexed by replica_id"}},
       convertGlobalToLocalPass});
  passes.push_back(
      {"sdy-remove-all-gather-reduce-scatter-for-cmv1",
       stage,
       "Leave all-gathers and reduce-scatters around dots to CMV1",
       "An sdy.all_gather whose one use is a dot goes (the dot reads its "
       "operand); an sdy.reduce_scatter that is a dot's one use goes and the "
       "dot takes its sharding, unless an axis stays unreduced. The backend's "
       "collective matmul does that communication inside the dot.",
       {},
       removeAllGatherReduceScatterForCmv1Pass});
  passes.push_back(
      {"sdy-resolve-single-device-sharding",
       stage,
       "Run single-device ops on their device only",
       "An op whose results live on a maximal mesh runs inside a "
       "stablehlo.if on that device's partition_id; the other devices yield "
       "zeros, and the reshards of its results to a replicated mesh become "
       "all-reduces over that mesh's axes.",
       {},
       resolveSingleDeviceShardingPass});
  passes.push_back(
      {"sdy-replicate-operands-of-unknown-ops",
       stage,
       "Let ops without a sharding rule read their operands whole",
       "An op Shardy has no sharding rule for (uniform_quantize, an unknown "
       "custom call) and no sharding of its own runs whole on every device; "
       "each of its sharded operands goes through an sdy.reshard to "
       "replicated, which -sdy-reshard-to-collectives lowers to an "
       "all_gather. The first step of the per-device program.",
       {},
       replicateOperandsOfUnknownOpsPass});
  passes.push_back(
      {"sdy-insert-replicated-to-unreduced",
       stage,
       "Make results unreduced over axes their op does not reduce over hold "
       "partial values",
       "A result unreduced (summed) over axes that split none of its op's "
       "reduction factors and are not unreduced in an operand holds the "
       "whole value on every device along them (Shardy's explicit reshards "
       "leave it so): its sum would be the value times their size. The op "
       "computes it with those axes replicated and an "
       "sdy.replicated_to_unreduced after it keeps the value on one device "
       "of each group, zeros on the others. A step of the per-device "
       "program.",
       {},
       insertReplicatedToUnreducedPass});
  passes.push_back(
      {"sdy-replicate-need-replication-factors",
       stage,
       "Let ops read whole the dimensions XLA would gather for them",
       "A dimension an op must read whole that Shardy's explicit reshards "
       "leave sharded: a need_replication factor (a custom_partitioning "
       "rule's, or one of a registry rule Shardy does not enforce), or a "
       "size-1 factor only operands have that is not a reduction (a "
       "broadcast_in_dim's expanded dimension, whose one row only the first "
       "shard holds). As XLA's partitioner does, each operand sharded along "
       "one goes through an sdy.reshard that gathers it, and a result to be "
       "sharded along one is resharded after the op. A step of the "
       "per-device program.",
       {},
       replicateNeedReplicationFactorsPass});
  passes.push_back(
      {"sdy-replicate-inputs-of-custom-reductions",
       stage,
       "Let reductions without a combining all-reduce read their inputs whole",
       "A reduce over a sharded dimension whose reducer is not one "
       "elementwise op (argmax's comparator of value and index, a complex "
       "max by compare and select) has no all-reduce that combines partial "
       "results: its inputs go through an sdy.reshard that makes the reduced "
       "dimensions whole, and the sdy.all_reduce Shardy added after it over "
       "those axes goes. A step of the per-device program.",
       {},
       replicateInputsOfCustomReductionsPass});
  passes.push_back(
      {"sdy-pad-for-divisibility",
       stage,
       "Pad dimensions their shards do not divide",
       "A sharded dimension its shards do not divide is padded up to the "
       "next multiple (zeros where this pass pads), computed on padded and "
       "trimmed back where the value leaves the sharded world; unknown "
       "padding is masked before a contraction over it. A function argument "
       "or result whose sharding does not divide it is an error.",
       {},
       padForDivisibilityPass});
  passes.push_back(
      {"sdy-per-instruction-partitioning",
       stage,
       "Partition the ops a filter selects, one at a time",
       "Each selected op becomes a manual computation over all its mesh's "
       "axes whose body is its per-device form (a reshard: its collectives); "
       "operands its sharding does not divide are padded and padded results "
       "sliced back. Everything else stays global.",
       {{"filter", OptionType::String, "",
         "Op names without their dialect (dot,constant,reshard), or a range "
         "of op positions in the module ('selectLow=0, selectHigh=3')"}},
       perInstructionPartitioningPass});
  passes.push_back(
      {"sdy-resolve-permutation-factors",
       stage,
       "Make ops that move data between shards run shard by shard",
       "A sharded dimension along which a pad, slice, reverse, reshape, "
       "window or concatenate moves rows between devices runs shard by "
       "shard: pads and slices reaching at most two devices away, "
       "reshapes splitting one dimension and reverses in a manual "
       "computation where each device receives the rows it lacks from "
       "its neighbours with collective permutes (halo exchange, Shardy's "
       "default); the others, and all of them with "
       "enable-halo-exchange=false, replicated around the op (resharded "
       "before, and back after).",
       {{"enable-halo-exchange", OptionType::Bool, "true",
         "Exchange halos with neighbours instead of replicating (false: "
         "replicate every moved dimension)"},
        {"replica-count", OptionType::Int, "1", "Number of replicas"},
        {"partition-count", OptionType::Int, "0",
         "Number of partitions (0: the mesh's device count); with one "
         "partition and several replicas, device indices come from "
         "replica_id"}},
       resolvePermutationFactorsPass});
}

std::vector<OptionDecl> exportPipelineOptions() {
  return {
      {"keep-sharding-rules", OptionType::Bool, "false",
       "Keep the sdy.sharding_rule attributes"},
      {"avoid-export-for-partitioning", OptionType::Bool, "false",
       "Skip the partitioner part (reshards, collectives) and mesh inlining"},
      {"enable-insert-explicit-collectives", OptionType::Bool, "false",
       "Lower reshards to collectives"},
      {"remove-all-gather-reduce-scatter-for-cmv1", OptionType::Bool, "false",
       "Leave the all-gathers feeding dots and the reduce-scatters after them "
       "to the backend's collective matmul (CMV1)"},
      {"update-non-divisible-input-output-shardings", OptionType::Bool, "true",
       "Make function input and output shardings evenly divisible"},
      {"dump-sharding-origins", OptionType::Bool, "false",
       "The module carries sharding-origin debug info to remove"},
      {"dump-propagation-edges", OptionType::Bool, "false",
       "The module carries propagation-edge debug info to remove"},
      {"inline-meshes", OptionType::Bool, "true",
       "Inline meshes into the shardings"}};
}

} // namespace

void addExportPasses(std::vector<PassInfo> &passes) {
  const std::string_view stage = "export";
  passes.push_back({"sdy-close-shardings",
                    stage,
                    "Close every sharding",
                    "Open dimension shardings ({?}) become closed.",
                    {},
                    closeShardingsPass});
  passes.push_back(
      {"sdy-constant-or-scalar-merger",
       stage,
       "Merge split constants",
       "Undoes the import's splitting: identical constants become one.",
       {},
       constantOrScalarMergerPass});
  passes.push_back({"sdy-drop-sharding-and-mesh",
                    stage,
                    "Drop shardings and meshes",
                    "Removes every sharding attribute and sdy.mesh.",
                    {},
                    dropShardingAndMeshPass});
  passes.push_back({"sdy-drop-sharding-rules",
                    stage,
                    "Drop sharding rules",
                    "Removes every sdy.sharding_rule attribute.",
                    {},
                    dropShardingRulesPass,
                    /*keeps_valid=*/true});
  passes.push_back(
      {"sdy-export-pipeline", stage, "Shardy's export pipeline",
       "constant-or-scalar-merger, sink-data-flow-edges, "
       "remove-sharding-groups, sharding-constraint-to-reshard, the "
       "input/output sharding fixes, close-shardings, the partitioner part "
       "(verify-unreduced-axes, insert-explicit-reshards and, with "
       "enable-insert-explicit-collectives, reshard-to-collectives), "
       "debug-info and rule removal, and inline-meshes.",
       exportPipelineOptions(), exportPipelinePass});
  passes.push_back({"sdy-inline-meshes",
                    stage,
                    "Inline meshes into shardings",
                    "Every sharding names its mesh inline; the sdy.mesh "
                    "symbols go.",
                    {},
                    inlineMeshesPass});
  passes.push_back(
      {"sdy-propagate-to-func-results",
       stage,
       "Propagate shardings to func results",
       "A function result without a sharding takes the sharding of the "
       "value it returns.",
       {},
       propagateToFuncResultsPass});
  passes.push_back({"sdy-remove-propagation-debug-info",
                    stage,
                    "Remove propagation debug info",
                    "Removes sdy.sharding_origins and sdy.propagation_edges.",
                    {},
                    removePropagationDebugInfoPass});
  passes.push_back({"sdy-remove-sharding-groups",
                    stage,
                    "Remove sharding groups",
                    "Erases every sdy.sharding_group op.",
                    {},
                    removeShardingGroupsPass});
  passes.push_back(
      {"sdy-remove-sub-axes-in-input-output-shardings",
       stage,
       "Remove sub-axes from input/output shardings",
       "Function argument and result shardings keep only full axes.",
       {},
       removeSubAxesInInputOutputShardingsPass});
  passes.push_back({"sdy-sharding-constraint-to-reshard",
                    stage,
                    "Turn sharding constraints into reshards",
                    "Every sdy.sharding_constraint becomes an sdy.reshard.",
                    {},
                    shardingConstraintToReshardPass});
  passes.push_back(
      {"sdy-sink-data-flow-edges",
       stage,
       "Sink data-flow edges",
       "Moves the shardings of sdy.data_flow_edge ops onto the values they "
       "wrap and removes the ops.",
       {{"sink-debug-sharding-origins", OptionType::Bool, "false",
         "Move the sharding-origin debug info too"},
        {"sink-debug-propagation-edge-sharding", OptionType::Bool, "false",
         "Move the propagation-edge debug info too"}},
       sinkDataFlowEdgesPass});
  passes.push_back(
      {"sdy-update-non-divisible-input-output-shardings",
       stage,
       "Make input/output shardings divisible",
       "Drops the axes of a function input or output sharding that do not "
       "divide its dimension.",
       {},
       updateNonDivisibleInputOutputShardingsPass});
  addCallGraphExportPasses(passes, stage);
  addPartitionerPasses(passes, stage);
}

} // namespace shardlab
