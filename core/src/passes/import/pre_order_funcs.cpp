// -sdy-pre-order-funcs: functions are ordered callee first, the order in
// which propagation visits them.
#include "import_passes.h"
#include "passes/call_graph.h"
#include "passes/pass_utils.h"

#include <vector>

namespace shardlab {

namespace {

// Unlinks `func` and appends it to the module, in O(1). The op itself
// moves, so what was verified of it stays verified.
void moveFuncToEnd(Module &module, Operation &func) {
  Block &body = module.body();
  body.push_back(body.take(&func));
}

} // namespace

bool preOrderFuncsPass(Module &module, const PassOptions &,
                       DiagnosticEngine &) {
  std::vector<Operation *> before;
  for (Operation *op = module.body().front(); op; op = op->nextInBlock())
    before.push_back(op);
  for (Operation *func : funcsInCallOrder(module, /*pre_order=*/true))
    moveFuncToEnd(module, *func);
  // Already in that order (always, without calls): nothing changed.
  size_t i = 0;
  for (Operation *op = module.body().front(); op; op = op->nextInBlock(), ++i)
    if (before[i] != op)
      return true;
  return markUnchanged(module);
}

} // namespace shardlab
