// -sdy-manual-axes-cleanup: sorts the manual axes of every
// sdy.manual_computation in mesh order and adds each manual axis an in/out
// sharding does not mention to its replicated axes, so manual axes are
// always fully specified.
#include "import_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>

namespace shardlab {

namespace {

std::vector<AxisRef> axesOf(const TensorSharding &sharding) {
  std::vector<AxisRef> axes;
  for (const DimSharding &dim : sharding.dims)
    axes.insert(axes.end(), dim.axes.begin(), dim.axes.end());
  axes.insert(axes.end(), sharding.replicated.begin(),
              sharding.replicated.end());
  axes.insert(axes.end(), sharding.unreduced.begin(), sharding.unreduced.end());
  return axes;
}

// Adds the unused manual axes to the replicated axes of each sharding of a
// shaped value; returns whether any changed.
bool addUnusedManualAxes(std::vector<TensorSharding> &shardings,
                         const std::vector<Type> &types,
                         const std::vector<AxisRef> &manual_axes,
                         const MeshRef &mesh_ref, const Mesh &mesh) {
  bool changed = false;
  for (size_t i = 0; i < shardings.size() && i < types.size(); ++i) {
    if (!types[i]->isTensor())
      continue;
    std::vector<AxisRef> unused =
        getAxisSetDiff(manual_axes, axesOf(shardings[i]), mesh);
    if (unused.empty())
      continue;
    TensorSharding &sharding = shardings[i];
    sharding.replicated.insert(sharding.replicated.end(), unused.begin(),
                               unused.end());
    sortAndMergeAxes(sharding.replicated, mesh);
    sharding.mesh = mesh_ref;
    changed = true;
  }
  return changed;
}

void cleanup(Operation &op, const TensorSharding &any_sharding,
             const Mesh &mesh, Context &ctx) {
  std::vector<std::string> names = manualAxesOf(op);
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string &a, const std::string &b) {
                     return mesh.axisIndex(a) < mesh.axisIndex(b);
                   });
  op.attrs.set(ctx.intern("manual_axes"),
               ctx.attrs.make(Attr{AttrKind::ManualAxes, names, nullptr, {}}));
  std::vector<AxisRef> manual_axes;
  for (const std::string &name : names)
    manual_axes.push_back(fullAxis(name));
  std::vector<Type> in_types, out_types;
  for (size_t i = 0; i < op.numOperands(); ++i)
    in_types.push_back(op.operand(i)->type);
  for (size_t i = 0; i < op.numResults(); ++i)
    out_types.push_back(op.result(i)->type);
  std::vector<TensorSharding> in = shardingList(op, "in_shardings");
  if (addUnusedManualAxes(in, in_types, manual_axes, any_sharding.mesh, mesh))
    setShardingList(op, "in_shardings", std::move(in), ctx);
  std::vector<TensorSharding> out = shardingList(op, "out_shardings");
  if (addUnusedManualAxes(out, out_types, manual_axes, any_sharding.mesh, mesh))
    setShardingList(op, "out_shardings", std::move(out), ctx);
}

} // namespace

bool manualAxesCleanupPass(Module &module, const PassOptions &,
                           DiagnosticEngine &diags) {
  if (!mayContain(module, {"sdy.manual_computation"}))
    return markUnchanged(module);
  bool ok = true;
  walk(module.op(), [&](Operation &op) {
    if (!op.is("sdy.manual_computation"))
      return;
    std::vector<TensorSharding> all = shardingList(op, "in_shardings");
    for (const TensorSharding &sharding : shardingList(op, "out_shardings"))
      all.push_back(sharding);
    if (all.empty()) {
      if (!manualAxesOf(op).empty() &&
          !op.region(0).front().front()->is("sdy.return")) {
        diags.error(op.loc, "op has manual_axes when there are no in/out "
                            "shardings and the body is not empty. This isn't "
                            "allowed at this stage, please contact the Shardy "
                            "team or file a bug.");
        ok = false;
      }
      return;
    }
    // The common mesh: empty meshes are ignored.
    const TensorSharding *common = &all.front();
    for (const TensorSharding &sharding : all)
      if (const Mesh *mesh = lookupMesh(module, sharding);
          mesh && !mesh->isEmpty()) {
        common = &sharding;
        break;
      }
    if (const Mesh *mesh = lookupMesh(module, *common))
      cleanup(op, *common, *mesh, module.ctx());
  });
  return ok;
}

} // namespace shardlab
