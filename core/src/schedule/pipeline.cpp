// runSchedulePipeline: text in, program and schedule out (the library
// behind shardlab-schedule).
#include "shardlab/schedule/pipeline.h"

#include "shardlab/passes/pass_manager.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace shardlab::schedule {
namespace {

int64_t parameterBytes(const Graph &graph) {
  int64_t bytes = 0;
  for (int64_t i = 0; i < graph.size(); ++i)
    if (graph.node(i).is_parameter)
      bytes += graph.node(i).output_bytes;
  return bytes;
}

SchedulerConfig schedulerConfig(const PipelineOptions &options,
                                const Program &program) {
  SchedulerConfig config = options.scheduler;
  if (!config.memory_limit_bytes && options.device_memory_bytes > 0)
    config.memory_limit_bytes = std::max<int64_t>(
        1, gpuMemoryLimitBytes(options.device_memory_bytes,
                               parameterBytes(program.graph)));
  return config;
}

// What the step took of kernels and transfers running together, said
// when some ran together; "" when none did.
std::string overlapAssumption(const Schedule &s) {
  if (!(s.comm_us - s.exposed_comm_us > 0))
    return "";
  const OverlapSlowdown &slow = s.config.overlap_slowdown;
  if (slow.none())
    return "overlap: kernels and collectives running together are taken not "
           "to slow each other (XLA's model; not measured here: a table's "
           "\"overlap\" entry, measured by bench/gpu/overlap.py, sets it)";
  char text[256];
  std::snprintf(text, sizeof text,
                "overlap: a kernel beside a transfer takes x%.3g its time, a "
                "transfer beside a kernel x%.3g (%.6g us of the compute "
                "stream lost to it), from ",
                slow.compute, slow.comm, s.contention_us);
  return text + slow.source;
}

PipelineResult failed(PipelineResult r, const char *stage, std::string error,
                      const DiagnosticEngine &diags) {
  r.stage = stage;
  r.error = std::move(error);
  r.diagnostics = diags.diagnostics();
  return r;
}

} // namespace

Status lowerToCollectives(Module &module, DiagnosticEngine &diags,
                          const BeforePropagation &before) {
  Result<PassPipeline> lowering = buildNamedPipeline("explicit");
  if (!lowering)
    return lowering.error();
  PassPipeline first;
  const std::pair<const char *, std::string> passes[] = {
      {"shardlab-recompute", before.recompute.empty()
                                 ? ""
                                 : "policy=" + std::string(before.recompute)},
      {"shardlab-expert-exchange",
       before.expert_axis.empty() ? ""
                                  : "axis=" + std::string(before.expert_axis)},
      {"shardlab-context-ring",
       before.context_axis.empty()
           ? ""
           : "axis=" + std::string(before.context_axis)}};
  for (const auto &[pass, options] : passes)
    if (!options.empty())
      if (Status added = appendPass(first, pass, options); !added)
        return added;
  first.steps.insert(first.steps.end(), lowering->steps.begin(),
                     lowering->steps.end());
  std::string failed;
  if (runPassPipeline(module, first, diags, &failed))
    return success();
  return makeError(failed + " failed");
}

int64_t presetDeviceMemoryBytes(std::string_view preset) {
  auto hw = cost::findHardwarePreset(preset);
  return hw.ok() ? hw->device_memory_bytes : 0;
}

