// What shardlab-schedule does, as one library call: parse and verify a
// module, run the propagation pipeline and Shardy's export pipeline with
// explicit collectives (unless the module already holds its collectives),
// build the costed per-device program, choose the memory limit (XLA's GPU
// rule from the device memory, or an explicit one) and schedule it with
// the latency-hiding scheduler and its memory rerun loop.
#pragma once

#include "shardlab/ir/diagnostics.h"
#include "shardlab/schedule/program.h"
#include "shardlab/schedule/scheduler.h"
#include "shardlab/support/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::schedule {

struct PipelineOptions {
  /// Run propagation and the lowering to explicit collectives first.
  bool propagate = true;
  /// What the backward recomputes, set before propagation
  /// (shardlab-recompute: full, selective or none); empty: as written.
  std::string recompute;
  ProgramOptions program;
  /// Limits and reruns; a memory_limit_bytes set here is used as is.
  SchedulerConfig scheduler;
  /// Without an explicit limit: XLA's GPU limit from this device memory
  /// ((device × 0.8 − parameters) × 0.95); 0: no memory limit.
  int64_t device_memory_bytes = 0;
};

/// Where the program runs and how it is costed, as shardlab-schedule's flags
/// and the WASM schedule options give it.
struct TargetOptions {
  std::string preset = "h100";
  int64_t gpus_per_node = 0; ///< 0: the preset's
  std::string sol_options;   ///< `nic_speed_gbps=...,gpus_per_node=...`
  bool approximate = false;  ///< XLA's 1 / 1000 / 5000 estimator
  const cost::PerfTable *table = nullptr;
  int64_t while_trip_count = 0;    ///< loops of unknown trip count (0: once)
  bool fusion = true;              ///< kernels as XLA fuses them (--no-fusion)
  bool combine_collectives = true; ///< XLA's combiners (--no-combine)
  /// XLA's collective pipeliner (--pipeline-collectives)
  bool pipeline_collectives = false;
  /// NVLink collectives on a stream of their own (--stream-per-link)
  bool stream_per_link = false;
  /// GEMMs at the preset's datasheet peak (the analytical roofline), not at
  /// measured efficiency (--gemms-at-peak; to compare)
  bool gemms_at_peak = false;
  int64_t pipeline_stages = 0;               ///< --pipeline-stages (0: none)
  std::string pipeline_schedule = "1f1b";    ///< --pipeline-schedule
  int64_t pipeline_virtual_stages = 1;       ///< --virtual-stages
  std::string pipeline_stage_kind = "every"; ///< --pipeline-stage-kind
  std::string recompute; ///< --recompute (empty: as written)
};

/// ProgramOptions for `target`: the preset's hardware, its S-curve defaults
/// with the option string applied, the table. An error (naming the bad
/// option) when the preset or the option string is unknown.
Result<ProgramOptions> programOptionsFor(const TargetOptions &target);

/// PipelineOptions for `target` with the defaults of shardlab-schedule: the
/// preset's device memory for XLA's memory limit, one rerun.
Result<PipelineOptions> pipelineOptionsFor(const TargetOptions &target);

struct PipelineResult {
  bool ok = false;
  std::string error;
  std::vector<Diagnostic> diagnostics;
  std::string stage; ///< where it stopped: parse, verify, import, lower,
                     ///< program, schedule, or done
  Program program;
  Schedule schedule;
};

/// Runs the whole pipeline over module text.
PipelineResult runSchedulePipeline(std::string_view text,
                                   const PipelineOptions &options);

/// The part after lowering: builds the costed program of `module` (which
/// holds its collectives) and schedules it with the memory rerun loop.
PipelineResult scheduleLowered(Module &module, const PipelineOptions &options);

/// The strategy passes that rewrite a module before propagation, each
/// run when its field is set.
struct BeforePropagation {
  std::string_view recompute;    ///< shardlab-recompute's policy
  std::string_view expert_axis;  ///< shardlab-expert-exchange's axis
  std::string_view context_axis; ///< shardlab-context-ring's axis
};

/// The lowering it runs: the propagation pipeline, then Shardy's export
/// pipeline with explicit collectives (meshes kept as symbols); first the
/// passes `before` asks for.
Status lowerToCollectives(Module &module, DiagnosticEngine &diags,
                          const BeforePropagation &before = {});

/// Device memory of a built-in hardware preset (h100, h200, b200, a100);
/// 0 when unknown.
int64_t presetDeviceMemoryBytes(std::string_view preset);

} // namespace shardlab::schedule
