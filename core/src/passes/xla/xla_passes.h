// Entry points of XLA's Shardy integration (declared in xla_passes.cpp):
// GSPMD import and export, and the round trip through HLO.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

bool xlaExportNamedComputationsPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);
bool xlaImportConstantsPass(Module &, const PassOptions &, DiagnosticEngine &);
bool xlaImportSdyCustomCallsPass(Module &, const PassOptions &,
                                 DiagnosticEngine &);
bool xlaImportShardingsPass(Module &, const PassOptions &, DiagnosticEngine &);
bool xlaMhloImportPipeline(Module &, const PassOptions &, DiagnosticEngine &);
bool xlaRoundTripCloneManualComputationCallsPass(Module &, const PassOptions &,
                                                 DiagnosticEngine &);
bool xlaRoundTripExportPipeline(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool xlaRoundTripImportPipeline(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool xlaRoundTripShardMapExportPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);
bool xlaRoundTripShardMapImportPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);
bool xlaStablehloExportPipeline(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool xlaStablehloImportPipeline(Module &, const PassOptions &,
                                DiagnosticEngine &);
bool xlaUnflattenCallGraphPass(Module &, const PassOptions &,
                               DiagnosticEngine &);

} // namespace shardlab
