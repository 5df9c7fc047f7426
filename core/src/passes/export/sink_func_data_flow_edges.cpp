// -sdy-sink-func-data-flow-edges: the shardings of sdy.func_data_flow_edge
// ops move onto the function arguments and results, and the ops go.
#include "export_passes.h"
#include "passes/call_graph.h"
#include "passes/call_graph_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/format.h"

#include <map>

namespace shardlab {

namespace {

size_t rankOf(const Value *value) {
  return value->type->isRankedTensor() ? value->type->shape.size() : 0;
}

} // namespace

bool sinkFuncDataFlowEdgesPass(Module &module, const PassOptions &,
                               DiagnosticEngine &) {
  Context &ctx = module.ctx();
  std::vector<Operation *> edges;
  walk(module.op(), [&](Operation &op) {
    if (op.is("sdy.func_data_flow_edge"))
      edges.push_back(&op);
  });
  for (Operation *edge : edges) {
    Value *operand = edge->operand(0);
    const TensorSharding *operand_sharding = getSharding(operand);
    if (const TensorSharding *sharding = getSharding(edge->result(0)))
      setSharding(operand, *sharding, ctx);
    else if (operand_sharding)
      setSharding(operand,
                  fullyOpenSharding(operand_sharding->mesh, rankOf(operand)),
                  ctx);
    replaceOp(*edge, {operand});
  }
  return true;
}

} // namespace shardlab
