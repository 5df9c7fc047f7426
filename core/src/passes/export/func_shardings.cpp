// Export passes on the shardings at function boundaries:
// -sdy-propagate-to-func-results copies the returned values' shardings to
// the results of every func but main; -sdy-update-non-divisible-input-
// output-shardings trims func, call and manual-computation boundary
// shardings to the longest evenly dividing prefix; -sdy-remove-sub-axes-in-
// input-output-shardings cuts open dims of main's shardings at the first
// sub-axis.
#include "export_passes.h"
#include "shardlab/passes/call_graph.h"
#include "shardlab/passes/data_flow_edges.h"
#include "shardlab/passes/pass_utils.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/sharding_utils.h"

#include <numeric>

namespace shardlab {

namespace {

size_t numFuncResults(const Operation &func) {
  return std::get<Type>(func.attrs.get("function_type")->payload)
      ->results.size();
}

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

// The longest prefix of each non-divisible dim's axes that divides it.
TensorSharding evenlySharded(TensorSharding sharding, Type type,
                             const Mesh &mesh) {
  for (size_t d = 0; d < sharding.dims.size() && d < type->shape.size(); ++d) {
    DimSharding &dim = sharding.dims[d];
    int64_t size = type->shape[d];
    if (size % shardedSize(dim, mesh) == 0)
      continue;
    std::vector<AxisRef> axes;
    int64_t remaining = size;
    for (const AxisRef &axis : dim.axes) {
      int64_t axis_size = axisRefSize(axis, mesh);
      int64_t gcd = std::gcd(axis_size, remaining);
      if (gcd == 1)
        break;
      if (gcd == axis_size) {
        axes.push_back(axis);
        remaining /= gcd;
      } else {
        axes.push_back(subAxis(axis.name, subAxisPreSize(axis), gcd));
        break;
      }
    }
    dim.axes = std::move(axes);
    dim.priority.reset();
  }
  return sharding;
}

bool isStaticTensor(Type type) {
  return type->isRankedTensor() && type->hasStaticShape();
}

void updateManualComputation(Module &module, Operation &op) {
  Context &ctx = module.ctx();
  for (Value *arg : blockArgEdgeOwners(op)) {
    std::optional<TensorSharding> sharding = edgeOwnerSharding(arg);
    const Mesh *mesh = sharding ? meshOf(module, *sharding) : nullptr;
    if (mesh && isStaticTensor(arg->type))
      setEdgeOwnerSharding(arg, evenlySharded(*sharding, arg->type, *mesh),
                           ctx);
  }
  std::vector<TensorSharding> out = shardingList(op, "out_shardings");
  for (size_t i = 0; i < out.size() && i < op.numResults(); ++i)
    if (const Mesh *mesh = meshOf(module, out[i]);
        mesh && isStaticTensor(op.result(i)->type))
      out[i] = evenlySharded(out[i], op.result(i)->type, *mesh);
  if (!out.empty())
    setShardingList(op, "out_shardings", std::move(out), ctx);
}

void updateFuncBoundary(Module &module, Operation &func) {
  Context &ctx = module.ctx();
  Block &entry = func.region(0).front();
  for (size_t i = 0; i < entry.numArguments(); ++i) {
    Value *arg = entry.argument(i);
    const TensorSharding *sharding = getSharding(arg);
    const Mesh *mesh = sharding ? meshOf(module, *sharding) : nullptr;
    if (!mesh || !isStaticTensor(arg->type))
      continue;
    TensorSharding even = evenlySharded(*sharding, arg->type, *mesh);
    if (!(even == *sharding)) // each set rebuilds the func's arg_attrs
      setSharding(arg, even, ctx);
  }
  const auto &types =
      std::get<Type>(func.attrs.get("function_type")->payload)->results;
  for (size_t i = 0; i < types.size(); ++i) {
    const TensorSharding *sharding = getFuncResultSharding(func, i);
    const Mesh *mesh = sharding ? meshOf(module, *sharding) : nullptr;
    if (!mesh || !isStaticTensor(types[i]))
      continue;
    TensorSharding even = evenlySharded(*sharding, types[i], *mesh);
    if (!(even == *sharding))
      setFuncResultSharding(func, i, even, ctx);
  }
}

void updateCall(Module &module, Operation &call) {
  std::vector<TensorSharding> list = shardingList(call, "sdy.sharding");
  for (size_t i = 0; i < list.size() && i < call.numResults(); ++i)
    if (const Mesh *mesh = meshOf(module, list[i]);
        mesh && isStaticTensor(call.result(i)->type))
      list[i] = evenlySharded(list[i], call.result(i)->type, *mesh);
  if (!list.empty())
    setShardingList(call, "sdy.sharding", std::move(list), module.ctx());
}

void removeSubAxesInOpenDims(TensorSharding &sharding) {
  for (DimSharding &dim : sharding.dims) {
    if (dim.closed)
      continue;
    size_t keep = 0;
    while (keep < dim.axes.size() && !dim.axes[keep].isSubAxis())
      ++keep;
    dim.axes.resize(keep);
  }
}

} // namespace

bool propagateToFuncResultsPass(Module &module, const PassOptions &,
                                DiagnosticEngine &) {
  Operation *main = mainFuncOf(module);
  Context &ctx = module.ctx();
  forEachFunc(module, [&](Operation &func) {
    Operation *ret = &func == main ? nullptr : terminatorOf(func);
    if (!ret || !ret->is("func.return"))
      return;
    for (size_t i = 0; i < ret->numOperands() && i < numFuncResults(func);
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

bool updateNonDivisibleInputOutputShardingsPass(Module &module,
                                                const PassOptions &,
                                                DiagnosticEngine &) {
  forEachFunc(module,
              [&](Operation &func) { updateFuncBoundary(module, func); });
  // Calls and manual computations do not share attributes: one walk.
  if (!mayContain(module, {"func.call", "sdy.manual_computation"}))
    return true;
  walk(module.op(), [&](Operation &op) {
    if (op.is("func.call"))
      updateCall(module, op);
    else if (op.is("sdy.manual_computation"))
      updateManualComputation(module, op);
  });
  return true;
}

bool removeSubAxesInInputOutputShardingsPass(Module &module,
                                             const PassOptions &,
                                             DiagnosticEngine &) {
  Operation *main = mainFuncOf(module);
  if (!main)
    return true;
  Context &ctx = module.ctx();
  Block &entry = main->region(0).front();
  for (size_t i = 0; i < entry.numArguments(); ++i)
    if (const TensorSharding *old = getSharding(entry.argument(i))) {
      TensorSharding sharding = *old;
      removeSubAxesInOpenDims(sharding);
      setSharding(entry.argument(i), sharding, ctx);
    }
  for (size_t i = 0; i < numFuncResults(*main); ++i)
    if (const TensorSharding *old = getFuncResultSharding(*main, i)) {
      TensorSharding sharding = *old;
      removeSubAxesInOpenDims(sharding);
      setFuncResultSharding(*main, i, sharding, ctx);
    }
  return true;
}

} // namespace shardlab
