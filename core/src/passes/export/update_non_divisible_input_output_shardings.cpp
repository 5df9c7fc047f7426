// -sdy-update-non-divisible-input-output-shardings: the axes of a function
// input or output sharding (and of manual computations and calls) that do
// not divide their dimension are dropped.
#include "export_passes.h"
#include "passes/call_graph.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"

#include <numeric>

namespace shardlab {

namespace {

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
    const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
    if (mesh && isStaticTensor(arg->type))
      setEdgeOwnerSharding(arg, evenlySharded(*sharding, arg->type, *mesh),
                           ctx);
  }
  std::vector<TensorSharding> out = shardingList(op, "out_shardings");
  for (size_t i = 0; i < out.size() && i < op.numResults(); ++i)
    if (const Mesh *mesh = lookupMesh(module, out[i]);
        mesh && isStaticTensor(op.result(i)->type))
      out[i] = evenlySharded(out[i], op.result(i)->type, *mesh);
  if (!out.empty())
    setShardingList(op, "out_shardings", std::move(out), ctx);
}

// Whether it changed a sharding.
bool updateFuncBoundary(Module &module, Operation &func) {
  Context &ctx = module.ctx();
  bool changed = false;
  Block &entry = func.region(0).front();
  for (size_t i = 0; i < entry.numArguments(); ++i) {
    Value *arg = entry.argument(i);
    const TensorSharding *sharding = getSharding(arg);
    const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
    if (!mesh || !isStaticTensor(arg->type))
      continue;
    TensorSharding even = evenlySharded(*sharding, arg->type, *mesh);
    if (!(even == *sharding)) { // each set rebuilds the func's arg_attrs
      setSharding(arg, even, ctx);
      changed = true;
    }
  }
  const auto &types =
      std::get<Type>(func.attrs.get("function_type")->payload)->results;
  for (size_t i = 0; i < types.size(); ++i) {
    const TensorSharding *sharding = getFuncResultSharding(func, i);
    const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
    if (!mesh || !isStaticTensor(types[i]))
      continue;
    TensorSharding even = evenlySharded(*sharding, types[i], *mesh);
    if (!(even == *sharding)) {
      setFuncResultSharding(func, i, even, ctx);
      changed = true;
    }
  }
  return changed;
}

void updateCall(Module &module, Operation &call) {
  std::vector<TensorSharding> list = shardingList(call, "sdy.sharding");
  for (size_t i = 0; i < list.size() && i < call.numResults(); ++i)
    if (const Mesh *mesh = lookupMesh(module, list[i]);
        mesh && isStaticTensor(call.result(i)->type))
      list[i] = evenlySharded(list[i], call.result(i)->type, *mesh);
  if (!list.empty())
    setShardingList(call, "sdy.sharding", std::move(list), module.ctx());
}

} // namespace

bool updateNonDivisibleInputOutputShardingsPass(Module &module,
                                                const PassOptions &,
                                                DiagnosticEngine &) {
  bool changed = false;
  forEachFunc(module, [&](Operation &func) {
    changed |= updateFuncBoundary(module, func);
  });
  // Calls and manual computations do not share attributes: one walk.
  if (!mayContain(module, {"func.call", "sdy.manual_computation"}))
    return changed || markUnchanged(module);
  walk(module.op(), [&](Operation &op) {
    if (op.is("func.call"))
      updateCall(module, op);
    else if (op.is("sdy.manual_computation"))
      updateManualComputation(module, op);
  });
  return true;
}

} // namespace shardlab
