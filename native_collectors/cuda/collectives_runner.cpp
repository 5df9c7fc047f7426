// NCCL measurements in nccl-tests' style: out-of-place operations on one
// stream per GPU, warm-up, then per-iteration CUDA events; an iteration's
// time is the slowest GPU's (max over local GPUs, then over processes, as
// nccl-tests -I does); the median, spread and samples go into the table.
// All groups of a group set run concurrently (as XLA runs them).
#include "collectives_runner.h"

#include "device_info.h"
#include "kernels.h"
#include "launcher.h"
#include "progress.h"
#include "shardlab/collectors/resume.h"
#include "shardlab/collectors/stats.h"

#include <nccl.h>

#include <cstdio>
#include <ctime>

namespace shardlab::collectors {
namespace {

void ncclCheck(ncclResult_t r, const std::string &what) {
  if (r != ncclSuccess)
    throw CollectorError(what + " failed: " + ncclGetErrorString(r) + " (" +
                         ncclGetLastError(nullptr) +
                         "); set NCCL_DEBUG=INFO for details");
}

ncclDataType_t ncclType(const std::string &dtype) {
  if (dtype == "bf16")
    return ncclBfloat16;
  if (dtype == "f16")
    return ncclFloat16;
  if (dtype == "s32")
    return ncclInt32;
  return ncclFloat32;
}

// One GPU driven by this process.
struct Slot {
  int device = 0;
  int64_t rank = 0; // global rank
  cudaStream_t stream = nullptr;
  ncclComm_t world = nullptr, group = nullptr;
  int64_t pos = -1; // position in its group, -1 = not in a group
  void *send = nullptr, *recv = nullptr;
  unsigned long long *wrong = nullptr;
  std::vector<cudaEvent_t> start, stop;
};

struct Job {
  const CollectiveOptions &opts;
  std::unique_ptr<Launcher> launcher;
  std::vector<Slot> slots;
  Topology topo;
};

void issue(const CollectivePoint &p, const Slot &s, int64_t n) {
  const ncclDataType_t t = ncclType(p.dtype);
  const size_t eb = static_cast<size_t>(collectiveDtypeBytes(p.dtype));
  const RankCounts &c = p.counts;
  switch (p.op) {
  case CollOp::AllReduce:
    ncclCheck(ncclAllReduce(s.send, s.recv, c.send_count, t, ncclSum, s.group,
                            s.stream),
              "ncclAllReduce");
    return;
  case CollOp::AllGather:
    ncclCheck(ncclAllGather(s.send, s.recv, c.send_count, t, s.group, s.stream),
              "ncclAllGather");
    return;
  case CollOp::ReduceScatter:
    ncclCheck(ncclReduceScatter(s.send, s.recv, c.recv_count, t, ncclSum,
                                s.group, s.stream),
              "ncclReduceScatter");
    return;
  case CollOp::AllToAll:
    for (int64_t peer = 0; peer < n; ++peer) {
      const size_t off = static_cast<size_t>(peer * c.chunk) * eb;
      ncclCheck(ncclSend(static_cast<char *>(s.send) + off, c.chunk, t,
                         static_cast<int>(peer), s.group, s.stream),
                "ncclSend");
      ncclCheck(ncclRecv(static_cast<char *>(s.recv) + off, c.chunk, t,
                         static_cast<int>(peer), s.group, s.stream),
                "ncclRecv");
    }
    return;
  case CollOp::CollectivePermute:
    for (const auto &[src, dst] : p.pairs) {
      if (src == s.pos)
        ncclCheck(ncclSend(s.send, c.send_count, t, static_cast<int>(dst),
                           s.group, s.stream),
                  "ncclSend");
      if (dst == s.pos)
        ncclCheck(ncclRecv(s.recv, c.recv_count, t, static_cast<int>(src),
                           s.group, s.stream),
                  "ncclRecv");
    }
    return;
  }
}

// One iteration on every local GPU of a group; events when `it` >= 0.
void iteration(Job &job, const CollectivePoint &p, int64_t n, int it) {
  for (Slot &s : job.slots)
    if (s.group && it >= 0)
      cudaCheck(cudaEventRecord(s.start[it], s.stream), "cudaEventRecord");
  ncclCheck(ncclGroupStart(), "ncclGroupStart");
  for (Slot &s : job.slots)
    if (s.group)
      issue(p, s, n);
  ncclCheck(ncclGroupEnd(), "ncclGroupEnd");
  for (Slot &s : job.slots)
    if (s.group && it >= 0)
      cudaCheck(cudaEventRecord(s.stop[it], s.stream), "cudaEventRecord");
}

void syncAll(Job &job) {
  for (Slot &s : job.slots)
    cudaCheck(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
}

PatternKind kindOf(CollOp op) {
  switch (op) {
  case CollOp::AllReduce:
    return PatternKind::AllReduce;
  case CollOp::AllGather:
    return PatternKind::AllGather;
  case CollOp::ReduceScatter:
    return PatternKind::ReduceScatter;
  case CollOp::AllToAll:
    return PatternKind::AllToAll;
  case CollOp::CollectivePermute:
    return PatternKind::Permute;
  }
  return PatternKind::AllReduce;
}

PatternSpec specFor(const CollectivePoint &p, const Slot &s, int64_t n) {
  PatternSpec spec{kindOf(p.op), s.pos, n, p.counts.chunk, -1};
  for (const auto &[src, dst] : p.pairs)
    if (dst == s.pos)
      spec.source = src;
  return spec;
}

void fillInputs(Job &job, const CollectivePoint &p, int64_t n) {
  DeviceType t{};
  deviceTypeOf(p.dtype, &t);
  for (Slot &s : job.slots)
    if (s.group) {
      cudaCheck(cudaSetDevice(s.device), "cudaSetDevice");
      cudaCheck(
          fillInput(s.send, t, p.counts.send_count, specFor(p, s, n), s.stream),
          "fill input");
    }
}

// Runs the op once more on cleared outputs; mismatches over the job.
double countMismatches(Job &job, const CollectivePoint &p, int64_t n) {
  DeviceType t{};
  deviceTypeOf(p.dtype, &t);
  for (Slot &s : job.slots)
    if (s.group) {
      cudaCheck(cudaSetDevice(s.device), "cudaSetDevice");
      cudaCheck(fillConstant(s.recv, t, p.counts.recv_count, -1.0f, s.stream),
                "clear output");
      cudaCheck(cudaMemsetAsync(s.wrong, 0, sizeof *s.wrong, s.stream),
                "cudaMemsetAsync");
    }
  iteration(job, p, n, -1);
  std::vector<double> wrong = {0};
  for (Slot &s : job.slots)
    if (s.group) {
      cudaCheck(cudaSetDevice(s.device), "cudaSetDevice");
      cudaCheck(countWrong(s.recv, t, p.counts.recv_count, specFor(p, s, n),
                           s.wrong, s.stream),
                "check output");
      unsigned long long host = 0;
      cudaCheck(cudaMemcpyAsync(&host, s.wrong, sizeof host,
                                cudaMemcpyDeviceToHost, s.stream),
                "cudaMemcpyAsync");
      cudaCheck(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
      wrong[0] += static_cast<double>(host);
    }
  job.launcher->max(&wrong);
  return wrong[0];
}

// Per-iteration times (us): max over local GPUs, then over processes.
std::vector<double> timeIterations(Job &job, const CollectivePoint &p,
                                   int64_t n) {
  const int iters = static_cast<int>(job.opts.iters);
  for (int64_t i = 0; i < job.opts.warmup; ++i)
    iteration(job, p, n, -1);
  syncAll(job);
  std::vector<double> one = {0};
  job.launcher->max(&one); // line processes up before timing
  for (int it = 0; it < iters; ++it)
    iteration(job, p, n, it);
  syncAll(job);
  std::vector<double> us(static_cast<size_t>(iters), 0.0);
  for (Slot &s : job.slots)
    for (int it = 0; s.group && it < iters; ++it) {
      float ms = 0;
      cudaCheck(cudaEventElapsedTime(&ms, s.start[it], s.stop[it]),
                "cudaEventElapsedTime");
      us[it] = std::max(us[it], ms * 1000.0);
    }
  job.launcher->max(&us);
  return us;
}

void splitGroups(Job &job, const GroupSet &gs) {
  ncclCheck(ncclGroupStart(), "ncclGroupStart");
  for (Slot &s : job.slots) {
    int color = NCCL_SPLIT_NOCOLOR, key = 0;
    for (size_t g = 0; g < gs.lists.size(); ++g)
      for (size_t i = 0; i < gs.lists[g].size(); ++i)
        if (gs.lists[g][i] == s.rank)
          color = static_cast<int>(g), key = static_cast<int>(i);
    s.pos = color == NCCL_SPLIT_NOCOLOR ? -1 : key;
    cudaCheck(cudaSetDevice(s.device), "cudaSetDevice");
    ncclCheck(ncclCommSplit(s.world, color, key, &s.group, nullptr),
              "ncclCommSplit(" + gs.text + ")");
  }
  ncclCheck(ncclGroupEnd(), "ncclGroupEnd");
}

void freeGroups(Job &job) {
  for (Slot &s : job.slots)
    if (s.group) {
      ncclCommDestroy(s.group);
      s.group = nullptr;
    }
}

std::vector<int> localDevices(const CollectiveOptions &o, const Launcher &l) {
  const int visible = cudaDeviceCount();
  const int per =
      o.ngpus > 0 ? static_cast<int>(o.ngpus) : (l.size() > 1 ? 1 : visible);
  const int first = l.local_rank() * per;
  if (first + per > visible)
    throw CollectorError(
        "process " + std::to_string(l.rank()) + " needs GPUs " +
        std::to_string(first) + ".." + std::to_string(first + per - 1) +
        " but only " + std::to_string(visible) + " are visible (-g " +
        std::to_string(per) + ", " + std::to_string(l.local_size()) +
        " process(es) on this node)");
  std::vector<int> devices;
  for (int i = 0; i < per; ++i)
    devices.push_back(first + i);
  return devices;
}

void initComms(Job &job, const std::vector<int> &devices) {
  ncclUniqueId id{};
  if (job.launcher->rank() == 0)
    ncclCheck(ncclGetUniqueId(&id), "ncclGetUniqueId");
  job.launcher->broadcast(&id, sizeof id);
  job.slots.resize(devices.size());
  const int64_t per = static_cast<int64_t>(devices.size());
  ncclCheck(ncclGroupStart(), "ncclGroupStart");
  for (size_t i = 0; i < devices.size(); ++i) {
    Slot &s = job.slots[i];
    s.device = devices[i];
    s.rank = job.launcher->rank() * per + static_cast<int64_t>(i);
    cudaCheck(cudaSetDevice(s.device), "cudaSetDevice");
    cudaCheck(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking),
              "cudaStreamCreate");
    ncclCheck(ncclCommInitRank(&s.world, static_cast<int>(job.topo.world), id,
                               static_cast<int>(s.rank)),
              "ncclCommInitRank");
  }
  ncclCheck(ncclGroupEnd(), "NCCL communicator initialisation");
}

void allocBuffers(Job &job, const CollectivePlan &plan) {
  const auto [send, recv] = maxBufferBytes(plan);
  for (Slot &s : job.slots) {
    cudaCheck(cudaSetDevice(s.device), "cudaSetDevice");
    int64_t free_b = 0, total_b = 0;
    memoryInfo(&free_b, &total_b);
    if (send + recv + (int64_t{1} << 30) > free_b)
      throw CollectorError("GPU " + std::to_string(s.device) + " has " +
                           formatBytes(free_b) + " free; the sweep needs " +
                           formatBytes(send) + " + " + formatBytes(recv) +
                           " + 1G reserve: lower -e/--maxbytes");
    cudaCheck(cudaMalloc(&s.send, static_cast<size_t>(send)), "cudaMalloc");
    cudaCheck(cudaMalloc(&s.recv, static_cast<size_t>(recv)), "cudaMalloc");
    cudaCheck(cudaMalloc(&s.wrong, sizeof *s.wrong), "cudaMalloc");
    s.start.resize(static_cast<size_t>(job.opts.iters));
    s.stop.resize(static_cast<size_t>(job.opts.iters));
    for (size_t i = 0; i < s.start.size(); ++i) {
      cudaCheck(cudaEventCreate(&s.start[i]), "cudaEventCreate");
      cudaCheck(cudaEventCreate(&s.stop[i]), "cudaEventCreate");
    }
  }
}

std::string label(const CollectivePlan &plan, const CollectivePoint &p) {
  return std::string(opName(p.op)) + " " + p.dtype + " " +
         formatBytes(p.counts.bytes) + " " + plan.group_sets[p.group_set].text;
}

std::string description(const CollectiveOptions &o) {
  return "NCCL out-of-place collectives, all groups of a replica-group set "
         "concurrently; per-iteration CUDA events, time = slowest GPU; median "
         "of " +
         std::to_string(o.iters) + " iterations after " +
         std::to_string(o.warmup) +
         " warm-up; bytes = XLA bytes_transferred (nccl-tests algbw size); "
         "results checked: " +
         (o.check ? "yes" : "no");
}

// Rank 0: the output table and which points it already has.
struct Output {
  std::unique_ptr<OutputTable> table;
  std::vector<char> skip;
};

Output openOutput(Job &job, const CollectivePlan &plan,
                  const std::vector<int> &devices,
                  const std::vector<std::string> &args) {
  Output out;
  out.skip.assign(plan.points.size(), 0);
  std::string error;
  if (job.launcher->rank() == 0) {
    RunEnvironment env = probeEnvironment(devices);
    env.gpu_count = job.topo.world;
    env.nodes = job.launcher->nodes();
    env.gpus_per_node = job.topo.ranks_per_node;
    env.partition_size = job.topo.partition_size;
    int nccl = 0;
    ncclGetVersion(&nccl);
    env.nccl = nccl;
    Result<OutputTable> t = openOutputTable(
        job.opts.out,
        buildMetadata(env, "shardlab-collect-collectives", args,
                      description(job.opts), std::time(nullptr)),
        job.opts.overwrite);
    if (t) {
      out.table = std::make_unique<OutputTable>(std::move(*t));
      for (size_t i = 0; i < plan.points.size(); ++i)
        out.skip[i] = out.table->done.count(plan.points[i].key) != 0;
    } else {
      error = t.error().message;
    }
  }
  std::vector<double> failed = {error.empty() ? 0.0 : 1.0};
  job.launcher->max(&failed);
  if (failed[0] > 0)
    throw CollectorError(error.empty() ? "rank 0 could not open the output"
                                       : error);
  job.launcher->broadcast(out.skip.data(), out.skip.size());
  return out;
}

// Measures one point; returns false if its results were wrong.
bool measurePoint(Job &job, const CollectivePlan &plan,
                  const CollectivePoint &p, Output *out) {
  const int64_t n = plan.group_sets[p.group_set].group_size;
  fillInputs(job, p, n);
  std::vector<double> us = timeIterations(job, p, n);
  const double wrong = job.opts.check ? countMismatches(job, p, n) : 0;
  if (job.launcher->rank() != 0)
    return wrong == 0;
  if (wrong > 0) {
    std::fprintf(stderr, "\nFAILED %s: %.0f wrong elements (not recorded)\n",
                 label(plan, p).c_str(), wrong);
    return false;
  }
  cost::CollectiveEntry e = entryFor(plan, p);
  e.time = summarize(us);
  e.throughput_bytes_per_s = e.bytes / (e.time->median_us * 1e-6);
  const Bandwidth bw =
      computeBandwidth(p.op, e.bytes, n, e.time->median_us * 1e-6);
  std::printf("%-18s %-5s %12lld %-22s %10.2f us  algbw %8.2f  busbw %8.2f "
              "GB/s  spread %.1f%%\n",
              e.op.c_str(), e.dtype.c_str(), static_cast<long long>(e.bytes),
              plan.group_sets[p.group_set].text.c_str(), e.time->median_us,
              bw.algbw_gb_per_s, bw.busbw_gb_per_s, 100 * spread(*e.time));
  std::fflush(stdout);
  out->table->table.collectives.push_back(e);
  return true;
}

int runPlan(Job &job, const CollectivePlan &plan, Output &out) {
  CheckpointWriter writer(job.opts.out, 10.0);
  const bool root = job.launcher->rank() == 0;
  Progress progress(static_cast<int64_t>(plan.points.size()),
                    job.opts.quiet || !root);
  int64_t failed = 0, done = 0;
  for (size_t gs = 0; gs < plan.group_sets.size(); ++gs) {
    bool split = false;
    for (size_t i = 0; i < plan.points.size(); ++i) {
      const CollectivePoint &p = plan.points[i];
      if (p.group_set != gs)
        continue;
      progress.update(done++, label(plan, p));
      if (out.skip[i])
        continue;
      if (!split)
        splitGroups(job, plan.group_sets[gs]), split = true;
      failed += !measurePoint(job, plan, p, &out);
      if (root)
        if (Result<bool> w =
                writer.maybe(out.table->table, nowSeconds(), false);
            !w)
          throw CollectorError(w.error().message);
    }
    freeGroups(job);
  }
  if (root) {
    if (Result<bool> w = writer.maybe(out.table->table, nowSeconds(), true); !w)
      throw CollectorError(w.error().message);
    progress.finish("wrote " +
                    std::to_string(out.table->table.collectives.size()) +
                    " collective entries to " + job.opts.out);
  }
  return failed ? 1 : 0;
}

} // namespace

int runCollectiveSweep(const CollectiveOptions &opts,
                       const std::vector<std::string> &args, int *argc,
                       char ***argv) {
  Job job{opts, createLauncher(argc, argv), {}, {}};
  const std::vector<int> devices = localDevices(opts, *job.launcher);
  const int64_t per = static_cast<int64_t>(devices.size());
  job.topo.world = per * job.launcher->size();
  job.topo.ranks_per_node = per * job.launcher->local_size();
  job.topo.partition_size =
      opts.partition_size > 0 ? opts.partition_size : job.topo.ranks_per_node;
  Result<CollectivePlan> plan = planCollectives(opts, job.topo);
  if (!plan)
    throw CollectorError(plan.error().message);
  initComms(job, devices);
  allocBuffers(job, *plan);
  Output out = openOutput(job, *plan, devices, args);
  const int rc = runPlan(job, *plan, out);
  for (Slot &s : job.slots) {
    cudaSetDevice(s.device);
    ncclCommDestroy(s.world);
    for (size_t i = 0; i < s.start.size(); ++i)
      cudaEventDestroy(s.start[i]), cudaEventDestroy(s.stop[i]);
    cudaFree(s.send), cudaFree(s.recv), cudaFree(s.wrong);
    cudaStreamDestroy(s.stream);
  }
  return rc;
}

} // namespace shardlab::collectors
