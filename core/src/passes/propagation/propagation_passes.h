// Entry points of the propagation stage (declared in
// propagation_passes.cpp): the four propagation layers, the rule
// population, and -sdy-propagation-pipeline (import, propagate, export).
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

bool runBasicPropagate(Module &, const PassOptions &, DiagnosticEngine &);
bool runAggressivePropagate(Module &, const PassOptions &, DiagnosticEngine &);
bool runOpPriorityPropagate(Module &, const PassOptions &, DiagnosticEngine &);
bool runUserPriorityPropagate(Module &, const PassOptions &,
                              DiagnosticEngine &);
bool populateOpShardingRules(Module &, const PassOptions &, DiagnosticEngine &);
bool propagationPipeline(Module &, const PassOptions &, DiagnosticEngine &);

} // namespace shardlab
