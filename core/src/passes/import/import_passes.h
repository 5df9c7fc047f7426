// Entry points of the import stage (declared in import_passes.cpp): what
// runs before propagation to put a module in the form propagation expects.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

bool addDataFlowEdgesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool addFuncDataFlowEdgesPass(Module &, const PassOptions &,
                              DiagnosticEngine &);
bool applyShardingConstraintsPass(Module &, const PassOptions &,
                                  DiagnosticEngine &);
bool constantOrScalarSplitterPass(Module &, const PassOptions &,
                                  DiagnosticEngine &);
bool explicitGatherScatterBatchingPass(Module &, const PassOptions &,
                                       DiagnosticEngine &);
bool flattenCallGraphPass(Module &, const PassOptions &, DiagnosticEngine &);
bool importFuncCallsPass(Module &, const PassOptions &, DiagnosticEngine &);
bool importPipeline(Module &, const PassOptions &, DiagnosticEngine &);
bool liftInlinedMeshesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool manualAxesCleanupPass(Module &, const PassOptions &, DiagnosticEngine &);
bool preOrderFuncsPass(Module &, const PassOptions &, DiagnosticEngine &);
bool propagateShardingFromFuncToCallPass(Module &, const PassOptions &,
                                         DiagnosticEngine &);
bool removeSizeOneAxesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool shardingGroupImportPass(Module &, const PassOptions &, DiagnosticEngine &);

} // namespace shardlab
