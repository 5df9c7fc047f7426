// The passes of XLA's Shardy integration (xla/service/spmd/shardy), under
// their `-xla-sdy-*` flags: reading GSPMD `mhlo.sharding` strings into
// meshes and `sdy.sharding`s, and the import pipeline around it. Each has
// the PassFn signature of the pass registry; one file per pass in
// core/src/passes/xla/, named after its flag.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

/// Whether a func name marks a manual computation body (also as infix).
bool isManualComputationBody(std::string_view name);

/// Meshes over the same devices merged into the first of them,
/// every sharding on them rewritten onto its axes and sub-axes (a mesh stays
/// when one of its shardings does not map, or when ops other than shardings
/// name its axes).
void dedupMeshesOverSameDevices(Module &module);

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
