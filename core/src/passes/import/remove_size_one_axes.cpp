// -sdy-remove-size-one-axes: axes of size one split nothing and are dropped
// from every sharding.
#include "import_passes.h"
#include "passes/pass_utils.h"
#include "passes/replica_group_mesh.h"
#include "shardlab/sharding/axis.h"

#include <iterator>
#include <map>

namespace shardlab {

namespace {

void removeSizeOneAxes(TensorSharding &sharding, const Mesh &mesh) {
  auto isSizeOne = [&](const AxisRef &axis) {
    return axisRefSize(axis, mesh) == 1;
  };
  for (DimSharding &dim : sharding.dims) {
    std::erase_if(dim.axes, isSizeOne);
    if (dim.axes.empty() && dim.closed)
      dim.priority.reset();
  }
  std::erase_if(sharding.replicated, isSizeOne);
  std::erase_if(sharding.unreduced, isSizeOne);
}

} // namespace

bool removeSizeOneAxesPass(Module &module, const PassOptions &,
                           DiagnosticEngine &) {
  bool any = false;
  for (Operation &op : module.body())
    if (op.is("sdy.mesh"))
      for (const MeshAxis &axis : op.attrs.get("mesh")->mesh().axes)
        any = any || axis.size == 1;
  if (!any)
    return markUnchanged(module);
  transformShardings(module, [&](TensorSharding &sharding) {
    if (const Mesh *mesh = lookupMesh(module, sharding))
      removeSizeOneAxes(sharding, *mesh);
  });
  return true;
}

} // namespace shardlab
