// shardlab-split-micro-batches: the program one device runs when each
// micro-batch of a step is split into k smaller ones, run one after another.
//
// The split is written as a sharding, so that propagation carries it
// through every op as it carries any other: the mesh has a "micro" axis of
// k (minor) that only the batch dimension of the step's data uses. Lowered
// to the per-device program, every per-micro-batch tensor is k times
// smaller. This pass then makes that axis time instead of devices:
//
// 1. The loop over micro-batches (the one around the layer loops,
//    layer_loops.h) runs k times as many iterations.
// 2. A collective's groups are re-read on the mesh without the axis: an
//    all-reduce over "micro" alone (the gradient of a batch split across
//    it) disappears, as the k parts are summed by the accumulation that the
//    loop already does; one over ("data", "micro") becomes one over "data".
//    Any other collective across the axis (gathering the batch back) is an
//    error: the split would not be a split of the loop.
// 3. The mesh loses the axis, so the devices, nodes and groups the cost
//    model sees are the real ones.
// 4. The data the loop reads a micro-batch of at a time holds all k M of
//    them: [M, rows / k, ...] -> [k M, rows / k, ...] a device.
// 5. The offset tables the program looks up by partition_id (where each
//    device's part of a sharded dimension starts) are re-read on the mesh
//    without the axis where devices differing only along it agree (every
//    table but one slicing the batch); the others are left as they are.
//
// Worked example: mesh ["data"=2, "micro"=4], tokens [M=4, 8, S] with dim 1
// on ("data", "micro"): per device [4, 1, S] per micro-batch of 1 row; the
// weight gradients' all-reduces over devices {0..7} by ("data", "micro")
// become ones over {0, 1} on the mesh ["data"=2]; the loop runs 16 times.
#include "passes/strategy/layer_loops.h"
#include "passes/strategy/strategy_passes.h"

#include "ir/op_properties.h"
#include "ir/while_loops.h"
#include "passes/export/local_builder.h"
#include "passes/pass_utils.h"
#include "sharding/device_layout.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace shardlab {
namespace {

class SplitMicroBatches {
public:
  SplitMicroBatches(Module &module, Operation &func, std::string axis,
                    DiagnosticEngine &diags)
      : module_(module), ctx_(module.ctx()), func_(func),
        axis_(std::move(axis)), diags_(diags) {}
  bool run();

private:
  bool fail(const std::string &message) {
    diags_.error(func_.loc, "shardlab-split-micro-batches: " + message);
    return false;
  }
  bool findMesh();
  /// The id of device `id` on the mesh without the axis.
  int64_t reducedId(int64_t id) const;
  /// `groups` on the mesh without the axis (each once); `*across`: some
  /// group holds two devices that differ only along the axis.
  std::vector<std::vector<int64_t>>
  reduceGroups(const std::vector<std::vector<int64_t>> &groups,
               bool *across) const;
  bool rewriteCollective(Operation &op);
  /// A collective's groups (replica_groups or source_target_pairs) on the
  /// mesh without the axis, and whether any group spans it.
  struct ReducedGroups {
    int64_t outside = -1; ///< a device beyond the mesh (-1: none)
    bool across = false;
    bool alone = false;           ///< every group one device
    const Attr *groups = nullptr; ///< the groups as an attribute
  };
  ReducedGroups reduceAttr(const Attr *attr);
  /// By attribute: the export's collectives over the same axes share one
  /// (1,024 devices' groups, read and reduced once).
  std::unordered_map<const Attr *, ReducedGroups> reduced_groups_;
  void reduceDeviceTables();
  bool setTrips(Operation &loop, int64_t trips);
  void holdAllMicroBatches(Operation &loop, int64_t micro_batches);

