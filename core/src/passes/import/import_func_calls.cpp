// -sdy-import-func-calls: each func.call becomes an sdy.named_computation
// holding the callee's body.
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
  const bool edges = options.flag("add-data-flow-edges-on-named-computations");
  if (!mayContain(module, {"func.call"}) &&
      (!edges || !mayContain(module, {"sdy.named_computation"})))
    return markUnchanged(module);
  CallImporter importer{module, diags, {}};
  walkCalls(module, [&](Operation &call) { importer.import(call); });
  for (const auto &entry : importer.moved)
    if (Operation *func = module.lookupSymbol(entry.first))
      eraseOp(*func);
  if (!edges)
    return true;
  for (Operation *op : namedComputationsPostOrder(module.op()))
    addDataFlowEdgesOf(*op, module.ctx());
  return true;
}

} // namespace shardlab
