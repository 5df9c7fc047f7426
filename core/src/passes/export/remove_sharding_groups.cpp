// -sdy-remove-sharding-groups: erases every sdy.sharding_group op.
#include "export_passes.h"
#include "passes/pass_utils.h"

namespace shardlab {

bool removeShardingGroupsPass(Module &module, const PassOptions &,
                              DiagnosticEngine &) {
  std::vector<Operation *> groups = opsNamed(module, "sdy.sharding_group");
  for (Operation *op : groups)
    eraseOp(*op);
  return !groups.empty() || markUnchanged(module);
}

} // namespace shardlab
