// The per-device program of a module lowered to explicit collectives: every
// op with its local (per-device) shapes, costed (GEMM model or fusion
// roofline for compute; collective table inside a node, S-curve across
// nodes, for collectives, each with its explanation), as a scheduler Graph
// with async start/done pairs. Device topology comes from the mesh and
// `gpus_per_node`. A while loop is its body repeated trip-count times, one
// iteration after another as XLA schedules a loop body (nothing of
// iteration k+1 starts before iteration k ends); a loop whose trip count is
// unknown runs once, recorded as an assumption.
#pragma once

#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/hardware.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/cost/sol_model.h"
#include "shardlab/fusion/collective_pipeliner.h"
#include "shardlab/fusion/combine_collectives.h"
#include "shardlab/fusion/kernels.h"
#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "shardlab/schedule/graph.h"
#include "shardlab/schedule/validation.h"
#include "shardlab/support/result.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardlab::schedule {

enum class EstimatorMode {
  Real,        ///< the cost model (tables, roofline, S-curve), microseconds
  Approximate, ///< XLA's ApproximateLatencyEstimator: 1 / 1000 / 5000
};

/// The table a program is costed by and the interpolators built on it,
/// for one hardware and table (internal: schedule/program_internal.h).
struct CostTables;

struct ProgramOptions {
  EstimatorMode estimator = EstimatorMode::Real;
  cost::HardwarePreset hardware; ///< required in real mode
  /// Collective and GEMM table; null: the hardware's analytical table.
  const cost::PerfTable *table = nullptr;
  cost::SolConfig sol; ///< S-curve parameters (gpus_per_node used too)
  std::string func_name = "main";
  int64_t max_nodes = 2000000; ///< stop unrolling loops beyond this
  /// Iterations of a stablehlo.while whose trip count cannot be derived
  /// (--while-trip-count); 0: one iteration, with an assumption.
  int64_t while_trip_count = 0;
  /// Group the ops into the kernels XLA's GPU compiler launches
  /// (fusion/kernels.h) and cost each kernel once; off (--no-fusion), every
  /// op is a kernel of its own. Combining (below) does not depend on it.
  bool fusion = true;
  /// Combine independent collectives of one kind and device groups into one
  /// call, as XLA's combiners do (fusion/combine_collectives.h); off
  /// (--no-combine), each is a call of its own.
  bool combine_collectives = true;
  /// Let a loop's collectives overlap the next or previous iteration, as
  /// XLA's collective pipeliner does (fusion/collective_pipeliner.h; XLA's
  /// xla_gpu_enable_pipelined_* flags, off by default as in XLA).
  bool pipeline_collectives = false;
  /// Collectives within one node (NVLink) on a collective stream of their
  /// own beside the one of those that cross nodes (the NICs): an all-reduce
  /// over tensor parallelism runs while a data-parallel gather crosses the
  /// network, as PyTorch runs FSDP's gathers on a stream of their own beside
  /// Megatron's all-reduces; two collectives across nodes still take turns
  /// (one NIC). XLA's per-kind limits still hold (two all-reduces never
  /// overlap). Off: one collective stream, as XLA schedules.
  bool stream_per_link = false;
  /// Pipeline stages over the mesh's "stage" axis (0: none): the
  /// per-device program is rewritten by shardlab-pipeline-stages first.
  int64_t pipeline_stages = 0;
  /// The pipeline schedule: "1f1b" or "gpipe" (micro-batches in flight).
  std::string pipeline_schedule = "1f1b";
  /// Interleaved pipeline: chunks of layers a device holds (1: none).
  int64_t pipeline_virtual_stages = 1;
  /// Which stage's program: "every" (the embedding, head and loss on every
  /// stage, an unbalanced pipeline's slowest) or "middle" (layers only).
  std::string pipeline_stage_kind = "every";
  /// The mesh's "micro" axis splits each micro-batch (its devices are
  /// iterations): shardlab-split-micro-batches runs first.
  bool split_micro_batches = false;
  /// Emit a loop of n >= 6 iterations as its first, one steady iteration
  /// standing for n - 4 (Node::repeat) and its last three, instead of all
  /// n: the iterations are separated as XLA schedules a while body, so the
  /// steady ones are alike and the totals scale; the last three take the
  /// work around the loop the scheduler lays into them (e.g. 8 layers: 0,
  /// 1 x 4, 5, 6, 7). The strategy comparison's choice; off, every
  /// iteration is emitted, as traces and reports show them.
  bool extrapolate_loops = false;
  /// A fused attention call's time over the price of its GEMMs, as
  /// measured (a table's "fused_attention" entry, or
  /// --attention-slowdown); unset: its GEMMs' price, the softmax between
  /// them unpriced and said so in the assumptions.
  std::optional<cost::FusedAttentionEntry> fused_attention;
  /// Made once by makeCostTables for callers that build many programs for
  /// one hardware and table (the strategy comparison); null: each program
  /// makes its own. Read only, shared between threads.
  std::shared_ptr<const CostTables> cost_tables;
  /// Write each node's cost explanation (the report's ops, the Gantt's
  /// hover). The strategy comparison, which reads none of them, turns it
  /// off: the text was 6% of a comparison's instructions.
  bool explain = true;
};

