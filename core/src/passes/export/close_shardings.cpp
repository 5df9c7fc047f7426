// -sdy-close-shardings: every dimension sharding becomes closed, without
// priority, and the replicated axes are dropped.
#include "export_passes.h"
#include "passes/pass_utils.h"

namespace shardlab {

bool closeShardingsPass(Module &module, const PassOptions &,
                        DiagnosticEngine &) {
  transformShardings(module, [](TensorSharding &sharding) {
    for (DimSharding &dim : sharding.dims) {
      dim.closed = true;
      dim.priority.reset();
    }
    sharding.replicated.clear();
  });
  return true;
}

} // namespace shardlab
