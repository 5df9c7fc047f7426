// -sdy-pre-order-funcs: functions are ordered callee first, the order in
// which propagation visits them.
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

namespace {

// A fresh func with `func`'s attributes and body, appended to the module;
// `func` (left without a body) is erased. Moves a func in O(1).
void moveFuncToEnd(Module &module, Operation &func) {
  auto moved = makeOp(module.ctx(), func.name, {}, {}, func.loc);
  moved->attrs = func.attrs;
  for (size_t r = 0; r < func.numRegions(); ++r)
    moveRegionBlocks(func.region(r), moved->addRegion());
  eraseOp(func);
  module.body().push_back(std::move(moved));
}

} // namespace

bool preOrderFuncsPass(Module &module, const PassOptions &,
                       DiagnosticEngine &) {
  for (Operation *func : funcsInCallOrder(module, /*pre_order=*/true))
    moveFuncToEnd(module, *func);
  return true;
}

} // namespace shardlab