PipelineResult runSchedulePipeline(std::string_view text,
                                   const PipelineOptions &options) {
  PipelineResult r;
  DiagnosticEngine diags;
  LoadOptions load;
  load.import_gspmd = true;
  LoadedModule loaded = loadModule(text, diags, load);
  if (loaded.failed_stage == "parse")
    return failed(std::move(r), "parse", "cannot parse the module", diags);
  if (loaded.failed_stage == "verify")
    return failed(std::move(r), "verify", "the module does not verify", diags);
  if (!loaded.module)
    return failed(std::move(r), "import",
                  "cannot import the module's GSPMD shardings", diags);
  Module *module = loaded.module.get();
  bool gspmd = loaded.from_gspmd;
  if (options.propagate)
    if (Status lowered =
            lowerToCollectives(*module, diags, {options.recompute});
        !lowered)
      return failed(std::move(r), "lower", lowered.error().message, diags);
  PipelineResult scheduled = scheduleLowered(*module, options);
  if (gspmd)
    scheduled.program.topology.input_form = "gspmd";
  std::vector<Diagnostic> all = diags.diagnostics();
  all.insert(all.end(), scheduled.diagnostics.begin(),
             scheduled.diagnostics.end());
  scheduled.diagnostics = std::move(all);
  return scheduled;
}

PipelineResult scheduleLowered(Module &module, const PipelineOptions &options) {
  PipelineResult r;
  DiagnosticEngine diags;
  Result<Program> program = buildProgram(module, options.program, diags);
  if (!program)
    return failed(std::move(r), "program", program.error().message, diags);
  r.program = std::move(*program);
  r.program.topology.device_memory_bytes = options.device_memory_bytes;
  Result<Schedule> s =
      scheduleGraph(r.program.graph, schedulerConfig(options, r.program));
  if (!s)
    return failed(std::move(r), "schedule", s.error().message, diags);
  r.schedule = std::move(*s);
  if (std::string said = overlapAssumption(r.schedule); !said.empty())
    r.program.assumptions.push_back(std::move(said));
  r.stage = "done";
  r.ok = true;
  return r;
}

Result<ProgramOptions> programOptionsFor(const TargetOptions &target) {
  auto hw = cost::findHardwarePreset(target.preset);
  if (!hw.ok())
    return makeError("preset: " + hw.error().message);
  ProgramOptions out;
  out.hardware = *hw;
  if (target.gemms_at_peak) {
    out.hardware.gemm_table_device.clear();
    out.hardware.gemm_efficiency_from.clear();
    out.hardware.sources["gemm"] =
        "analytical roofline at the datasheet peak (--gemms-at-peak)";
  }
  out.estimator =
      target.approximate ? EstimatorMode::Approximate : EstimatorMode::Real;
  out.sol = cost::solDefaultsFor(*hw);
  out.sol.gpus_per_node =
      target.gpus_per_node > 0 ? target.gpus_per_node : hw->gpus_per_node;
  auto sol = cost::applySolOptions(out.sol, target.sol_options);
  if (!sol.ok())
    return makeError("sol_options: " + sol.error().message);
  out.sol = *sol;
  out.table = target.table;
  if (target.table && target.table->fused_attention) {
    out.fused_attention = *target.table->fused_attention;
    out.fused_attention->source =
        "the table's fused_attention entry: " + out.fused_attention->source;
  }
  out.while_trip_count = target.while_trip_count;
  out.fusion = target.fusion;
  out.combine_collectives = target.combine_collectives;
  out.pipeline_collectives = target.pipeline_collectives;
  out.stream_per_link = target.stream_per_link;
  out.pipeline_stages = target.pipeline_stages;
  out.pipeline_schedule = target.pipeline_schedule;
  out.pipeline_virtual_stages = target.pipeline_virtual_stages;
  out.pipeline_stage_kind = target.pipeline_stage_kind;
  return out;
}

Result<PipelineOptions> pipelineOptionsFor(const TargetOptions &target) {
  Result<ProgramOptions> program = programOptionsFor(target);
  if (!program)
    return program.error();
  PipelineOptions out;
  out.scheduler.reruns = 1;
  out.program = std::move(*program);
  out.device_memory_bytes = out.program.hardware.device_memory_bytes;
  out.recompute = target.recompute;
  if (target.table && target.table->overlap) {
    const cost::OverlapEntry &o = *target.table->overlap;
    out.scheduler.overlap_slowdown = {o.compute_slowdown, o.comm_slowdown,
                                      "the table's overlap entry: " + o.source};
  }
  return out;
}

} // namespace shardlab::schedule
