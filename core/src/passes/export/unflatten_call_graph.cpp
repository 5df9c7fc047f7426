// -sdy-unflatten-call-graph: the per-call-site copies of a function merge
// back into one per distinct sharding (with dedup-functions-fully, into the
// most-called one).
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
  bool erased = false;
  forEachFunc(module, [&erased](Operation &func) {
    erased |= func.attrs.erase("sdy.original_func_name");
    erased |= func.attrs.erase("sdy.func_manual_axes");
  });
  return !calls.empty() || erased || markUnchanged(module);
}

} // namespace shardlab
