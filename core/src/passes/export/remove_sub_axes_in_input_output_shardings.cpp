// -sdy-remove-sub-axes-in-input-output-shardings: function argument and
// result shardings keep only full axes.
#include "export_passes.h"
#include "passes/call_graph.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"

#include <numeric>

namespace shardlab {

namespace {

void removeSubAxesInOpenDims(TensorSharding &sharding) {
  for (DimSharding &dim : sharding.dims) {
    if (dim.closed)
      continue;
    size_t keep = 0;
    while (keep < dim.axes.size() && !dim.axes[keep].isSubAxis())
      ++keep;
    dim.axes.resize(keep);
  }
}

} // namespace

bool removeSubAxesInInputOutputShardingsPass(Module &module,
                                             const PassOptions &,
                                             DiagnosticEngine &) {
  Operation *main = module.mainFunc();
  if (!main)
    return markUnchanged(module);
  Context &ctx = module.ctx();
  Block &entry = main->region(0).front();
  bool changed = false;
  for (size_t i = 0; i < entry.numArguments(); ++i)
    if (const TensorSharding *old = getSharding(entry.argument(i))) {
      TensorSharding sharding = *old;
      removeSubAxesInOpenDims(sharding);
      if (!(sharding == *old)) {
        setSharding(entry.argument(i), sharding, ctx);
        changed = true;
      }
    }
  for (size_t i = 0; i < funcNumResults(*main); ++i)
    if (const TensorSharding *old = getFuncResultSharding(*main, i)) {
      TensorSharding sharding = *old;
      removeSubAxesInOpenDims(sharding);
      if (!(sharding == *old)) {
        setFuncResultSharding(*main, i, sharding, ctx);
        changed = true;
      }
    }
  return changed || markUnchanged(module);
}

} // namespace shardlab
