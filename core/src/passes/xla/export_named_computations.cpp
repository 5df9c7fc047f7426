// -xla-sdy-export-named-computations: Shardy's -sdy-export-named-computations
// (each sdy.named_computation becomes a call to a private func tagged
// sdy.original_func_name), plus the out shardings on the func's results,
// as XLA's copy of the pass writes them; with dedup-functions-fully=true the
// functions of one name are then merged (xla unflatten-call-graph).
#include "shardlab/passes/call_graph.h"
#include "shardlab/passes/call_graph_passes.h"
#include "shardlab/passes/pass_utils.h"
#include "shardlab/passes/xla_passes.h"

#include <map>

namespace shardlab {

bool xlaExportNamedComputationsPass(Module &module, const PassOptions &options,
                                    DiagnosticEngine &diags) {
  PassOptions with_results = options;
  with_results["func-result-shardings"] = "true";
  with_results.erase("dedup-functions-fully");
  if (!exportNamedComputationsPass(module, with_results, diags))
    return false;
  if (!optionIsTrue(options, "dedup-functions-fully"))
    return true;
  // dedup-functions-fully: the functions of one name share the variant
  // with the most call sites, with mhlo.copy reshards where a call site
  // needs other shardings (the unflattening of -xla-sdy-unflatten-call-graph);
  // the kept functions keep their original name.
  std::map<std::string, const Attr *> original;
  forEachFunc(module, [&](Operation &func) {
    if (const Attr *name = func.attrs.get("sdy.original_func_name"))
      original[std::string(symbolName(func))] = name;
  });
  if (!xlaUnflattenCallGraphPass(module, options, diags))
    return false;
  Context &ctx = module.ctx();
  forEachFunc(module, [&](Operation &func) {
    auto it = original.find(std::string(symbolName(func)));
    if (it != original.end())
      func.attrs.set(ctx.intern("sdy.original_func_name"), it->second);
  });
  return true;
}

} // namespace shardlab
