// -sdy-remove-propagation-debug-info: removes the sharding-origin and
// propagation-edge attributes the debug options add.
#include "export_passes.h"
#include "passes/pass_utils.h"

namespace shardlab {

bool removePropagationDebugInfoPass(Module &module, const PassOptions &,
                                    DiagnosticEngine &) {
  static const char *const kDebugAttrs[] = {
      "sdy.propagation_edges",          "sdy.block_arg_propagation_edges",
      "sdy.result_propagation_edges",   "sdy.sharding_origins",
      "sdy.block_arg_sharding_origins", "sdy.result_sharding_origins"};
  Context &ctx = module.ctx();
  walk(module.op(), [&](Operation &op) {
    for (const char *name : kDebugAttrs) {
      if (op.is("func.func"))
        eraseFuncArgAndResultAttr(op, name, ctx);
      else
        op.attrs.erase(name);
    }
  });
  return true;
}

} // namespace shardlab
