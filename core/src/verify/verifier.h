// The IR verifier: checks every op of a module (types, symbol references,
// sdy shardings, sharding rules, sdy op invariants) and reports Shardy's
// diagnostics. Parsing guarantees syntax; this guarantees meaning.
#pragma once

#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"

namespace shardlab {

/// Verifies `module`; returns false when an error was reported.
bool verifyModule(Module &module, DiagnosticEngine &diags);

/// Whether the module is what verifyModule last found valid (nothing
/// changed since: every top-level op's fingerprints are the same).
bool verifiedAsIs(Module &module);

/// Records the module as valid without checking it: for a pass declared
/// `keeps_valid` that ran on a module verifiedAsIs.
void recordVerified(Module &module);

} // namespace shardlab
