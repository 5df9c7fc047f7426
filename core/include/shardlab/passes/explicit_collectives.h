// The Shardy partitioner part of the export: insert-explicit-reshards makes
// every op's operand and result shardings agree with its sharding rule (by
// inserting sdy.reshard and sdy.all_reduce), reshard-to-collectives lowers
// each sdy.reshard to sdy.all_slice / collective_permute / all_to_all /
// all_gather, and the export pipeline runs the export passes in Shardy's
// order. Each pass has the PassFn signature of the pass registry.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

/// -sdy-insert-explicit-reshards (option `enable-full-version`).
bool insertExplicitReshardsPass(Module &, const PassOptions &,
                                DiagnosticEngine &);
/// -sdy-reshard-to-collectives (option `keep-redundant-reshards`).
bool reshardToCollectivesPass(Module &, const PassOptions &,
                              DiagnosticEngine &);
/// -sdy-export-pipeline (Shardy's ExportOptions as pass options).
bool exportPipelinePass(Module &, const PassOptions &, DiagnosticEngine &);

} // namespace shardlab
