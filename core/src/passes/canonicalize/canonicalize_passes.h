// Entry points of MLIR's generic clean-ups as shardlab runs them (declared
// in canonicalize_passes.cpp): -canonicalize with Shardy's patterns, and
// -symbol-dce.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

bool canonicalizePass(Module &, const PassOptions &, DiagnosticEngine &);
bool symbolDcePass(Module &, const PassOptions &, DiagnosticEngine &);

} // namespace shardlab
