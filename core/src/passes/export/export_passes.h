// Entry points of the export stage (declared in export_passes.cpp): what
// runs after propagation, down to explicit reshards and collectives.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

bool closeShardingsPass(Module &, const PassOptions &, DiagnosticEngine &);
bool convertGlobalToLocalPass(Module &, const PassOptions &,
                              DiagnosticEngine &);
bool constantOrScalarMergerPass(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool dropShardingAndMeshPass(Module &, const PassOptions &, DiagnosticEngine &);
bool dropShardingRulesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool exportNamedComputationsPass(Module &, const PassOptions &,
                                 DiagnosticEngine &);
bool exportPipelinePass(Module &, const PassOptions &, DiagnosticEngine &);
bool inlineMeshesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool insertExplicitReshardsPass(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool insertFuncCallReshardsPass(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool padForDivisibilityPass(Module &, const PassOptions &, DiagnosticEngine &);
bool perInstructionPartitioningPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);
bool propagateToFuncResultsPass(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool removeAllGatherReduceScatterForCmv1Pass(Module &, const PassOptions &,
                                             DiagnosticEngine &);
bool removePropagationDebugInfoPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);
bool removeShardingGroupsPass(Module &, const PassOptions &,
                              DiagnosticEngine &);
bool removeSubAxesInInputOutputShardingsPass(Module &, const PassOptions &,
                                             DiagnosticEngine &);
bool replicateInputsOfCustomReductionsPass(Module &, const PassOptions &,
                                           DiagnosticEngine &);
bool replicateOperandsOfUnknownOpsPass(Module &, const PassOptions &,
                                       DiagnosticEngine &);
bool insertReplicatedToUnreducedPass(Module &, const PassOptions &,
                                     DiagnosticEngine &);
bool replicateNeedReplicationFactorsPass(Module &, const PassOptions &,
                                         DiagnosticEngine &);
bool resolvePermutationFactorsPass(Module &, const PassOptions &,
                                   DiagnosticEngine &);
bool resolveSingleDeviceShardingPass(Module &, const PassOptions &,
                                     DiagnosticEngine &);
bool reshardToCollectivesPass(Module &, const PassOptions &,
                              DiagnosticEngine &);
bool shardingConstraintToReshardPass(Module &, const PassOptions &,
                                     DiagnosticEngine &);
bool sinkDataFlowEdgesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool sinkFuncDataFlowEdgesPass(Module &, const PassOptions &,
                               DiagnosticEngine &);
bool unflattenCallGraphPass(Module &, const PassOptions &, DiagnosticEngine &);
bool updateNonDivisibleInputOutputShardingsPass(Module &, const PassOptions &,
                                                DiagnosticEngine &);
bool verifyUnreducedAxesPass(Module &, const PassOptions &, DiagnosticEngine &);

} // namespace shardlab
