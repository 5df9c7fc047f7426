// Import passes on the call graph: -symbol-dce, -sdy-pre-order-funcs,
// -sdy-propagate-sharding-from-func-to-call, -sdy-flatten-call-graph,
// -sdy-import-func-calls and -sdy-add-func-data-flow-edges.
#include "import_passes.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/call_graph.h"
#include "shardlab/passes/call_graph_passes.h"
#include "shardlab/passes/data_flow_edges.h"
#include "shardlab/passes/pass_utils.h"

#include <map>
#include <set>
#include <unordered_map>

namespace shardlab {

namespace {

// Names of the symbols an attribute refers to (`@a`, `@a::@b` -> a).
void collectSymbolRefs(const Attr *attr, std::vector<std::string> &out) {
  if (!attr)
    return;
  if (attr->kind == AttrKind::SymbolRef) {
    const std::string &ref = attr->str();
    out.push_back(ref.substr(0, ref.find("::")));
  } else if (attr->kind == AttrKind::Array) {
    for (const Attr *element : attr->elements())
      collectSymbolRefs(element, out);
  } else if (attr->kind == AttrKind::Dict) {
    for (const NamedAttr &entry : attr->entries())
      collectSymbolRefs(entry.value, out);
  }
}

std::vector<std::string> symbolRefsUnder(Operation &root) {
  std::vector<std::string> refs;
  auto scan = [&](Operation &op) {
    for (const NamedAttr &entry : op.attrs.entries())
      collectSymbolRefs(entry.value, refs);
    for (const NamedAttr &entry : op.props.entries())
      collectSymbolRefs(entry.value, refs);
  };
  scan(root);
  walk(root, scan);
  return refs;
}

bool isPrivateSymbol(const Operation &op) {
  const Attr *vis = op.attrs.get("sym_visibility");
  return !symbolName(op).empty() && vis && vis->kind == AttrKind::String &&
         vis->str() == "private";
}

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

bool symbolDcePass(Module &module, const PassOptions &, DiagnosticEngine &) {
  // Only private symbols are ever erased: without any, there is nothing to
  // find out, and the scan of every attribute below is skipped.
  bool any_private = false;
  for (Operation &op : module.body())
    any_private = any_private || isPrivateSymbol(op);
  if (!any_private)
    return true;
  std::set<std::string> live;
  std::vector<Operation *> worklist;
  for (Operation &op : module.body())
    if (!isPrivateSymbol(op)) {
      worklist.push_back(&op);
      live.insert(std::string(symbolName(op)));
    }
  while (!worklist.empty()) {
    Operation *op = worklist.back();
    worklist.pop_back();
    for (const std::string &ref : symbolRefsUnder(*op))
      if (Operation *target = module.lookupSymbol(ref))
        if (live.insert(ref).second)
          worklist.push_back(target);
  }
  for (Operation *op = module.body().front(); op;) {
    Operation *next = op->nextInBlock();
    if (isPrivateSymbol(*op) && !live.count(std::string(symbolName(*op))))
      eraseOp(*op);
    op = next;
  }
  return true;
}

bool preOrderFuncsPass(Module &module, const PassOptions &,
                       DiagnosticEngine &) {
  for (Operation *func : funcsInCallOrder(module, /*pre_order=*/true))
    moveFuncToEnd(module, *func);
  return true;
}

bool propagateShardingFromFuncToCallPass(Module &module, const PassOptions &,
                                         DiagnosticEngine &) {
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

bool flattenCallGraphPass(Module &module, const PassOptions &,
                          DiagnosticEngine &) {
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

namespace {

bool isCallInherent(std::string_view name) {
  return name == "callee" || name == "arg_attrs" || name == "res_attrs";
}

// A named computation replacing `call` (attributes, shardings), no body.
std::unique_ptr<Operation> namedComputationFor(Module &module, Operation &call,
                                               Operation &func) {
  Context &ctx = module.ctx();
  std::vector<Value *> operands;
  for (size_t i = 0; i < call.numOperands(); ++i)
    operands.push_back(call.operand(i));
  std::vector<Type> types;
  for (size_t i = 0; i < call.numResults(); ++i)
    types.push_back(call.result(i)->type);
  auto named = makeOp(ctx, "sdy.named_computation", operands, types, call.loc);
  for (const NamedAttr &entry : call.attrs.entries())
    if (!isCallInherent(entry.name) && entry.name != "sdy.sharding")
      named->attrs.set(entry.name, entry.value);
  named->attrs.set(ctx.intern("name"),
                   ctx.attrs.string(originalFuncName(func)));
  if (auto in = funcArgShardings(module, func))
    setShardingList(*named, "in_shardings", std::move(*in), ctx);
  if (auto out = opShardings(call))
    setShardingList(*named, "out_shardings", std::move(*out), ctx);
  if (const Attr *thread = func.attrs.get("execution_thread"))
    named->attrs.set(ctx.intern("execution_thread"), thread);
  return named;
}

struct CallImporter {
  Module &module;
  DiagnosticEngine &diags;
  std::map<std::string, Operation *> moved; // callee -> named computation

  void import(Operation &call) {
    Operation *func = calleeOf(module, call);
    if (!func)
      return;
    std::string callee(symbolName(*func));
    // A call to a declaration (an external function) stays a call; a body
    // already moved into an earlier call's named computation is in `moved`.
    if (!moved.count(callee) &&
        (!func->numRegions() || func->region(0).empty()))
      return;
    Operation *named = call.parentBlock()->insertBefore(
        &call, namedComputationFor(module, call, *func));
    auto it = moved.find(callee);
    if (it != moved.end()) {
      diags.warningOnce("import-func-calls: multiple call ops", call.loc,
                        "function @" + callee +
                            " has multiple call ops, we need to clone the "
                            "function body for each call");
      ValueMap map;
      std::unique_ptr<Operation> copy = cloneOp(*it->second, map);
      moveRegionBlocks(copy->region(0), named->addRegion());
    } else {
      Region &body = named->addRegion();
      moveRegionBlocks(func->region(0), body);
      replaceTerminator(body.front(), "sdy.return", module.ctx());
      moved[callee] = named;
    }
    std::vector<Value *> results;
    for (size_t i = 0; i < named->numResults(); ++i)
      results.push_back(named->result(i));
    replaceOp(call, results);
  }
};

} // namespace

bool importFuncCallsPass(Module &module, const PassOptions &options,
                         DiagnosticEngine &diags) {
  CallImporter importer{module, diags, {}};
  walkCalls(module, [&](Operation &call) { importer.import(call); });
  for (const auto &entry : importer.moved)
    if (Operation *func = module.lookupSymbol(entry.first))
      eraseOp(*func);
  if (!options.flag("add-data-flow-edges-on-named-computations"))
    return true;
  for (Operation *op : namedComputationsPostOrder(module.op()))
    addDataFlowEdgesOf(*op, module.ctx());
  return true;
}

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
  Operation *main = mainFuncOf(module);
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
