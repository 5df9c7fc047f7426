// -sdy-export-named-computations: every sdy.named_computation becomes a
// func.func and a call to it, the computation's shardings on the call.
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

std::vector<Value *> resultsOf(Operation &op) {
  std::vector<Value *> results;
  for (size_t i = 0; i < op.numResults(); ++i)
    results.push_back(op.result(i));
  return results;
}

// Replaces each sdy.data_flow_edge using one of `values` by its input.
void removeDataFlowEdges(const std::vector<Value *> &values) {
  for (Value *value : values)
    if (value->firstUse() &&
        value->firstUse()->owner->is("sdy.data_flow_edge")) {
      Operation *edge = value->firstUse()->owner;
      replaceOp(*edge, {edge->operand(0)});
    }
}

bool isNamedComputationInherent(std::string_view name) {
  return name == "name" || name == "in_shardings" || name == "out_shardings";
}

std::vector<Value *> blockArgs(Block &block) {
  std::vector<Value *> args;
  for (size_t i = 0; i < block.numArguments(); ++i)
    args.push_back(block.argument(i));
  return args;
}

// A private func holding the body of `named` (inserted, renamed on a name
// clash), with the in shardings on its arguments.
Operation *funcFromNamedComputation(Module &module, Operation &named,
                                    SymbolInserter &symbols,
                                    bool result_shardings) {
  Context &ctx = module.ctx();
  Block &body = named.region(0).front();
  std::vector<Type> inputs;
  for (Value *arg : blockArgs(body))
    inputs.push_back(arg->type);
  std::vector<Type> results;
  for (Value *result : resultsOf(named))
    results.push_back(result->type);
  const std::string &name = named.attrs.get("name")->str();
  auto func = makePrivateFunc(ctx, name, inputs, results, named.loc);
  func->attrs.set(ctx.intern("sdy.original_func_name"), ctx.attrs.string(name));
  if (const Attr *thread = named.attrs.get("execution_thread"))
    func->attrs.set(ctx.intern("execution_thread"), thread);
  moveRegionBlocks(named.region(0), func->addRegion());
  Block &entry = func->region(0).front();
  replaceTerminator(entry, "func.return", ctx);
  removeDataFlowEdges(blockArgs(entry));
  Operation *inserted = symbols.insert(std::move(func));
  std::vector<TensorSharding> in = shardingList(named, "in_shardings");
  for (size_t i = 0; i < in.size() && i < entry.numArguments(); ++i)
    setSharding(entry.argument(i), in[i], ctx);
  if (result_shardings) {
    std::vector<TensorSharding> out = shardingList(named, "out_shardings");
    for (size_t i = 0; i < out.size() && i < results.size(); ++i)
      setFuncResultSharding(*inserted, i, out[i], ctx);
  }
  return inserted;
}

// Replaces `named` by a call to a new func with its body.
void exportNamedComputation(Module &module, Operation &named,
                            SymbolInserter &symbols, bool result_shardings,
                            std::vector<Value *> &call_results) {
  Context &ctx = module.ctx();
  if (auto in = shardingsFromDataFlowEdges(blockArgEdgeOwners(named)))
    setShardingList(named, "in_shardings", std::move(*in), ctx);
  if (auto out = shardingsFromDataFlowEdges(resultEdgeOwners(named)))
    setShardingList(named, "out_shardings", std::move(*out), ctx);
  Operation *func =
      funcFromNamedComputation(module, named, symbols, result_shardings);
  std::vector<Type> types;
  for (Value *result : resultsOf(named))
    types.push_back(result->type);
  std::vector<Value *> operands;
  for (size_t i = 0; i < named.numOperands(); ++i)
    operands.push_back(named.operand(i));
  auto call = makeOp(ctx, "func.call", operands, types, named.loc);
  for (const NamedAttr &entry : named.attrs.entries())
    if (!isNamedComputationInherent(entry.name) &&
        entry.name != "execution_thread")
      call->attrs.set(entry.name, entry.value);
  setCallee(*call, symbolName(*func), ctx);
  if (const Attr *out = named.attrs.get("out_shardings"))
    call->attrs.set(ctx.intern("sdy.sharding"), out);
  Operation *inserted =
      named.parentBlock()->insertBefore(&named, std::move(call));
  std::vector<Value *> results = resultsOf(*inserted);
  call_results.insert(call_results.end(), results.begin(), results.end());
  replaceOp(named, results);
}

} // namespace

bool exportNamedComputationsPass(Module &module, const PassOptions &options,
                                 DiagnosticEngine &) {
  if (!mayContain(module, {"sdy.named_computation"}))
    return markUnchanged(module);
  std::vector<Operation *> named = namedComputationsPostOrder(module.op());
  SymbolInserter symbols(module);
  std::vector<Value *> call_results;
  // XLA's variant (-xla-sdy-export-named-computations) also puts the out
  // shardings on the new func's results.
  const bool result_shardings = options.flag("func-result-shardings");
  for (Operation *op : named)
    exportNamedComputation(module, *op, symbols, result_shardings,
                           call_results);
  removeDataFlowEdges(call_results);
  return true;
}

} // namespace shardlab
