// The one way passes run. A PassPipeline is a list of registered passes with
// checked options, built from flags (`-sdy-basic-propagate=...`) or by name
// (the playground's "explicit"); runPassPipeline runs it, and pipelines that
// are passes themselves (-sdy-propagation-pipeline, ...) run their steps
// through runNestedPass. Every step is run the same way:
//
//   not implemented  -> error "pass '-F' is not implemented yet in shardlab"
//   run, timed       -> an entry in module.timing when it is set
//   returned false   -> "pass '-F' failed" unless the pass said why
//   then verify      -> a pass that breaks an invariant fails right there
//
// What "then verify" covers is module.verify_passes. By default each step
// the caller runs is verified (each flag of shardlab-opt, each step of a
// named pipeline), and a pipeline pass as a whole: the passes it runs inside
// itself are not verified one by one. That is a check of shardlab's own
// passes, not of the input, and cost a sixth of propagation + export (10k
// ops, 257 M -> 215 M instructions). The test runners turn it on
// (shardlab-opt -verify-each, MLIR's flag and default), so a pass that
// breaks an invariant is still named where it does.
//
// So shardlab-opt, the npm API, the playground, the scheduler and the
// sharding report all see the same failures. loadModule is the one
// parse-and-verify every caller starts from.
#pragma once

#include "shardlab/passes/pass_registry.h"
#include "shardlab/text/text.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

struct PassStep {
  const PassInfo *pass = nullptr;
  PassOptions options;
};

struct PassPipeline {
  std::vector<PassStep> steps;
};

/// Appends the pass `flag` (no leading '-') with `options_text` (Shardy's
/// `k=v k2` syntax). An error for an unknown pass, an unknown option or a
/// bad value; the message names the pass and its options.
Status appendPass(PassPipeline &pipeline, std::string_view flag,
                  std::string_view options_text);

/// A pipeline the playground and the scheduler offer by name.
struct NamedPipeline {
  std::string_view name;
  std::string_view summary;
  /// (flag, options) steps.
  std::vector<std::pair<std::string_view, std::string_view>> steps;
};

/// basic, aggressive, op-priority, user-priority, pipeline, explicit,
/// partition.
const std::vector<NamedPipeline> &namedPipelines();

/// The (flag, options) steps that turn a module with explicit collectives
/// into the program one device runs: permutation factors resolved and their
/// reshards lowered, dimensions padded where shards do not divide them,
/// local types and StableHLO collectives. The end of the "partition"
/// pipeline and the scheduler's first step.
const std::vector<std::pair<std::string_view, std::string_view>> &
perDeviceSteps();
/// The gpu stage (passes/gpu/): what XLA's GPU compiler makes of the
/// per-device program's collectives before it schedules them, in XLA's
/// order. The scheduler runs them on every program it estimates; the
/// partition check runs them when asked (Options::gpu_passes).
const std::vector<std::pair<std::string_view, std::string_view>> &gpuSteps();
/// The steps of the named pipeline; an error listing the names.
Result<PassPipeline> buildNamedPipeline(std::string_view name);

/// Runs every step (see the file comment). On failure returns false and,
/// when given, sets `failed_flag` to the flag of the step that failed.
bool runPassPipeline(Module &module, const PassPipeline &pipeline,
                     DiagnosticEngine &diags,
                     std::string *failed_flag = nullptr);

/// Whether a nested step is verified after it runs.
enum class VerifyAfter { Yes, No };

/// One step of a pipeline pass, by flag, run the same way. An unknown flag
/// or option is an error diagnostic (a bug in the calling pipeline).
/// It is verified after only with module.verify_passes == EveryPass.
/// VerifyAfter::No is for a step whose output the pipeline completes later
/// (say so where it is used); the pipeline itself is verified when it ends.
bool runNestedPass(Module &module, std::string_view flag,
                   DiagnosticEngine &diags, const RawPassOptions &options = {},
                   VerifyAfter verify = VerifyAfter::Yes);

/// What loadModule did, for callers that report the stage that failed.
struct LoadedModule {
  std::unique_ptr<Module> module; ///< null on failure
  std::string_view failed_stage;  ///< "parse", "verify" or "import"
  bool from_gspmd = false;        ///< GSPMD shardings were imported
};

struct LoadOptions {
  uint32_t line_offset = 0;   ///< first line of the text in its file (0-based)
  uint32_t column_offset = 0; ///< columns before the text on its first line
  /// Convert MHLO and import GSPMD shardings (see importGspmdForm) after
  /// verifying; shardlab-opt leaves modules as written.
  bool import_gspmd = false;
};

/// Parse, verify and (optionally) import: the start of every caller.
LoadedModule loadModule(std::string_view text, DiagnosticEngine &diags,
                        const LoadOptions &options = {});

} // namespace shardlab
