// Entry points of the gpu stage's passes (declared in gpu_passes.cpp):
// rewrites XLA's GPU compiler makes of the per-device program before it is
// scheduled, which change what the collectives move.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

bool allReduceReassociatePass(Module &, const PassOptions &,
                              DiagnosticEngine &);
bool reduceScatterCreatorPass(Module &, const PassOptions &,
                              DiagnosticEngine &);

} // namespace shardlab
