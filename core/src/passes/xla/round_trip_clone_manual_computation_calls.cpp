// -xla-sdy-round-trip-clone-manual-computation-calls: every call after the
// first to one `@...xla.sdy.manual_computation_body...` func gets a copy of
// it under a fresh name (`_0`, `_1`, ...), so each manual computation is
// later imported from a body of its own.
#include "passes/call_graph.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "xla_passes.h"

#include <set>

namespace shardlab {

bool isManualComputationBody(std::string_view name) {
  return name.find("xla.sdy.manual_computation_body") != std::string_view::npos;
}

bool xlaRoundTripCloneManualComputationCallsPass(Module &module,
                                                 const PassOptions &,
                                                 DiagnosticEngine &) {
  std::vector<Operation *> calls;
  walk(module.op(), [&](Operation &op) {
    const Attr *callee = op.is("func.call") ? op.attrs.get("callee") : nullptr;
    if (callee && isManualComputationBody(callee->str()))
      calls.push_back(&op);
  });
  SymbolInserter symbols(module);
  std::set<Operation *> seen;
  Context &ctx = module.ctx();
  for (Operation *call : calls) {
    Operation *body = calleeOf(module, *call);
    if (!body || seen.insert(body).second)
      continue;
    ValueMap map;
    Operation *clone = symbols.insert(cloneOp(*body, map));
    setCallee(*call, symbolName(*clone), ctx);
  }
  return true;
}

} // namespace shardlab
