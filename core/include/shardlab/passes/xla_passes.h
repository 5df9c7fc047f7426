// The passes of XLA's Shardy integration (xla/service/spmd/shardy), under
// their `-xla-sdy-*` flags: reading GSPMD `mhlo.sharding` strings into
// meshes and `sdy.sharding`s, and the import pipeline around it. Each has
// the PassFn signature of the pass registry; one file per pass in
// core/src/passes/xla/, named after its flag.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

/// -xla-sdy-import-shardings: every `mhlo.sharding` (func arguments and
/// results, ops) becomes an `sdy.sharding` over one mesh `@mesh` whose
/// axes `_axis_0`, `_axis_1`, ... (major to minor) are the cuts of all
/// tile assignments; `{maximal device=N}` uses `@single_device_N`.
bool xlaImportShardingsPass(Module &, const PassOptions &, DiagnosticEngine &);

/// -xla-sdy-import-constants: `stablehlo.constant` becomes `sdy.constant`,
/// which later passes do not fold or hoist.
bool xlaImportConstantsPass(Module &, const PassOptions &, DiagnosticEngine &);

/// -xla-sdy-export-named-computations: -sdy-export-named-computations with
/// the out shardings also on the new funcs' results; with
/// dedup-functions-fully=true the functions of one name are merged as
/// -xla-sdy-unflatten-call-graph does (mhlo.copy where shardings differ).
bool xlaExportNamedComputationsPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);

/// -xla-sdy-round-trip-clone-manual-computation-calls: a fresh copy of a
/// `xla.sdy.manual_computation_body` func for each call after the first.
bool xlaRoundTripCloneManualComputationCallsPass(Module &, const PassOptions &,
                                                 DiagnosticEngine &);
/// Whether a func name marks a manual computation body (also as infix).
bool isManualComputationBody(std::string_view name);

/// -xla-sdy-round-trip-shard-map-import: GlobalToLocalShape / call to a
/// manual computation body / LocalToGlobalShape back to
/// sdy.manual_computation.
bool xlaRoundTripShardMapImportPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);

/// -xla-sdy-stablehlo-export-pipeline: back to GSPMD form, every
/// sdy.sharding an `mhlo.sharding` string, data-moving collectives
/// `mhlo.copy`, manual computations the SPMDFullToShardShape pattern.
bool xlaStablehloExportPipeline(Module &, const PassOptions &,
                                DiagnosticEngine &);

/// -xla-sdy-round-trip-import-pipeline: Shardy attributes kept as
/// frontend-attribute strings and custom calls through HLO, back in Shardy
/// form (meshes, shardings, rules, constraints, groups, barriers, manual
/// computations).
bool xlaRoundTripImportPipeline(Module &, const PassOptions &,
                                DiagnosticEngine &);

/// -xla-sdy-round-trip-export-pipeline: the inverse of the round-trip
/// import; every Shardy attribute kept as a frontend-attribute string (and
/// each sharding also as an mhlo.sharding string), Shardy ops as custom
/// calls, meshes over the same devices merged into one.
bool xlaRoundTripExportPipeline(Module &, const PassOptions &,
                                DiagnosticEngine &);

/// Meshes over the same devices merged into the first of them,
/// every sharding on them rewritten onto its axes and sub-axes (a mesh stays
/// when one of its shardings does not map, or when ops other than shardings
/// name its axes).
void dedupMeshesOverSameDevices(Module &module);

/// -xla-sdy-import-sdy-custom-calls: `custom_call @xla.sdy.ShardingGroup`
/// back to sdy.sharding_group (errors without a group id or with uses).
bool xlaImportSdyCustomCallsPass(Module &, const PassOptions &,
                                 DiagnosticEngine &);

/// -xla-sdy-round-trip-shard-map-export: sdy.manual_computation to
/// GlobalToLocalShape / call to a body function / LocalToGlobalShape.
bool xlaRoundTripShardMapExportPass(Module &, const PassOptions &,
                                    DiagnosticEngine &);

/// -xla-sdy-unflatten-call-graph: Shardy's unflattening (also of
/// xla.sdy.original_func_name copies), then mhlo.copy reshards where a call
/// site and its function disagree.
bool xlaUnflattenCallGraphPass(Module &, const PassOptions &,
                               DiagnosticEngine &);

/// -xla-sdy-stablehlo-import-pipeline: a module exported with GSPMD
/// shardings into Shardy form: import-shardings, then `custom_call
/// @Sharding` to `sdy.sharding_constraint`, the `@SPMDFullToShardShape` /
/// `@SPMDShardToFullShape` pattern around a call to
/// `sdy.manual_computation`, and constants to `sdy.constant`.
bool xlaStablehloImportPipeline(Module &, const PassOptions &,
                                DiagnosticEngine &);

/// -xla-sdy-mhlo-import-pipeline: the same from MHLO input (older XLA);
/// MHLO ops become their StableHLO twins first.
bool xlaMhloImportPipeline(Module &, const PassOptions &, DiagnosticEngine &);
/// Every MHLO op with a StableHLO twin (`mhlo.add`, `mhlo.while`, ...)
/// replaced by it; whether there was any.
bool convertMhloToStablehlo(Module &module);

/// XLA's import of while loops: a value a loop body reads from outside
/// (a free variable, not a constant) that has a sharding is read through a
/// fully open sdy.sharding_constraint placed before the loop, so
/// propagation may choose how the loop sees it.
void openConstraintsOnWhileFreeVariables(Module &module);

/// Whether `module` is in GSPMD form: it holds an `mhlo.sharding` string and
/// no Shardy mesh.
bool isGspmdModule(Module &module);

/// mhlo.num_partitions x mhlo.num_replicas of the module (1 when absent).
int64_t declaredDeviceCount(Module &module);

/// Automatic form detection, for every caller that takes modules from
/// users (shardlab-schedule, the API, the playground): MHLO ops become
/// StableHLO ones; a GSPMD module runs -xla-sdy-stablehlo-import-pipeline; a
/// module that declares several devices but has no mesh after that gets a
/// warning, since it will be estimated as replicated. Sets `imported`; false
/// after an error.
bool importGspmdForm(Module &module, DiagnosticEngine &diags, bool &imported);

} // namespace shardlab