  Module &module_;
  Context &ctx_;
  Operation &func_;
  std::string axis_;
  DiagnosticEngine &diags_;
  Operation *mesh_op_ = nullptr;
  Mesh mesh_, reduced_;
  int64_t split_ = 1;
  /// Each device's id on the mesh without the axis.
  std::vector<int64_t> reduced_id_;
};

bool SplitMicroBatches::findMesh() {
  for (Operation &op : module_.body()) {
    const Attr *mesh = op.is("sdy.mesh") ? op.attrs.get("mesh") : nullptr;
    if (!mesh || mesh->kind != AttrKind::Mesh ||
        mesh->mesh().axisIndex(axis_) < 0)
      continue;
    mesh_op_ = &op;
    mesh_ = mesh->mesh();
    split_ = *mesh_.axisSize(axis_);
    if (!mesh_.device_ids.empty())
      return fail("the mesh has explicit device ids");
    std::vector<AxisRef> others;
    for (const MeshAxis &a : mesh_.axes)
      if (a.name != axis_) {
        reduced_.axes.push_back(a);
        others.push_back(AxisRef{a.name});
      }
    // A device's id on the mesh without the axis: its digits along the
    // other axes (ids are positions: no explicit device ids).
    const AxesDigits without(mesh_, others);
    reduced_id_.resize(size_t(mesh_.totalSize()));
    for (int64_t id = 0; id < mesh_.totalSize(); ++id)
      reduced_id_[size_t(id)] = without.index(id);
    return true;
  }
  return fail("no mesh has an axis \"" + axis_ + "\"");
}

int64_t SplitMicroBatches::reducedId(int64_t id) const {
  return reduced_id_[size_t(id)];
}

std::vector<std::vector<int64_t>>
SplitMicroBatches::reduceGroups(const std::vector<std::vector<int64_t>> &groups,
                                bool *across) const {
  std::set<std::vector<int64_t>> seen;
  std::vector<std::vector<int64_t>> out;
  for (const std::vector<int64_t> &group : groups) {
    std::vector<int64_t> ids;
    for (int64_t d : group)
      ids.push_back(reducedId(d));
    std::vector<int64_t> unique = ids;
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    *across |= unique.size() < ids.size();
    // Keep the members in their order, each once.
    std::vector<int64_t> kept;
    for (int64_t d : ids)
      if (std::find(kept.begin(), kept.end(), d) == kept.end())
        kept.push_back(d);
    if (seen.insert(unique).second)
      out.push_back(std::move(kept));
  }
  return out;
}

SplitMicroBatches::ReducedGroups
SplitMicroBatches::reduceAttr(const Attr *attr) {
  ReducedGroups out;
  const std::vector<std::vector<int64_t>> read =
      readReplicaGroups(attr, mesh_.totalSize());
  for (const std::vector<int64_t> &group : read)
    for (int64_t d : group)
      if (d >= mesh_.totalSize()) {
        out.outside = d;
        return out;
      }
  std::vector<std::vector<int64_t>> groups = reduceGroups(read, &out.across);
  out.alone = std::all_of(groups.begin(), groups.end(),
                          [](const auto &g) { return g.size() <= 1; });
  out.groups = LocalBuilder(ctx_, func_).denseMatrixAttr(groups);
  return out;
}

bool SplitMicroBatches::rewriteCollective(Operation &op) {
  const bool pairs = op.is("stablehlo.collective_permute");
  const char *name = pairs ? "source_target_pairs" : "replica_groups";
  const Attr *attr = op.attrs.get(name);
  auto [it, fresh] = reduced_groups_.try_emplace(attr);
  if (fresh)
    it->second = reduceAttr(attr);
  const ReducedGroups &reduced = it->second;
  if (reduced.outside >= 0)
    return fail(std::string(op.name) + " names device " +
                std::to_string(reduced.outside) + ", outside the mesh of " +
                std::to_string(mesh_.totalSize()));
  if (reduced.across && !op.is("stablehlo.all_reduce"))
    return fail(std::string(op.name) +
                " crosses the micro-batch split (the batch gathered back)");
  if (op.is("stablehlo.all_reduce") && reduced.alone) {
    // The k parts of the sum are added by the accumulation across
    // iterations: nothing left to exchange.
    for (size_t i = 0; i < op.numResults(); ++i)
      op.result(i)->replaceAllUsesWith(op.operand(i));
    op.parentBlock()->erase(&op);
    return true;
  }
  op.attrs.set(ctx_.intern(name), reduced.groups);
  return true;
}

void SplitMicroBatches::reduceDeviceTables() {
  std::vector<std::pair<Operation *, std::vector<int64_t>>> lookups;
  walk(func_, [&](Operation &op) {
    if (std::optional<std::vector<int64_t>> table = deviceTableOf(op);
        table && int64_t(table->size()) == mesh_.totalSize())
      lookups.emplace_back(&op, std::move(*table));
  });
  for (auto &[lookup, table] : lookups) {
    std::vector<int64_t> reduced(size_t(reduced_.totalSize()), -1);
    bool agree = true;
    for (int64_t id = 0; id < mesh_.totalSize() && agree; ++id) {
      int64_t &entry = reduced[size_t(reducedId(id))];
      agree = entry < 0 || entry == table[size_t(id)];
      entry = table[size_t(id)];
    }
    if (!agree)
      continue;
    LocalBuilder b(ctx_, *lookup);
    lookup->setOperand(0, b.vectorI64(reduced));
  }
}

bool SplitMicroBatches::setTrips(Operation &loop, int64_t trips) {
  return setTripCount(ctx_, loop, trips) ||
         fail("the micro-batch loop is not counted");
}

// The step's data, read one micro-batch at a time by the loop, holds all
// k M of the smaller ones: [M, rows / k, ...] -> [k M, rows / k, ...].
void SplitMicroBatches::holdAllMicroBatches(Operation &loop,
                                            int64_t micro_batches) {
  Block &entry = func_.region(0).front();
  for (Operation &op : loop.region(1).front()) {
    Value *data = rowSliced(op, loop);
    if (!data || data->owner_block != &entry)
      continue;
    bool only_sliced = true;
    for (OpOperand *use = data->firstUse(); use; use = use->next_use)
      only_sliced &= use->index() == 0 && rowSliced(*use->owner, loop);
    if (!only_sliced)
      continue;
    std::vector<int64_t> shape = data->type->shape;
    shape[0] = micro_batches * split_;
    data->type = ctx_.types.rankedTensor(shape, data->type->element,
                                         data->type->encoding);
  }
  updateFunctionType(ctx_, func_);
}

bool SplitMicroBatches::run() {
  if (!module_.per_device)
    return fail("runs on a per-device program (after "
                "sdy-convert-global-to-local)");
  if (!findMesh())
    return false;
  const LayerLoops loops = findLayerLoops(func_);
  if (!loops.error.empty())
    return fail(loops.error);
  if (!loops.micro_batch_loop)
    return fail(loops.no_micro_batches + ": no loop to run more of");
  std::vector<Operation *> collectives;
  walk(func_, [&](Operation &op) {
    if (isStableHloCollective(op))
      collectives.push_back(&op);
  });
  for (Operation *op : collectives)
    if (!rewriteCollective(*op))
      return false;
  reduceDeviceTables();
  holdAllMicroBatches(*loops.micro_batch_loop, loops.micro_batches);
  if (!setTrips(*loops.micro_batch_loop, loops.micro_batches * split_))
    return false;
  // Shardings the per-device program keeps (for reading) lose the axis.
  transformShardings(module_, [&](TensorSharding &sharding) {
    auto isSplit = [&](const AxisRef &a) { return a.name == axis_; };
    for (DimSharding &dim : sharding.dims)
      std::erase_if(dim.axes, isSplit);
    std::erase_if(sharding.replicated, isSplit);
    std::erase_if(sharding.unreduced, isSplit);
  });
  mesh_op_->attrs.set(
      ctx_.intern("mesh"),
      ctx_.attrs.make(Attr{AttrKind::Mesh, reduced_, nullptr, {}}));
  module_.op().attrs.set(
      ctx_.intern("shardlab.micro_batches"),
      ctx_.attrs.string("each of the " + std::to_string(loops.micro_batches) +
                        " micro-batches split in " + std::to_string(split_) +
                        ": " + std::to_string(loops.micro_batches * split_) +
                        " micro-batches, run one after another"));
  return true;
}

} // namespace

bool splitMicroBatchesPass(Module &module, const PassOptions &options,
                           DiagnosticEngine &diags) {
  Operation *func = module.mainFunc();
  if (!func) {
    diags.error(module.op().loc,
                "shardlab-split-micro-batches: no entry function");
    return false;
  }
  return SplitMicroBatches(module, *func, options.text("axis"), diags).run();
}

} // namespace shardlab
