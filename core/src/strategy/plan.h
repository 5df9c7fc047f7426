// A strategy before it is evaluated: a mesh and, for each argument of the
// entry function, the mesh axes of each dimension. Applying a plan strips
// the module of the user's shardings (argument and result shardings,
// per-op shardings, sharding constraints, reshards, sharding groups and
// meshes) and installs the plan's, so the candidate's program is what
// propagation derives from the arguments alone.
//
//   plan {mesh ["data"=2, "model"=4]; %x: [["data"], [], []],
//         %w1: [[], ["model"]]}
//   -> sdy.mesh @mesh = <["data"=2, "model"=4]>
//      func.func @main(%x {sdy.sharding = <@mesh, [{"data"}, {}, {}]>},
//                      %w1 {sdy.sharding = <@mesh, [{}, {"model"}]>}) ...
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"
#include "shardlab/support/result.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlab::strategy {

/// Per argument, per dimension: the mesh axes sharding it, major first.
using ArgAxes = std::vector<std::vector<std::string>>;

/// The mesh axes candidates name, each with one meaning: the strategy
/// passes find theirs by these names (evaluate.cpp passes them as the
/// passes' `axis` options).
namespace axis {
inline constexpr const char *kData = "data";       ///< the batch (DP, FSDP)
inline constexpr const char *kReplica = "replica"; ///< HSDP's replicas
inline constexpr const char *kModel = "model";     ///< Megatron's TP
inline constexpr const char *kSeq = "seq";         ///< SP (gathered)
inline constexpr const char *kExpert = "expert";   ///< EP
inline constexpr const char *kContext = "context"; ///< CP (a ring)
inline constexpr const char *kStage = "stage";     ///< pipeline stages
inline constexpr const char *kMicro = "micro";     ///< split micro-batches
} // namespace axis

struct Plan {
  std::string name;
  std::string description;
  std::vector<MeshAxis> mesh;
  std::vector<ArgAxes> args; ///< indexed like the entry's arguments
  /// Shardy user priority of each argument's sharded dims (`p0` wins over
  /// `p1`; -1: none). Candidates give data p0 and parameters p1, so where
  /// the batch and a weight want the same axis the batch keeps it and the
  /// weight is gathered where it is used (ZeRO-3), as GSPMD would.
  std::vector<int64_t> priorities;
  /// Axes that give priority 0 to every dim they lead (its major axis): an
  /// expert-parallel plan's "expert" on an expert weight's expert dim, as
  /// much the layout as the batch, while the weight's FSDP dim keeps the
  /// parameters' p1 (gathered where used), and so does a parameter split
  /// over ["data", "expert"] by FSDP×EP.
  std::vector<std::string> first_priority_axes;
  bool is_user = false; ///< the module as written: nothing applied
  /// Pipeline stages over the mesh's "stage" axis (0: none): the lowered
  /// program is cut into stages (shardlab-pipeline-stages).
  int64_t stages = 0;
  /// Interleaved pipeline: chunks a device (1: 1F1B's one; Megatron-LM's
  /// virtual pipeline stages), each of L / (S V) layers.
  int64_t virtual_stages = 1;
  /// Each micro-batch split in this many (0: as written), over the mesh's
  /// "micro" axis, which only the batch dimension uses
  /// (shardlab-split-micro-batches makes its devices iterations).
  int64_t micro_split = 0;
  /// A split plan's plan before the split (null otherwise): a split is
  /// made again from it, never on top of another.
  std::shared_ptr<const Plan> unsplit;
  /// What the backward recomputes (shardlab-recompute's policy: full,
  /// selective, none); empty: as the module does.
  std::string recompute;
  /// (argument, dimension) split with padding: FSDP's split of a parameter
  /// none of whose dimensions divides (as FSDP pads its flat shards), which
  /// checkDivisible lets through.
  std::vector<std::pair<size_t, size_t>> padded;
  /// (result, argument): entry results pinned to an argument's sharding in
  /// this plan (ZeRO-1's new weights leave as their weights came).
  std::vector<std::pair<size_t, size_t>> pinned_results;
  /// Also writes the arguments the plan leaves whole, replicated and
  /// closed, so that propagation cannot split them (ZeRO-1's weights,
  /// which their sharded updates would otherwise split as FSDP does).
  bool write_unsharded = false;
  /// Why the plan cannot be built (a dimension does not divide); the
  /// candidate is reported failed without running anything.
  std::string error;
};

/// The micro-batches `plan`'s step loops over, the module's `written` of
/// them each split in Plan::micro_split.
inline int64_t microBatchesOf(const Plan &plan, int64_t written) {
  return written * (plan.micro_split > 1 ? plan.micro_split : 1);
}

/// The priority of each of argument `arg`'s dims (-1: none): its
/// argument's, or 0 for a dim led by one of Plan::first_priority_axes.
std::vector<int64_t> dimPriorities(const Plan &plan, size_t arg);

/// Identifies a plan's mesh and shardings (not its name), to skip
/// strategies already evaluated.
std::string planKey(const Plan &plan);

/// The mesh as Shardy prints its body: `<["data"=2, "model"=4]>`.
std::string meshText(const std::vector<MeshAxis> &mesh);
/// One argument's dims as `[{"data"}p0, {}]`, with the priority of each
/// dim (-1 or none given: no priority).
std::string argAxesText(const ArgAxes &axes,
                        const std::vector<int64_t> &priorities = {});

/// Removes the user's shardings from `module` and installs the plan's mesh
/// (as @mesh) and argument shardings on `entry`. An error for a module the
/// plan cannot replace (manual computations are bound to the user's mesh).
Status applyPlan(Module &module, Operation &entry, const Plan &plan);

/// Whether every sharded dimension of `plan` divides by its axes (those in
/// Plan::padded need not); else a message naming the first that does not.
Status checkDivisible(const Plan &plan, const std::vector<std::string> &names,
                      const std::vector<std::vector<int64_t>> &shapes);

} // namespace shardlab::strategy
