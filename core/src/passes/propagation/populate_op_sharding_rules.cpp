
#include "passes/pass_utils.h"
#include "propagation_passes.h"
#include "rules/registry.h"

namespace shardlab {

bool populateOpShardingRules(Module &module, const PassOptions &options,
                             DiagnosticEngine &diags) {
  const bool conservative = options.flag("conservative-propagation");
  Context &ctx = module.ctx();
  auto attach = [&](Operation &op) {
    getOrCreateShardingRule(op, ctx, conservative, /*attach=*/true, &diags);
  };
  // Nested ops before their parent, as MLIR's default walk, so that the
  // first unknown op warned about is the one Shardy warns about.
  for (Operation &op : module.body())
    if (op.is("func.func")) {
      walkPostOrder(op, attach);
      attach(op);
    }
  return true;
}

} // namespace shardlab
