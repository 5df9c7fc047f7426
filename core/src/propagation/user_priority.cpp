// The user-priority layer (Shardy's user_priority_propagation.cc): dims with
// a priority p > 0 start closed and empty with their axes replicated, and
// get their axes back in round p.
#include "edges.h"
#include "layers.h"

#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <map>

namespace shardlab::prop {

namespace {

// A place holding a user sharding: a value, or result `res` of a func.
struct Slot {
  Value *value = nullptr;
  Operation *func = nullptr;
  size_t res = 0;
};

const TensorSharding *slotSharding(const Slot &slot) {
  return slot.value ? getSharding(slot.value)
                    : getFuncResultSharding(*slot.func, slot.res);
}

void setSlotSharding(const Slot &slot, const TensorSharding &s, Context &ctx) {
  if (slot.value)
    setSharding(slot.value, s, ctx);
  else
    setFuncResultSharding(*slot.func, slot.res, s, ctx);
}

bool hasEdge(Value *value) {
  Value *owner = edgeOwnerFromTarget(value);
  return owner && dataFlowEdgeUser(owner);
}

// Whether `s` has no priority and initialSharding would leave it as it is
// (a sorted replicated list), decided without copying it: most slots.
bool untouched(const TensorSharding &s) {
  if (s.replicated.size() > 1)
    return false;
  for (const DimSharding &dim : s.dims)
    if (dim.priority)
      return false;
  return true;
}

// Calls `fn(slot, sharding)` for every slot with a sharding that is not
// untouched, in Shardy's sharding-walker order, skipping edge targets. The
// walk reads each sharding when it reaches the slot, after `fn` ran for the
// slots before it.
template <typename Fn> void forEachSlot(Module &module, const Fn &fn) {
  auto visit = [&](const Slot &slot) {
    const TensorSharding *s = slotSharding(slot);
    if (s && !untouched(*s) && !(slot.value && hasEdge(slot.value)))
      fn(slot, *s);
  };
  for (Operation &top : module.body()) {
    if (!top.is("func.func"))
      continue;
    if (top.numRegions() && !top.region(0).empty()) {
      Block &body = top.region(0).front();
      for (size_t i = 0; i < body.numArguments(); ++i)
        visit(Slot{body.argument(i), nullptr, 0}); // never an edge target
    }
    const Attr *type = top.attrs.get("function_type");
    size_t num_results =
        type ? std::get<Type>(type->payload)->results.size() : 0;
    for (size_t i = 0; i < num_results; ++i)
      visit(Slot{nullptr, &top, i});
    walk(top, [&](Operation &op) {
      if (op.is("sdy.manual_computation") || op.is("sdy.named_computation")) {
        Block &body = op.region(0).front();
        for (size_t i = 0; i < body.numArguments(); ++i)
          visit(Slot{body.argument(i), nullptr, 0});
      }
      for (size_t i = 0; i < op.numResults(); ++i)
        visit(Slot{op.result(i), nullptr, 0});
    });
  }
}

TensorSharding initialSharding(const TensorSharding &original,
                               const Module &module) {
  TensorSharding s = original;
  for (DimSharding &dim : s.dims) {
    if (dim.priority.value_or(0) == 0) {
      dim.priority.reset();
      continue;
    }
    s.replicated.insert(s.replicated.end(), dim.axes.begin(), dim.axes.end());
    dim = DimSharding{{}, true, std::nullopt};
  }
  if (const Mesh *mesh = lookupMesh(module, s.mesh))
    sortAxes(s.replicated, *mesh);
  return s;
}

TensorSharding shardingForPriority(const TensorSharding &current,
                                   const TensorSharding &original,
                                   int64_t priority) {
  TensorSharding s = current;
  std::vector<AxisRef> restored;
  for (size_t d = 0; d < s.dims.size() && d < original.dims.size(); ++d) {
    if (original.dims[d].priority.value_or(0) != priority)
      continue;
    s.dims[d] = original.dims[d];
    s.dims[d].priority.reset();
    restored.insert(restored.end(), original.dims[d].axes.begin(),
                    original.dims[d].axes.end());
  }
  std::vector<AxisRef> replicated;
  for (const AxisRef &axis : s.replicated)
    if (std::find(restored.begin(), restored.end(), axis) == restored.end())
      replicated.push_back(axis);
  s.replicated = std::move(replicated);
  return s;
}

} // namespace

void runUserPriority(Module &module, const LayerContext &lc,
                     const OpDirectionFn &outer) {
  std::map<int64_t, std::vector<std::pair<Slot, TensorSharding>>> refs;
  forEachSlot(module, [&](const Slot &slot, const TensorSharding &s) {
    TensorSharding original = s;
    std::vector<int64_t> priorities;
    for (const DimSharding &dim : original.dims)
      if (dim.priority.value_or(0) > 0 &&
          std::find(priorities.begin(), priorities.end(), *dim.priority) ==
              priorities.end())
        priorities.push_back(*dim.priority);
    for (int64_t priority : priorities)
      refs[priority].push_back({slot, original});
    TensorSharding initial = initialSharding(original, module);
    if (!(initial == original))
      setSlotSharding(slot, initial, module.ctx());
  });
  if (lc.observer)
    lc.observer->position.user_priority = 0;
  runOpPriority(module, lc, outer);
  for (auto &[priority, list] : refs) {
    if (lc.observer)
      lc.observer->position.user_priority = priority;
    for (auto &[slot, original] : list)
      if (const TensorSharding *cur = slotSharding(slot))
        setSlotSharding(slot, shardingForPriority(*cur, original, priority),
                        module.ctx());
    runOpPriority(module, lc, outer);
  }
}

} // namespace shardlab::prop