/// The tables and interpolators `options` (real estimator) costs by: the
/// given table or the hardware's analytical one.
Result<std::shared_ptr<const CostTables>>
makeCostTables(const ProgramOptions &options);

/// One stablehlo.while of the program and how often it runs.
struct LoopInfo {
  std::string name;       ///< node path of the loop
  int64_t trip_count = 1; ///< iterations scheduled
  /// "constant bounds", "backend_config known_trip_count",
  /// "mhlo.frontend_attributes known_trip_count", "--while-trip-count" or
  /// "unknown (one iteration)".
  std::string source;
};

/// Devices of the program's mesh and how they map onto nodes.
struct Topology {
  std::string mesh_name;
  int64_t num_devices = 1;
  /// Where num_devices comes from: "mesh @name", "replica groups",
  /// "mhlo.num_partitions x mhlo.num_replicas" or "default".
  std::string device_count_source = "default";
  /// The form the module came in: "shardy", or "gspmd" when its
  /// mhlo.sharding strings were imported first.
  std::string input_form = "shardy";
  int64_t gpus_per_node = 8;
  int64_t num_nodes = 1;
  std::vector<int64_t> device_ids;
  /// Memory of one device (0: unknown), to say whether the step fits.
  int64_t device_memory_bytes = 0;
};

/// One collective of the per-device program, as the cost model saw it.
struct CollectiveInfo {
  int64_t start_node = -1;
  CollectiveKind kind = CollectiveKind::None;
  SharedDeviceGroups groups;
  std::string comm_type; ///< single-partition / world-level / ...
  int64_t bytes = 0;     ///< XLA's bytes_transferred
  double time_us = 0;
  std::string model;
};

struct Program {
  Graph graph;
  Topology topology;
  std::vector<CollectiveInfo> collectives;
  std::vector<std::string> assumptions;
  /// Collectives no model could cost, each taking XLA's fallback (5 ms);
  /// an assumption names them.
  int64_t uncosted_collectives = 0;
  /// custom_call targets no kernel model knows, with how many calls each
  /// (their bytes are costed at memory speed, and said so).
  std::map<std::string, int64_t> not_costed;
  std::vector<LoopInfo> loops;
  /// The machine it was costed for (its numbers and their sources) and the
  /// S-curve across nodes; empty hardware name with the approximate
  /// estimator.
  cost::HardwarePreset hardware;
  cost::SolConfig network;
  std::string gemm_rates; ///< where the GEMM rates come from
  /// The schedule it was built for, as the validation bands know them.
  BandSchedule band_schedule = BandSchedule::XlaDefault;
};

/// Builds the costed per-device program of `options.func_name` (or the only
/// function) in `module`. An error when it cannot; when the error is at a
/// place in the module (a dynamic shape), it is also a diagnostic there.
Result<Program> buildProgram(Module &module, const ProgramOptions &options,
                             DiagnosticEngine &diags);

} // namespace shardlab::schedule
