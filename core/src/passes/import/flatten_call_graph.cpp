// -sdy-flatten-call-graph: every call site gets its own copy of the
// function it calls, tagged with sdy.original_func_name.
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

bool flattenCallGraphPass(Module &module, const PassOptions &,
                          DiagnosticEngine &) {
  if (!mayContain(module, {"func.call"}))
    return markUnchanged(module);
  SymbolInserter symbols(module);
  std::set<std::string> called;
  walkCalls(module, [&](Operation &call) {
    Operation *func = calleeOf(module, call);
    if (!func || called.insert(std::string(symbolName(*func))).second)
      return;
    Operation *clone =
        symbols.insert(cloneFuncRecursively(module, *func, symbols));
    setCallee(call, symbolName(*clone), module.ctx());
  });
  return true;
}

} // namespace shardlab
