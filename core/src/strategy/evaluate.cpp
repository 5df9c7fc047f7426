// Evaluating one plan (see evaluate.h).
#include "strategy/evaluate.h"

#include "passes/pass_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/sharding/format.h"
#include "strategy/units.h"
#include "support/elapsed.h"
#include "verify/verifier.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#include <thread>
#define SHARDLAB_STRATEGY_THREADS 1
#endif

namespace shardlab::strategy {
namespace {

Candidate failedRow(Candidate row, std::string stage, std::string error) {
  row.ok = false;
  row.stage = std::move(stage);
  row.error = std::move(error);
  return row;
}

// The first error diagnostic's message, for a row's reason.
std::string firstError(const DiagnosticEngine &diags,
                       const std::string &fallback) {
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error)
      return fallback + ": " + d.message;
  return fallback;
}

std::string dimsText(const TensorSharding *sharding, size_t rank) {
  std::string out = "[";
  for (size_t d = 0; d < rank; ++d) {
    out += d ? ", " : "";
    out += sharding && d < sharding->dims.size()
               ? dimShardingToString(sharding->dims[d])
               : "{}";
  }
  return out + "]";
}

// The user's mesh and argument shardings, as written.
void describeUser(Module &module, Operation &entry, const EvaluationContext &c,
                  Candidate &row) {
  for (Operation &op : module.body())
    if (op.is("sdy.mesh")) {
      row.mesh = meshBodyToString(op.attrs.get("mesh")->mesh());
      break;
    }
  Block &body = entry.region(0).front();
  for (size_t i = 0; i < body.numArguments() && i < c.args.size(); ++i)
    row.shardings.push_back(
        {c.args[i].info.name,
         dimsText(getSharding(body.argument(i)), c.args[i].info.shape.size())});
}

void readSchedule(const schedule::PipelineResult &r, int64_t capacity,
                  Candidate &row) {
  const schedule::Schedule &s = r.schedule;
  row.ok = true;
  row.stage = "done";
  row.step_time_us = s.step_time_us;
  row.compute_us = s.compute_us;
  row.comm_us = s.comm_us;
  row.exposed_comm_us = s.exposed_comm_us;
  row.hidden_comm_us = s.comm_us - s.exposed_comm_us;
  for (int k = 1; k < schedule::kNumCollectiveKinds; ++k) {
    const schedule::KindTotals &t = s.per_kind[size_t(k)];
    if (t.count > 0)
      row.collectives.push_back(
          {std::string(schedule::toString(schedule::CollectiveKind(k))),
           t.count, t.bytes, t.comm_us, t.exposed_us});
  }
  row.peak_memory_bytes = s.peak_memory_bytes;
  row.argument_bytes = s.parameter_bytes;
  if (s.peak_node >= 0)
    row.peak_at = r.program.graph.node(s.peak_node).name;
  row.largest_live = schedule::largestLive(r.program, s, kLargestLive);
  row.assumptions = r.program.assumptions;
  row.uncosted_collectives = r.program.uncosted_collectives;
  row.capacity_bytes = capacity;
  if (capacity > 0)
    row.fits = s.peak_memory_bytes <= capacity;
}

// A bound before the schedule: every argument (weights, optimizer state,
// the batch) is live at the step's start, as split by the plan. A layout
// whose arguments alone exceed the device's memory cannot fit; "" when
// they do not (or there is no limit).
std::string overMemory(Module &module, Operation &entry,
                       const schedule::PipelineOptions &options) {
  if (options.device_memory_bytes <= 0)
    return "";
  Block &body = entry.region(0).front();
  int64_t bytes = 0;
  for (size_t i = 0; i < body.numArguments(); ++i)
    bytes += bytesPerDevice(module, body.argument(i));
  if (bytes <= options.device_memory_bytes)
    return "";
  return "does not fit: its arguments alone take " + bytesText(bytes) +
         " per device, more than the " +
         bytesText(options.device_memory_bytes) + " of device memory";
}

// The rewrites a plan's axes ask for: an "expert" axis's tokens move by
// all-to-all (shardlab-expert-exchange), a "context" axis runs attention
// as a ring (shardlab-context-ring).
schedule::BeforePropagation rewritesOf(const Plan &plan) {
  schedule::BeforePropagation before;
  before.recompute = plan.recompute;
  for (const MeshAxis &mesh_axis : plan.mesh) {
    if (mesh_axis.name == axis::kExpert)
      before.expert_axis = axis::kExpert;
    if (mesh_axis.name == axis::kContext)
      before.context_axis = axis::kContext;
  }
  return before;
}

Candidate run(const EvaluationContext &c, const Plan &plan, Candidate row) {
  if (!plan.error.empty())
    return failedRow(std::move(row), "plan", plan.error);
  DiagnosticEngine diags;
  std::unique_ptr<Module> copy = copyModule(*c.module);
  Module &module = *copy;
  // Verified once, after the last step (below), not after each of the
  // lowering's and the per-device program's (3% of a comparison).
  module.verify_passes = Module::VerifyPasses::None;
  Operation *entry = module.mainFunc();
  if (!entry)
    return failedRow(std::move(row), "plan", "no entry function");
  if (plan.is_user)
    describeUser(module, *entry, c, row);
  if (Status applied = applyPlan(module, *entry, plan); !applied)
    return failedRow(std::move(row), "plan", applied.error().message);
  // A pipeline's arguments are its stage's share, known once it is cut.
  if (std::string over = overMemory(module, *entry, c.options);
      !over.empty() && plan.stages == 0)
    return failedRow(std::move(row), "memory", over);
  if (Status lowered =
          schedule::lowerToCollectives(module, diags, rewritesOf(plan));
      !lowered)
    return failedRow(std::move(row), "propagate",
                     firstError(diags, lowered.error().message));
  schedule::PipelineOptions options = c.options;
  options.program.pipeline_stages = plan.stages;
  options.program.pipeline_virtual_stages = plan.virtual_stages;
  options.program.split_micro_batches = plan.micro_split > 1;
  schedule::PipelineResult scheduled =
      schedule::scheduleLowered(module, options);
  if (!scheduled.ok)
    return failedRow(std::move(row), scheduled.stage, scheduled.error);
  if (!verifyModule(module, diags))
    return failedRow(std::move(row), "verify",
                     firstError(diags, "the per-device program is not valid"));
  readSchedule(scheduled, c.options.device_memory_bytes, row);
  return row;
}

} // namespace

