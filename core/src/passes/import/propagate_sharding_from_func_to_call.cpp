// -sdy-propagate-sharding-from-func-to-call: a call's operands and results
// without a sharding take the callee's argument and result shardings.
#include "import_passes.h"
#include "passes/call_graph.h"
#include "passes/call_graph_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <map>
#include <set>
#include <unordered_map>

namespace shardlab {

bool propagateShardingFromFuncToCallPass(Module &module, const PassOptions &,
                                         DiagnosticEngine &) {
  if (!mayContain(module, {"func.call"}))
    return markUnchanged(module);
  Context &ctx = module.ctx();
  walk(module.op(), [&](Operation &op) {
    if (!op.is("func.call") || op.attrs.get("sdy.sharding"))
      return;
    Operation *func = calleeOf(module, op);
    if (!func)
      return;
    if (auto shardings = funcResultShardings(module, *func))
      setShardingList(op, "sdy.sharding", std::move(*shardings), ctx);
  });
  return true;
}

} // namespace shardlab
