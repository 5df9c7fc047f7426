// Entry points of the propagation passes for the pass registry. Options are
// Shardy's: keep-sharding-rules, conservative-propagation,
// propagation-strategy (aggressive layer and above),
// run-op-priority-propagation, debug-sharding-origins,
// debug-propagation-edge-sharding.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

bool runBasicPropagate(Module &module, const PassOptions &options,
                       DiagnosticEngine &diags);
bool runAggressivePropagate(Module &module, const PassOptions &options,
                            DiagnosticEngine &diags);
bool runOpPriorityPropagate(Module &module, const PassOptions &options,
                            DiagnosticEngine &diags);
bool runUserPriorityPropagate(Module &module, const PassOptions &options,
                              DiagnosticEngine &diags);

} // namespace shardlab
