// -xla-sdy-unflatten-call-graph: Shardy's -sdy-unflatten-call-graph (the
// copies of a function made per call site, tagged sdy.original_func_name or
// XLA's xla.sdy.original_func_name, merged back into one per name and
// manual axes), then XLA's reshards where a call site and the function it
// now calls disagree: `mhlo.copy` of an operand to the function's argument
// sharding, and of a result from the function's result sharding to the one
// the call site had.
#include "passes/call_graph.h"
#include "passes/call_graph_passes.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "shardlab/passes/pass_manager.h"
#include "xla_passes.h"

namespace shardlab {

bool xlaUnflattenCallGraphPass(Module &module, const PassOptions &options,
                               DiagnosticEngine &diags) {
  Context &ctx = module.ctx();
  forEachFunc(module, [&](Operation &func) {
    if (const Attr *name = func.attrs.get("xla.sdy.original_func_name")) {
      func.attrs.set(ctx.intern("sdy.original_func_name"), name);
      func.attrs.erase("xla.sdy.original_func_name");
    }
    if (const Attr *axes = func.attrs.get("xla.sdy.manual_axes"))
      func.attrs.set(ctx.intern("sdy.func_manual_axes"), axes);
  });
  if (!runNestedPass(
          module, "sdy-unflatten-call-graph", diags,
          {{"dedup-functions-fully",
            options.flag("dedup-functions-fully") ? "true" : "false"}}))
    return false;
  for (Operation *call : callsUnder(module.op())) {
    Operation *func = calleeOf(module, *call);
    if (!func)
      continue;
    if (auto args = funcArgShardings(module, *func))
      insertReshardsOnCallOperands(module, *call, *args, "mhlo.copy");
    if (auto results = expectedCallResultShardings(module, *call, *func))
      insertReshardsOnCallResults(module, *call, *results, "mhlo.copy");
  }
  forEachFunc(module,
              [](Operation &func) { func.attrs.erase("xla.sdy.manual_axes"); });
  return true;
}

} // namespace shardlab
