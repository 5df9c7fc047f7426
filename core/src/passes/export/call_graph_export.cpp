// Export passes on the call graph: -sdy-sink-func-data-flow-edges,
// -sdy-export-named-computations, -sdy-unflatten-call-graph and
// -sdy-insert-func-call-reshards.
#include "export_passes.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/call_graph.h"
#include "shardlab/passes/call_graph_passes.h"
#include "shardlab/passes/data_flow_edges.h"
#include "shardlab/passes/pass_utils.h"
#include "shardlab/sharding/format.h"
#include "shardlab/sharding/sharding_utils.h"

#include <map>

namespace shardlab {

namespace {

size_t rankOf(const Value *value) {
  return value->type->isRankedTensor() ? value->type->shape.size() : 0;
}

std::vector<Value *> resultsOf(Operation &op) {
  std::vector<Value *> results;
  for (size_t i = 0; i < op.numResults(); ++i)
    results.push_back(op.result(i));
  return results;
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

namespace {

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

namespace {

std::string
shardingListKey(const std::optional<std::vector<TensorSharding>> &list) {
  if (!list)
    return "none";
  std::string key = "[";
  for (const TensorSharding &sharding : *list)
    key += shardingToString(sharding) + ";";
  return key + "]";
}

// Shardy's ComputationKey: original name, manual axes and (unless ignored)
// the argument and result shardings.
std::string computationKey(Module &module, Operation &func,
                           bool ignore_shardings) {
  std::string key = originalFuncName(func) + "|";
  if (const Attr *axes = func.attrs.get("sdy.func_manual_axes")) {
    // Parsed inside a dictionary, the attribute is kept as opaque text.
    key += axes->text;
    if (axes->kind == AttrKind::ManualAxes)
      for (const std::string &axis :
           std::get<std::vector<std::string>>(axes->payload))
        key += axis + ",";
  }
  if (ignore_shardings)
    return key;
  return key + "|" + shardingListKey(funcArgShardings(module, func)) + "|" +
         shardingListKey(funcResultShardings(module, func));
}

// Dedup mode: per origin, the func with the most calls (ties keep the
// first one seen).
void preferMostCalled(Module &module,
                      std::map<std::string, Operation *> &cache) {
  std::map<std::string, int64_t> counts;
  for (Operation *call : callsUnder(module.op())) {
    Operation *func = calleeOf(module, *call);
    if (!func)
      continue;
    std::string full = computationKey(module, *func, false);
    Operation *&cached = cache[computationKey(module, *func, true)];
    int64_t count = ++counts[full];
    if (count > counts[computationKey(module, *cached, false)])
      cached = func;
  }
}

} // namespace

bool unflattenCallGraphPass(Module &module, const PassOptions &options,
                            DiagnosticEngine &) {
  bool dedup = options.flag("dedup-functions-fully");
  std::map<std::string, Operation *> cache;
  std::vector<Operation *> calls = callsUnder(module.op());
  for (Operation *call : calls)
    if (Operation *func = calleeOf(module, *call))
      cache.emplace(computationKey(module, *func, dedup), func);
  if (dedup)
    preferMostCalled(module, cache);
  for (Operation *call : calls)
    if (Operation *func = calleeOf(module, *call))
      setCallee(*call, symbolName(*cache[computationKey(module, *func, dedup)]),
                module.ctx());
  forEachFunc(module, [](Operation &func) {
    func.attrs.erase("sdy.original_func_name");
    func.attrs.erase("sdy.func_manual_axes");
  });
  return true;
}

namespace {

// TensorShardingAttr::isEquivalent with a possibly missing other sharding.
bool equivalentTo(const TensorSharding &sharding, const TensorSharding *other) {
  if (other)
    return isEquivalent(sharding, *other);
  return isFullyReplicated(sharding) && sharding.unreduced.empty();
}

TensorSharding fullyClosedLike(const TensorSharding &sharding) {
  return fullyClosedSharding(sharding.mesh, sharding.dims.size());
}

} // namespace

// `sdy.reshard %v <s>` or, as XLA writes it, `mhlo.copy %v {sdy.sharding =
// #sdy.sharding_per_value<[s]>}` (with the manual axes around it, if any).
Operation *insertReshardOp(Context &ctx, std::string_view op_name, Value *value,
                           const TensorSharding &sharding, Block &block,
                           Operation *before, const Attr *manual_axes) {
  auto reshard = makeOp(ctx, op_name, {value}, {value->type}, value->loc);
  if (op_name == "sdy.reshard") {
    setOpSharding(*reshard, sharding, ctx);
  } else {
    setShardingList(*reshard, "sdy.sharding", {sharding}, ctx);
    if (manual_axes)
      reshard->attrs.set(ctx.intern("xla.sdy.manual_axes"), manual_axes);
  }
  return block.insertBefore(before, std::move(reshard));
}

void insertReshardsOnCallResults(Module &module, Operation &call,
                                 const std::vector<TensorSharding> &expected,
                                 std::string_view op_name) {
  Context &ctx = module.ctx();
  const Attr *manual_axes = call.attrs.get("xla.sdy.manual_axes");
  for (size_t i = 0; i < call.numResults() && i < expected.size(); ++i) {
    Value *result = call.result(i);
    const TensorSharding *actual = getSharding(result);
    if (equivalentTo(expected[i], actual))
      continue;
    std::vector<OpOperand *> uses;
    for (OpOperand *use = result->firstUse(); use; use = use->next_use)
      uses.push_back(use);
    Operation *inserted = insertReshardOp(
        ctx, op_name, result, actual ? *actual : fullyClosedLike(expected[i]),
        *call.parentBlock(), call.nextInBlock(), manual_axes);
    for (OpOperand *use : uses)
      use->set(inserted->result(0));
  }
  setShardingList(call, "sdy.sharding", expected, ctx);
}

void insertReshardsOnCallOperands(Module &module, Operation &call,
                                  const std::vector<TensorSharding> &expected,
                                  std::string_view op_name) {
  Context &ctx = module.ctx();
  const Attr *manual_axes = call.attrs.get("xla.sdy.manual_axes");
  for (size_t i = 0; i < call.numOperands() && i < expected.size(); ++i) {
    Value *operand = call.operand(i);
    const TensorSharding *actual = getSharding(operand);
    // A manual computation's argument is compared as seen inside it.
    Operation *owner = operand->isBlockArgument() && operand->owner_block &&
                               operand->owner_block->parent
                           ? operand->owner_block->parent->parent
                           : nullptr;
    std::optional<TensorSharding> local;
    if (actual && owner && owner->is("sdy.manual_computation")) {
      const Attr *axes = owner->attrs.get("manual_axes");
      if (axes && axes->kind == AttrKind::ManualAxes)
        local = withoutAxes(*actual,
                            std::get<std::vector<std::string>>(axes->payload));
    }
    if (equivalentTo(expected[i], local ? &*local : actual))
      continue;
    Operation *copy = insertReshardOp(ctx, op_name, operand, expected[i],
                                      *call.parentBlock(), &call, manual_axes);
    call.setOperand(i, copy->result(0));
  }
}

std::optional<std::vector<TensorSharding>>
expectedCallResultShardings(Module &module, Operation &call, Operation &func) {
  std::optional<std::vector<TensorSharding>> expected =
      funcResultShardings(module, func);
  if (expected)
    return expected;
  std::optional<std::vector<TensorSharding>> actual = opShardings(call);
  if (!actual)
    return std::nullopt;
  expected.emplace();
  for (const TensorSharding &sharding : *actual)
    expected->push_back(fullyClosedLike(sharding));
  return expected;
}

bool insertFuncCallReshardsPass(Module &module, const PassOptions &,
                                DiagnosticEngine &) {
  for (Operation *call : callsUnder(module.op()))
    if (Operation *func = calleeOf(module, *call))
      if (auto expected = expectedCallResultShardings(module, *call, *func))
        insertReshardsOnCallResults(module, *call, *expected, "sdy.reshard");
  return true;
}

} // namespace shardlab
