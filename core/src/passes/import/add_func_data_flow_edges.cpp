// -sdy-add-func-data-flow-edges: with dedup-functions-fully, the arguments
// and results of a shared function get sdy.func_data_flow_edge ops.
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

bool isStaticTensor(const Value *value) {
  return value->type->isRankedTensor() && value->type->hasStaticShape();
}

// Puts an sdy.func_data_flow_edge of `value` before `before` in `block`,
// carrying the value's sharding, and routes the value's uses through it.
void addFuncEdge(Value *value, Block &block, Operation *before, Location loc,
                 Context &ctx) {
  std::vector<OpOperand *> uses;
  for (OpOperand *use = value->firstUse(); use; use = use->next_use)
    uses.push_back(use);
  auto edge =
      makeOp(ctx, "sdy.func_data_flow_edge", {value}, {value->type}, loc);
  if (const TensorSharding *sharding = getSharding(value))
    setShardingList(*edge, "sdy.sharding", {*sharding}, ctx);
  Operation *inserted = block.insertBefore(before, std::move(edge));
  for (OpOperand *use : uses)
    use->set(inserted->result(0));
}

} // namespace

bool addFuncDataFlowEdgesPass(Module &module, const PassOptions &,
                              DiagnosticEngine &) {
  Context &ctx = module.ctx();
  Operation *main = module.mainFunc();
  forEachFunc(module, [&](Operation &func) {
    if (&func == main || !func.numRegions() || func.region(0).empty())
      return;
    Block &entry = func.region(0).front();
    Operation *first = entry.front();
    for (size_t i = 0; i < entry.numArguments(); ++i)
      if (isStaticTensor(entry.argument(i)))
        addFuncEdge(entry.argument(i), entry, first, func.loc, ctx);
  });
  for (Operation *call : callsUnder(module.op())) {
    Operation *next = call->nextInBlock();
    for (size_t i = 0; i < call->numResults(); ++i)
      if (isStaticTensor(call->result(i)))
        addFuncEdge(call->result(i), *call->parentBlock(), next, call->loc,
                    ctx);
  }
  return true;
}

} // namespace shardlab
