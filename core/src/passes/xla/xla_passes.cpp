// XLA's Shardy integration passes (xla/service/spmd/shardy), as its
// registrations declare them: GSPMD import and export, and the round trip
// that carries Shardy attributes through HLO as strings.
#include "xla_passes.h"
#include "../stages.h"

namespace shardlab {

namespace {

const OptionDecl kHloShardingV3{
    "enable-hlo-sharding-v3", OptionType::Bool, "false",
    "Read and write shardings as HloShardingV3 (named axes) strings"};
const OptionDecl kDedupFully{
    "dedup-functions-fully", OptionType::Bool, "false",
    "Keep one function per name, with mhlo.copy reshards at call sites"};

std::vector<OptionDecl> roundTripImportOptions() {
  return {kHloShardingV3,
          {"enable-constant-import", OptionType::Bool, "true",
           "Turn stablehlo.constant into sdy.constant"},
          {"import-only-uninlineable-func-calls", OptionType::Bool, "true",
           "Only calls XLA marked uninlineable become named computations"},
          {"lift-and-dedup-meshes", OptionType::Bool, "false",
           "Lift inline meshes and merge meshes over the same devices"}};
}

void addRoundTripPasses(std::vector<PassInfo> &passes, std::string_view stage) {
  passes.push_back({"xla-sdy-round-trip-clone-manual-computation-calls",
                    stage,
                    "Clone manual computation bodies called more than once",
                    "",
                    {},
                    xlaRoundTripCloneManualComputationCallsPass});
  passes.push_back(
      {"xla-sdy-round-trip-export-pipeline",
       stage,
       "Keep Shardy attributes as strings and custom calls through HLO",
       "Shardings, meshes and sdy ops become frontend attributes and custom "
       "calls that survive XLA's HLO; the import pipeline reads them back.",
       {},
       xlaRoundTripExportPipeline});
  PassInfo import{"xla-sdy-round-trip-import-pipeline",
                  stage,
                  "Import Shardy attributes kept as strings through HLO",
                  "Reads back what the round-trip export wrote: meshes, "
                  "shardings, sdy ops and manual computations.",
                  roundTripImportOptions(),
                  xlaRoundTripImportPipeline};
  passes.push_back(import);
  // Shardy's own copy of the round-trip import (its round_trip_import
  // library): the same pipeline under Shardy's flag.
  import.flag = "sdy-round-trip-import-pipeline";
  import.stage = "import";
  passes.push_back(import);
  passes.push_back(
      {"xla-sdy-round-trip-shard-map-export",
       stage,
       "sdy.manual_computation to shape custom calls around a body call",
       "",
       {},
       xlaRoundTripShardMapExportPass});
  passes.push_back(
      {"xla-sdy-round-trip-shard-map-import",
       stage,
       "Manual computation bodies called through shape custom calls back to "
       "sdy.manual_computation",
       "",
       {},
       xlaRoundTripShardMapImportPass});
}

} // namespace

void addXlaPasses(std::vector<PassInfo> &passes) {
  const std::string_view stage = "xla";
  passes.push_back(
      {"xla-sdy-export-named-computations",
       stage,
       "Named computations to funcs, shardings on arguments and results",
       "",
       {kDedupFully},
       xlaExportNamedComputationsPass});
  passes.push_back({"xla-sdy-import-constants",
                    stage,
                    "stablehlo.constant to sdy.constant",
                    "",
                    {},
                    xlaImportConstantsPass});
  passes.push_back({"xla-sdy-import-sdy-custom-calls",
                    stage,
                    "Custom calls carrying sdy ops through HLO back to sdy ops",
                    "",
                    {},
                    xlaImportSdyCustomCallsPass});
  passes.push_back(
      {"xla-sdy-import-shardings",
       stage,
       "Import GSPMD mhlo.sharding strings into a mesh and sdy.sharding",
       "Builds one mesh from the module's device count and the shardings' "
       "tile assignments, and rewrites every mhlo.sharding as an "
       "sdy.sharding over it.",
       {{"record-manual-axes", OptionType::Bool, "false",
         "Mark the axes of manual shardings for the import pipeline's "
         "manual-computation step (shardlab extension)"}},
       xlaImportShardingsPass});
  passes.push_back(
      {"xla-sdy-mhlo-import-pipeline",
       stage,
       "Import a module in MHLO with GSPMD shardings into Shardy form",
       "MHLO ops become StableHLO ones, then "
       "-xla-sdy-stablehlo-import-pipeline.",
       {},
       xlaMhloImportPipeline});
  addRoundTripPasses(passes, stage);
  passes.push_back(
      {"xla-sdy-unflatten-call-graph",
       stage,
       "Merge per-call-site function copies, copies where shardings differ",
       "",
       {kDedupFully},
       xlaUnflattenCallGraphPass});
  passes.push_back(
      {"xla-sdy-stablehlo-export-pipeline",
       stage,
       "Export a Shardy module to GSPMD mhlo.sharding form",
       "Named computations become functions, then every sharding is "
       "written as an mhlo.sharding string and the meshes go.",
       {kHloShardingV3,
        kDedupFully,
        {"simplify-replicated-shardings", OptionType::Bool, "false",
         "Write {replicated} for fully replicated shardings"}},
       xlaStablehloExportPipeline});
  passes.push_back(
      {"xla-sdy-stablehlo-import-pipeline",
       stage,
       "Import a module with GSPMD shardings into Shardy form",
       "Imports the mhlo.sharding strings into a mesh and sdy.sharding, "
       "manual regions into sdy.manual_computation, and constants.",
       {},
       xlaStablehloImportPipeline});
}

} // namespace shardlab
