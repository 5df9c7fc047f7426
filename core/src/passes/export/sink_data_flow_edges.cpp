// -sdy-sink-data-flow-edges: moves the shardings of sdy.data_flow_edge ops
// onto their edge owners (all owners of an op at once; owners whose edge
// has no sharding become fully open on the same mesh) and erases the edges.
#include "export_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "propagation/debug_info.h"
#include "sharding/sharding_utils.h"

#include <optional>

namespace shardlab {

// The shardings of the owners' edges, or nothing when no edge has one.
std::optional<std::vector<TensorSharding>>
shardingsFromDataFlowEdges(const std::vector<Value *> &owners) {
  std::vector<std::optional<TensorSharding>> found;
  const MeshRef *mesh = nullptr;
  for (Value *owner : owners) {
    Operation *edge = dataFlowEdgeUser(owner);
    const Attr *attr = edge ? edge->attrs.get("sharding") : nullptr;
    found.push_back(attr ? std::optional<TensorSharding>(attr->sharding())
                         : std::nullopt);
    if (attr && !mesh)
      mesh = &attr->sharding().mesh;
  }
  if (!mesh)
    return std::nullopt;
  std::vector<TensorSharding> shardings;
  for (size_t i = 0; i < owners.size(); ++i)
    shardings.push_back(
        found[i] ? *found[i]
                 : fullyOpenSharding(*mesh, owners[i]->type->shape.size()));
  return shardings;
}

namespace {

// `origins` / `debug_edges`: Shardy's sink-debug-sharding-origins and
// sink-debug-propagation-edge-sharding options.
void sinkIntoOwners(Operation &op, Context &ctx, bool origins,
                    bool debug_edges) {
  std::vector<Value *> args = blockArgEdgeOwners(op);
  if (auto shardings = shardingsFromDataFlowEdges(args))
    for (size_t i = 0; i < args.size(); ++i)
      setEdgeOwnerSharding(args[i], (*shardings)[i], ctx);
  sinkEdgeDebugInfo(op, args, /*block_args=*/true, origins, debug_edges, ctx);
  std::vector<Value *> results = resultEdgeOwners(op);
  if (auto shardings = shardingsFromDataFlowEdges(results)) {
    bool computation =
        op.is("sdy.manual_computation") || op.is("sdy.named_computation");
    setShardingList(op, computation ? "out_shardings" : "sdy.sharding",
                    std::move(*shardings), ctx);
  }
  sinkEdgeDebugInfo(op, results, /*block_args=*/false, origins, debug_edges,
                    ctx);
}

} // namespace

bool sinkDataFlowEdgesPass(Module &module, const PassOptions &options,
                           DiagnosticEngine &) {
  Context &ctx = module.ctx();
  bool origins = options.flag("sink-debug-sharding-origins");
  bool debug_edges = options.flag("sink-debug-propagation-edge-sharding");
  std::vector<Operation *> edges;
  if (!mayContainShardableDataFlowOps(module) &&
      !mayContain(module, {"sdy.data_flow_edge"}))
    return markUnchanged(module);
  walk(module.op(), [&](Operation &op) {
    if (op.is("sdy.data_flow_edge"))
      edges.push_back(&op);
    else if (isShardableDataFlowOp(op))
      sinkIntoOwners(op, ctx, origins, debug_edges);
  });
  for (Operation *edge : edges)
    replaceOp(*edge, {edge->operand(0)});
  return true;
}

} // namespace shardlab
