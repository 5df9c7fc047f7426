// -sdy-propagate-to-func-results: a function result without a sharding
// takes the sharding of the value it returns.
#include "export_passes.h"
#include "passes/call_graph.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"

#include <numeric>

namespace shardlab {

namespace {

void eraseFuncResultSharding(Operation &func, size_t index, Context &ctx) {
  const Attr *array = func.attrs.get("res_attrs");
  if (!array || array->kind != AttrKind::Array ||
      index >= array->elements().size())
    return;
  std::vector<const Attr *> dicts = array->elements();
  std::vector<NamedAttr> entries;
  for (const NamedAttr &entry : dicts[index]->entries())
    if (entry.name != "sdy.sharding")
      entries.push_back(entry);
  dicts[index] =
      ctx.attrs.make(Attr{AttrKind::Dict, std::move(entries), nullptr, {}});
  bool any = false;
  for (const Attr *dict : dicts)
    any = any || !dict->entries().empty();
  if (any)
    func.attrs.set(ctx.intern("res_attrs"), ctx.attrs.array(std::move(dicts)));
  else
    func.attrs.erase("res_attrs");
}

} // namespace

bool propagateToFuncResultsPass(Module &module, const PassOptions &,
                                DiagnosticEngine &) {
  Operation *main = module.mainFunc();
  Context &ctx = module.ctx();
  forEachFunc(module, [&](Operation &func) {
    Operation *ret = &func == main ? nullptr : terminatorOf(func);
    if (!ret || !ret->is("func.return"))
      return;
    for (size_t i = 0; i < ret->numOperands() && i < funcNumResults(func);
         ++i) {
      Value *shardable = shardableValue(ret->operand(i));
      if (const TensorSharding *sharding = getSharding(shardable))
        setFuncResultSharding(func, i, *sharding, ctx);
      else
        eraseFuncResultSharding(func, i, ctx);
    }
  });
  return true;
}

} // namespace shardlab
