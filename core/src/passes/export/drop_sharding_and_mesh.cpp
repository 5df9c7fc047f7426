// -sdy-drop-sharding-and-mesh: removes every sharding and sdy.mesh.
#include "export_passes.h"
#include "passes/pass_utils.h"

namespace shardlab {

bool dropShardingAndMeshPass(Module &module, const PassOptions &,
                             DiagnosticEngine &) {
  Context &ctx = module.ctx();
  walk(module.op(), [&](Operation &op) {
    op.attrs.erase("sdy.sharding");
    if (op.is("func.func"))
      eraseFuncArgAndResultAttr(op, "sdy.sharding", ctx);
  });
  eraseMeshOps(module);
  return true;
}

} // namespace shardlab
