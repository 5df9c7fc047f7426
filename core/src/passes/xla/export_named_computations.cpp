// -xla-sdy-export-named-computations: Shardy's -sdy-export-named-computations
// (each sdy.named_computation becomes a call to a private func tagged
// sdy.original_func_name), plus the out shardings on the func's results,
// as XLA's copy of the pass writes them; with dedup-functions-fully=true the
// functions of one name are then merged (xla unflatten-call-graph).
#include "passes/call_graph.h"
#include "passes/call_graph_passes.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "xla_passes.h"

#include <map>

namespace shardlab {

namespace {

// After merging, the functions this pass made that nobody calls are erased,
// and the one left of each name takes the name itself (`@baz`, not the
// `@baz_1` it was made as), as XLA makes one function per name.
void keepOneFunctionPerName(
    Module &module, const std::map<std::string, const Attr *> &original) {
  std::map<std::string, std::vector<Operation *>> calls_of;
  for (Operation *call : callsUnder(module.op()))
    if (Operation *func = calleeOf(module, *call))
      calls_of[std::string(symbolName(*func))].push_back(call);
  std::map<std::string, std::vector<Operation *>> kept; // by original name
  std::vector<Operation *> unused;
  forEachFunc(module, [&](Operation &func) {
    const std::string name(symbolName(func));
    auto it = original.find(name);
    if (it == original.end() || it->second->kind != AttrKind::String)
      return;
    if (calls_of.count(name))
      kept[it->second->str()].push_back(&func);
    else
      unused.push_back(&func);
  });
  for (Operation *func : unused)
    eraseOp(*func);
  module.invalidateSymbols();
  Context &ctx = module.ctx();
  for (auto &[name, funcs] : kept) {
    if (funcs.size() != 1 || symbolName(*funcs[0]) == name ||
        module.lookupSymbol(name))
      continue;
    for (Operation *call : calls_of[std::string(symbolName(*funcs[0]))])
      setCallee(*call, name, ctx);
    funcs[0]->attrs.set(ctx.intern("sym_name"), ctx.attrs.string(name));
    module.invalidateSymbols();
  }
}

// A named computation inside a manual computation carries
// `xla.sdy.manual_axes`; its call keeps it, and XLA writes it on the
// function and on each of its arguments and results too.
void markManualAxesOnCallees(Module &module) {
  Context &ctx = module.ctx();
  for (Operation *call : callsUnder(module.op())) {
    const Attr *axes = call->attrs.get("xla.sdy.manual_axes");
    Operation *func = axes ? calleeOf(module, *call) : nullptr;
    if (!func || !func->attrs.get("sdy.original_func_name") ||
        func->attrs.get("xla.sdy.manual_axes"))
      continue;
    func->attrs.set(ctx.intern("xla.sdy.manual_axes"), axes);
    for (size_t i = 0; i < funcNumInputs(*func); ++i)
      setFuncArgAttr(*func, i, "xla.sdy.manual_axes", axes, ctx);
    for (size_t i = 0; i < funcNumResults(*func); ++i)
      setFuncResultAttr(*func, i, "xla.sdy.manual_axes", axes, ctx);
  }
}

} // namespace

bool xlaExportNamedComputationsPass(Module &module, const PassOptions &options,
                                    DiagnosticEngine &diags) {
  if (!runNestedPass(module, "sdy-export-named-computations", diags,
                     {{"func-result-shardings", "true"}}))
    return false;
  if (!options.flag("dedup-functions-fully")) {
    markManualAxesOnCallees(module);
    return true;
  }
  // dedup-functions-fully: the functions of one name share the variant
  // with the most call sites, with mhlo.copy reshards where a call site
  // needs other shardings (the unflattening of -xla-sdy-unflatten-call-graph);
  // the kept functions keep their original name.
  std::map<std::string, const Attr *> original;
  forEachFunc(module, [&](Operation &func) {
    if (const Attr *name = func.attrs.get("sdy.original_func_name"))
      original[std::string(symbolName(func))] = name;
  });
  if (!runNestedPass(module, "xla-sdy-unflatten-call-graph", diags,
                     {{"dedup-functions-fully", "true"}}))
    return false;
  Context &ctx = module.ctx();
  forEachFunc(module, [&](Operation &func) {
    auto it = original.find(std::string(symbolName(func)));
    if (it != original.end())
      func.attrs.set(ctx.intern("sdy.original_func_name"), it->second);
  });
  keepOneFunctionPerName(module, original);
  markManualAxesOnCallees(module);
  return true;
}

} // namespace shardlab
