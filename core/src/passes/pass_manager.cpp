// The one pass runner (see pass_manager.h) and loadModule.
#include "shardlab/passes/pass_manager.h"

#include "passes/xla_support.h"
#include "verify/verifier.h"

namespace shardlab {

namespace {

size_t errorCount(const DiagnosticEngine &diags) {
  size_t count = 0;
  for (const Diagnostic &diag : diags.diagnostics())
    count += diag.severity == Severity::Error;
  return count;
}

std::string dashed(std::string_view flag) { return "-" + std::string(flag); }

bool runStep(Module &module, const PassStep &step, DiagnosticEngine &diags,
             VerifyAfter verify = VerifyAfter::Yes) {
  const PassInfo &pass = *step.pass;
  if (!pass.run) {
    diags.error(module.op().loc, "pass '" + dashed(pass.flag) +
                                     "' is not implemented yet in shardlab");
    return false;
  }
  size_t errors_before = errorCount(diags);
  module.unchanged_by_pass = false;
  // A pass that keeps a valid module valid, run on one verified as it is,
  // needs no check after it: its result is recorded as verified.
  bool valid_before =
      pass.keeps_valid && verify == VerifyAfter::Yes && verifiedAsIs(module);
  bool ok;
  {
    PassTimingScope scope(module, pass.flag);
    ok = pass.run(module, step.options, diags);
  }
  bool reported = errorCount(diags) > errors_before;
  if (ok && !reported) {
    if (verify == VerifyAfter::No || module.unchanged_by_pass)
      return true;
    if (valid_before) {
      recordVerified(module);
      return true;
    }
    return verifyModule(module, diags);
  }
  if (!reported)
    diags.error(module.op().loc, "pass '" + dashed(pass.flag) + "' failed");
  return false;
}

} // namespace

Status appendPass(PassPipeline &pipeline, std::string_view flag,
                  std::string_view options_text) {
  const PassInfo *pass = lookupPass(flag);
  if (!pass)
    return makeError("unknown pass '" + dashed(flag) + "'");
  Result<RawPassOptions> raw = parsePassOptions(options_text);
  if (!raw)
    return raw.error();
  PassStep step{pass, {}};
  // A pass that is not implemented fails when it runs, with that message,
  // rather than here over options nobody has declared for it yet.
  if (pass->run) {
    Result<PassOptions> options = PassOptions::resolve(*pass, *raw);
    if (!options)
      return options.error();
    step.options = std::move(*options);
  }
  pipeline.steps.push_back(std::move(step));
  return success();
}

const std::vector<std::pair<std::string_view, std::string_view>> &
perDeviceSteps() {
  static const std::vector<std::pair<std::string_view, std::string_view>>
      steps = {{"sdy-insert-replicated-to-unreduced", ""},
               {"sdy-replicate-operands-of-unknown-ops", ""},
               {"sdy-replicate-need-replication-factors", ""},
               {"sdy-replicate-inputs-of-custom-reductions", ""},
               {"sdy-resolve-permutation-factors", ""},
               {"sdy-reshard-to-collectives", ""},
               {"sdy-pad-for-divisibility", ""},
               {"sdy-convert-global-to-local", ""}};
  return steps;
}

const std::vector<std::pair<std::string_view, std::string_view>> &gpuSteps() {
  static const std::vector<std::pair<std::string_view, std::string_view>>
      steps = {{"shardlab-all-reduce-reassociate", ""},
               {"shardlab-reduce-scatter-creator", ""}};
  return steps;
}

namespace {

// The propagation pipeline, then the export with explicit collectives. The
// propagation pipeline's own export leaves the reshards and all-reduces to
// that one: explicit reshards are not idempotent (run twice, a result
// unreduced over some axes of its reduction was all-reduced over the others
// twice). What it did first, its sharding constraints becoming reshards and
// the ops only they read going (a recomputation the step does not use),
// happens before: the collectives the export puts after such an op would
// keep it alive (they are not pure).
std::vector<std::pair<std::string_view, std::string_view>>
propagateThenPartition() {
  return {{"sdy-propagation-pipeline", "avoid-export-for-partitioning=true"},
          {"sdy-sharding-constraint-to-reshard", ""},
          {"canonicalize", ""},
          {"sdy-export-pipeline",
           "enable-insert-explicit-collectives=true inline-meshes=false"}};
}

NamedPipeline partitionPipeline() {
  NamedPipeline partition{
      "partition",
      "Explicit collectives, then the program one device runs: permutation "
      "factors resolved, padded where shards do not divide, local shapes "
      "and StableHLO collectives (what the scheduler estimates, before XLA's "
      "collective rewrites: gpuSteps())",
      propagateThenPartition()};
  for (const auto &step : perDeviceSteps())
    partition.steps.push_back(step);
  return partition;
}

} // namespace

const std::vector<NamedPipeline> &namedPipelines() {
  static const std::vector<NamedPipeline> pipelines = {
      {"basic", "Basic propagation only", {{"sdy-basic-propagate", ""}}},
      {"aggressive",
       "Aggressive propagation",
       {{"sdy-aggressive-propagate", ""}}},
      {"op-priority",
       "Op-priority propagation",
       {{"sdy-op-priority-propagate", ""}}},
      {"user-priority",
       "User-priority propagation",
       {{"sdy-user-priority-propagate", ""}}},
      {"pipeline",
       "Shardy's propagation pipeline (import, propagate, export)",
       {{"sdy-propagation-pipeline", ""}}},
      // The export pipeline also all-reduces sharded reductions, which
      // insert-explicit-reshards + reshard-to-collectives alone leave out.
      {"explicit",
       "The propagation pipeline, then explicit reshards and collectives",
       propagateThenPartition()},
      partitionPipeline(),
  };
  return pipelines;
}

Result<PassPipeline> buildNamedPipeline(std::string_view name) {
  for (const NamedPipeline &named : namedPipelines()) {
    if (named.name != name)
      continue;
    PassPipeline pipeline;
    for (const auto &[flag, options] : named.steps)
      if (Status added = appendPass(pipeline, flag, options); !added)
        return added.error();
    return pipeline;
  }
  std::string error =
      "unknown pipeline '" + std::string(name) + "'; the pipelines:";
  for (const NamedPipeline &named : namedPipelines())
    error += " " + std::string(named.name);
  return makeError(error);
}

bool runPassPipeline(Module &module, const PassPipeline &pipeline,
                     DiagnosticEngine &diags, std::string *failed_flag) {
  const VerifyAfter verify = module.verify_passes == Module::VerifyPasses::None
                                 ? VerifyAfter::No
                                 : VerifyAfter::Yes;
  for (const PassStep &step : pipeline.steps) {
    if (runStep(module, step, diags, verify))
      continue;
    if (failed_flag)
      *failed_flag = dashed(step.pass->flag);
    return false;
  }
  return true;
}

bool runNestedPass(Module &module, std::string_view flag,
                   DiagnosticEngine &diags, const RawPassOptions &options,
                   VerifyAfter verify) {
  PassStep step{lookupPass(flag), {}};
  if (!step.pass) {
    diags.error(module.op().loc, "internal error: pass '" + dashed(flag) +
                                     "' is not registered");
    return false;
  }
  if (step.pass->run) {
    Result<PassOptions> resolved = PassOptions::resolve(*step.pass, options);
    if (!resolved) {
      diags.error(module.op().loc,
                  "internal error: " + resolved.error().message);
      return false;
    }
    step.options = std::move(*resolved);
  }
  if (module.verify_passes != Module::VerifyPasses::EveryPass)
    verify = VerifyAfter::No;
  bool ok = runStep(module, step, diags, verify);
  // Whether the enclosing pass changed the module is for it to say (it may
  // have changed it before this step), not for its last step.
  module.unchanged_by_pass = false;
  return ok;
}

LoadedModule loadModule(std::string_view text, DiagnosticEngine &diags,
                        const LoadOptions &options) {
  LoadedModule loaded;
  ParseOptions parse_options;
  parse_options.line_offset = options.line_offset;
  parse_options.column_offset = options.column_offset;
  std::unique_ptr<Module> module = parseModule(text, diags, parse_options);
  if (!module || diags.hasErrors()) {
    loaded.failed_stage = "parse";
    return loaded;
  }
  if (!verifyModule(*module, diags) || diags.hasErrors()) {
    loaded.failed_stage = "verify";
    return loaded;
  }
  if (options.import_gspmd &&
      (!importGspmdForm(*module, diags, loaded.from_gspmd) ||
       diags.hasErrors())) {
    loaded.failed_stage = "import";
    return loaded;
  }
  loaded.module = std::move(module);
  return loaded;
}

} // namespace shardlab
