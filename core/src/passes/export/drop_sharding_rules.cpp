// -sdy-drop-sharding-rules: removes the sdy.sharding_rule attributes
// propagation attached (custom rules stay).
#include "export_passes.h"
#include "passes/pass_utils.h"

namespace shardlab {

bool dropShardingRulesPass(Module &module, const PassOptions &,
                           DiagnosticEngine &) {
  walk(module.op(), [&](Operation &op) {
    const Attr *rule = op.attrs.get("sdy.sharding_rule");
    if (rule && rule->kind == AttrKind::OpShardingRule &&
        !rule->rule().is_custom)
      op.attrs.erase("sdy.sharding_rule");
  });
  return true;
}

} // namespace shardlab