Candidate evaluatePlan(const EvaluationContext &c, const Plan &plan) {
  auto start = std::chrono::steady_clock::now();
  Candidate row;
  row.name = plan.name;
  row.description = plan.description;
  row.is_user = plan.is_user;
  if (!plan.is_user) {
    row.mesh = meshText(plan.mesh);
    for (size_t i = 0; i < plan.args.size() && i < c.args.size(); ++i)
      row.shardings.push_back(
          {c.args[i].info.name,
           argAxesText(plan.args[i], dimPriorities(plan, i))});
  }
  row = run(c, plan, std::move(row));
  row.elapsed_ms = msSince(start);
  return row;
}

int effectiveThreads(int threads) {
#ifdef SHARDLAB_STRATEGY_THREADS
  return threads > 0 ? threads
                     : int(std::max(1u, std::thread::hardware_concurrency()));
#else
  (void)threads;
  return 1;
#endif
}

std::vector<Candidate> evaluatePlans(const EvaluationContext &context,
                                     const std::vector<Plan> &plans,
                                     int threads) {
  std::vector<Candidate> rows(plans.size());
#ifdef SHARDLAB_STRATEGY_THREADS
  threads =
      int(std::min<size_t>(size_t(effectiveThreads(threads)), plans.size()));
  if (threads > 1) {
    // Each worker takes the next plan; a plan's evaluation copies the
    // module and shares only the read-only context (the module as loaded
    // among it).
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < plans.size(); i = next++)
        rows[i] = evaluatePlan(context, plans[i]);
    };
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t)
      workers.emplace_back(work);
    work();
    for (std::thread &w : workers)
      w.join();
    return rows;
  }
#endif
  for (size_t i = 0; i < plans.size(); ++i)
    rows[i] = evaluatePlan(context, plans[i]);
  return rows;
}

} // namespace shardlab::strategy
