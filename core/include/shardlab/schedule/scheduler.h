// XLA's latency-hiding scheduler over a Graph: bottom-up list scheduling
// with the ready-set rules in XLA's order (force delay, memory over limit,
// async done first, least stall, start at zero depth, free backed-up
// resource, async depth, avoid waste, unlock done, creates more ready nodes,
// decrease memory, original order), per-kind and per-stream limits on
// collectives in flight, GPU's rule against overlapping collectives whose
// groups share more than one device, and memory-pressure tracking. The
// result is a timeline (per-node start/end on the compute stream, each
// collective's transfer on its stream), totals, XLA's statistics (a forward
// simulation of the final order) and the memory curve.
#pragma once

#include "shardlab/support/result.h"

#include "shardlab/schedule/graph.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlab::schedule {

/// How much a kernel and a collective's transfer slow each other while both
/// run (NCCL's kernels take SMs and memory bandwidth from the GEMMs beside
/// them, and those from it): a kernel runs `compute` times longer while a
/// transfer is in flight, a transfer `comm` times longer while a kernel
/// runs. 1 and 1: they do not (XLA's model). Measured by bench/gpu/
/// overlap.py; a table's `overlap` entry carries it here.
///
/// Worked example: a 100 us kernel issued 10 us after a 40 us transfer
/// started, compute 1.5, comm 2: together they progress at 1/1.5 and 1/2
/// until the transfer's 30 us left take 60 us, the kernel then has done
/// 40 us of its work and runs its last 60 us alone: it ends 120 us after it
/// began, 20 us later than alone.
struct OverlapSlowdown {
  double compute = 1.0;
  double comm = 1.0;
  std::string source; ///< where the factors come from ("" at 1 and 1)
  bool none() const { return compute == 1.0 && comm == 1.0; }
};

struct SchedulerConfig {
  int overlap_limit = 1;  ///< collectives in flight per stream
  int per_kind_limit = 1; ///< XLA's all_gather/all_reduce/..._overlap_limit
  /// Per-kind overrides of per_kind_limit, indexed by CollectiveKind
  /// (XLA's all_gather_overlap_limit, all_reduce_overlap_limit, ...);
  /// 0: per_kind_limit.
  std::array<int, kNumCollectiveKinds> kind_limits{};
  bool gpu_no_shared_device_overlap = true;
  bool aggressive = true; ///< XLA GPU's aggressive_scheduling_policies
  /// Live-temporary limit in bytes (parameters excluded); nullopt: none.
  std::optional<int64_t> memory_limit_bytes;
  /// XLA's rerun loop: while the peak of live temporaries exceeds the
  /// initial memory limit, schedule again with the limit times
  /// `rerun_factor`, at most `reruns` times.
  int reruns = 0;
  double rerun_factor = 0.9;
  /// Applied to the final order's timeline (the step time, each node's
  /// times, exposure), not to the scheduler's choices.
  OverlapSlowdown overlap_slowdown;
};

/// The in-flight limit of one collective kind under `config`.
int kindLimit(const SchedulerConfig &config, CollectiveKind kind);

/// XLA's GPU memory limit: (device × 0.8 − parameters) × slop.
int64_t gpuMemoryLimitBytes(int64_t device_memory_bytes,
                            int64_t parameter_bytes, double slop = 0.95);

/// Where one node landed, in forward (program) time.
struct NodeTiming {
  double start_us = 0; ///< on the compute stream
  double end_us = 0;
  /// Async start only: the transfer on its collective stream.
  double transfer_start_us = 0, transfer_end_us = 0;
  double exposed_us = 0;  ///< async done only: stall waiting for the transfer
  int64_t live_bytes = 0; ///< temporaries live while the node runs
  std::string reason;     ///< the ready-set rule that picked it
};

/// One scheduling run of the memory rerun loop.
struct MemoryAttempt {
  int64_t limit_bytes = 0;     ///< the memory limit it ran under
  int64_t peak_live_bytes = 0; ///< its peak of live temporaries
  double step_time_us = 0;
};

struct KindTotals {
  int64_t count = 0;
  int64_t bytes = 0; ///< output bytes of the collectives, per device
  double comm_us = 0, exposed_us = 0, hidden_us = 0;
};

/// A temporary buffer live at the peak: the node defining it and its size.
struct LiveBuffer {
  int64_t node = -1;
  int64_t bytes = 0;
};

struct Schedule {
  std::vector<int64_t> order;     ///< node ids in program order
  std::vector<NodeTiming> timing; ///< indexed by node id
  double step_time_us = 0;        ///< the schedule's own end time
  double forward_sim_us = 0;      ///< XLA's statistics: forward simulation
  double compute_us = 0, comm_us = 0, exposed_comm_us = 0;
  /// The part of exposed_comm_us spent on collectives whose results no
  /// kernel of the step reads, only its results (the new weights' gathers
  /// after a sharded update): a next step could overlap them, this step's
  /// program cannot.
  double results_only_comm_us = 0;
  /// What kernels lost running beside transfers (OverlapSlowdown): the
  /// compute stream's time past its kernels' own.
  double contention_us = 0;
  double serial_us = 0;        ///< no overlap at all
  double critical_path_us = 0; ///< longest dependency path
  double lower_bound_us = 0;   ///< max(critical path, compute)
  std::array<KindTotals, kNumCollectiveKinds> per_kind{};
  int64_t parameter_bytes = 0;
  int64_t peak_memory_bytes = 0; ///< parameters + peak live temporaries
  /// The node running at the peak (the first in program order), and every
  /// temporary live while it runs, largest first: their bytes add up to
  /// peak_memory_bytes - parameter_bytes. -1 / empty: no temporaries.
  int64_t peak_node = -1;
  std::vector<LiveBuffer> peak_live;
  bool memory_over_limit = false; ///< above the initial memory limit
  int64_t limit_overrides = 0;    ///< picks that had to ignore a limit
  /// The rerun loop: every run in order (the last one is this schedule);
  /// empty without a memory limit.
  std::vector<MemoryAttempt> memory_attempts;
  int reruns = 0;
  SchedulerConfig config; ///< as the last run used it (reduced limit)
};

/// Schedules `graph` (node order = original order), rerunning with a lower
/// memory limit as configured. Errors: a cycle, or a per-kind limit above
/// the stream limit (XLA's CHECK in jax#25404).
Result<Schedule> scheduleGraph(const Graph &graph,
                               const SchedulerConfig &config);

} // namespace shardlab::schedule
