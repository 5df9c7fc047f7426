// Entry points of the strategy stage's passes (declared in
// strategy_passes.cpp): rewrites the comparer applies to a program to
// estimate a layout or a choice that sharding alone does not express.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

bool pipelineStagesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool splitMicroBatchesPass(Module &, const PassOptions &, DiagnosticEngine &);
bool recomputePass(Module &, const PassOptions &, DiagnosticEngine &);
bool expertExchangePass(Module &, const PassOptions &, DiagnosticEngine &);
bool contextRingPass(Module &, const PassOptions &, DiagnosticEngine &);

} // namespace shardlab
