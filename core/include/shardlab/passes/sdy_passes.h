// The Shardy passes that need no sharding propagation: -canonicalize, the
// import passes and the export passes. Each has the PassFn signature of the
// pass registry and Shardy's flag name in its comment.
#pragma once

#include "shardlab/passes/canonicalize.h"
#include "shardlab/passes/pass_registry.h"

namespace shardlab {

// Import passes.
bool addDataFlowEdgesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool applyShardingConstraintsPass(Module &, const PassOptions &,
                                  DiagnosticEngine &);
bool constantOrScalarSplitterPass(Module &, const PassOptions &,
                                  DiagnosticEngine &);
bool explicitGatherScatterBatchingPass(Module &, const PassOptions &,
                                       DiagnosticEngine &);
bool liftInlinedMeshesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool manualAxesCleanupPass(Module &, const PassOptions &, DiagnosticEngine &);
bool removeSizeOneAxesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool shardingGroupImportPass(Module &, const PassOptions &, DiagnosticEngine &);

// Export passes.
bool closeShardingsPass(Module &, const PassOptions &, DiagnosticEngine &);
bool constantOrScalarMergerPass(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool dropShardingAndMeshPass(Module &, const PassOptions &, DiagnosticEngine &);
bool dropShardingRulesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool inlineMeshesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool propagateToFuncResultsPass(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool removePropagationDebugInfoPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);
bool removeShardingGroupsPass(Module &, const PassOptions &,
                              DiagnosticEngine &);
bool removeSubAxesInInputOutputShardingsPass(Module &, const PassOptions &,
                                             DiagnosticEngine &);
bool shardingConstraintToReshardPass(Module &, const PassOptions &,
                                     DiagnosticEngine &);
bool sinkDataFlowEdgesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool updateNonDivisibleInputOutputShardingsPass(Module &, const PassOptions &,
                                                DiagnosticEngine &);

} // namespace shardlab
