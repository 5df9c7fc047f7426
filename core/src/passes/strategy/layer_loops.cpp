// Finding the layer loops of a scanned-layers step (see layer_loops.h).
#include "passes/strategy/layer_loops.h"

#include "ir/while_loops.h"
#include "passes/export/local_builder.h"
#include "passes/pass_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>

namespace shardlab {
namespace {

// Whether `value` is computed from `counter` (through at most `depth` ops
// without regions): the index of the layer the loop is at.
bool dependsOn(Value *value, Value *counter, int depth = 6) {
  if (value == counter)
    return true;
  Operation *def = value->defining_op;
  if (!def || depth == 0 || def->numRegions())
    return false;
  for (size_t i = 0; i < def->numOperands(); ++i)
    if (dependsOn(def->operand(i), counter, depth - 1))
      return true;
  return false;
}

bool hasTrips(Operation &loop) {
  const std::optional<int64_t> trips = constantTripCount(loop);
  return trips && *trips >= 2;
}

// A counted loop whose own body slices a tensor of as many rows as it has
// trips (the stacked layers), at a row the counter gives.
bool slicesByTrip(Operation &loop) {
  if (!loop.is("stablehlo.while") || !hasTrips(loop))
    return false;
  for (Operation &op : loop.region(1).front())
    if (layerSliced(op, loop))
      return true;
  return false;
}

bool isInside(const Operation *op, const Operation *ancestor) {
  for (const Operation *p = op->parentOp(); p; p = p->parentOp())
    if (p == ancestor)
      return true;
  return false;
}

// The innermost while loop holding every one of `loops`, or null.
Operation *enclosingLoop(const std::vector<Operation *> &loops) {
  for (Operation *p = loops.front()->parentOp(); p; p = p->parentOp())
    if (p->is("stablehlo.while") &&
        std::all_of(loops.begin(), loops.end(),
                    [&](Operation *l) { return isInside(l, p); }))
      return p;
  return nullptr;
}

} // namespace

Value *bodyCounter(Operation &loop) {
  const std::optional<LoopCounter> c = loopCounter(loop);
  return c ? loop.region(1).front().argument(c->compare->operand(0)->index)
           : nullptr;
}

Operation *rebuildLoop(Context &ctx, Operation &loop,
                       const std::vector<bool> &keep,
                       const std::vector<Value *> &added, ValueMap &map) {
  std::vector<Value *> operands;
  std::vector<Type> types;
  for (size_t i = 0; i < loop.numOperands(); ++i)
    if (keep[i]) {
      operands.push_back(loop.operand(i));
      types.push_back(loop.operand(i)->type);
    }
  for (Value *init : added) {
    operands.push_back(init);
    types.push_back(init->type);
  }
  auto rebuilt = makeOp(ctx, "stablehlo.while", operands, types, loop.loc);
  rebuilt->attrs = loop.attrs;
  for (size_t r = 0; r < 2; ++r) {
    Block &from = loop.region(r).front();
    Block &into = rebuilt->addRegion().addBlock();
    for (size_t i = 0; i < from.numArguments(); ++i)
      if (keep[i])
        map[from.argument(i)] =
            into.addArgument(from.argument(i)->type, from.argument(i)->loc);
    std::vector<Value *> fresh;
    for (Value *init : added)
      fresh.push_back(into.addArgument(init->type, loop.loc));
    cloneBlockBefore(from, into, nullptr, map, false);
    if (r == 1) { // the body yields what it kept, then the new ones unchanged
      Operation *yield = into.back();
      std::vector<Value *> yielded;
      for (size_t i = 0; i < yield->numOperands(); ++i)
        if (keep[i])
          yielded.push_back(yield->operand(i));
      yielded.insert(yielded.end(), fresh.begin(), fresh.end());
      yield->setOperands(yielded);
    }
  }
  Operation *made = loop.parentBlock()->insertBefore(&loop, std::move(rebuilt));
  // A per-value sharding list follows the values kept (a per-device
  // program's loops still carry one).
  if (made->attrs.erase("sdy.sharding"))
    for (size_t i = 0, k = 0; i < loop.numResults(); ++i)
      if (keep[i]) {
        if (const TensorSharding *sharding = getSharding(loop.result(i)))
          setSharding(made->result(k), *sharding, ctx);
        ++k;
      }
  // The copies that read a dropped value must now be dead.
  eraseTriviallyDeadOps(*made);
  for (size_t r = 0; r < 2; ++r)
    for (size_t i = 0; i < loop.region(r).front().numArguments(); ++i)
      for (Operation *user : usersOf(loop.region(r).front().argument(i)))
        if (!keep[i] && isInside(user, made)) {
          walk(*made, [](Operation &op) { op.dropAllUses(); });
          eraseOp(*made);
          return nullptr;
        }
  for (size_t i = 0, k = 0; i < loop.numResults(); ++i)
    if (keep[i])
      loop.result(i)->replaceAllUsesWith(made->result(k++));
  // The old regions' ops use their blocks' arguments, which go first.
  walk(loop, [](Operation &op) { op.dropAllUses(); });
  eraseOp(loop);
  return made;
}

bool leadingDimIs(const Value *value, int64_t rows) {
  const Type type = value->type;
  return type && type->isRankedTensor() && type->rank() >= 1 &&
         type->shape[0] == rows;
}

namespace {

// The tensor `op` slices or updates one row of at a row the counter of
// `loop` gives, when its rows are `rows_per_trip` times the trip count (0:
// any multiple), or null.
Value *slicedByCounter(Operation &op, Operation &loop, int64_t rows_per_trip) {
  const int64_t trips = constantTripCount(loop).value_or(0);
  Value *counter = bodyCounter(loop);
  const bool slice = op.is("stablehlo.dynamic_slice") &&
                     op.numOperands() >= 2 && leadingDimIs(op.result(0), 1);
  const bool update = op.is("stablehlo.dynamic_update_slice") &&
                      op.numOperands() >= 3 && leadingDimIs(op.operand(1), 1);
  if (!counter || trips < 1 || !(slice || update) ||
      !dependsOn(op.operand(slice ? 1 : 2), counter))
    return nullptr;
  const Type type = op.operand(0)->type;
  if (!type || !type->isRankedTensor() || type->rank() < 1)
    return nullptr;
  const int64_t rows = type->shape[0];
  const bool fits = rows_per_trip > 0 ? rows == rows_per_trip * trips
                                      : rows >= trips && rows % trips == 0;
  return fits ? op.operand(0) : nullptr;
}

} // namespace

Value *layerSliced(Operation &op, Operation &loop) {
  return slicedByCounter(op, loop, 0);
}

Value *rowSliced(Operation &op, Operation &loop) {
  return slicedByCounter(op, loop, 1);
}

bool setTripCount(Context &ctx, Operation &loop, int64_t trips) {
  const std::optional<LoopCounter> c = loopCounter(loop);
  if (!c)
    return false;
  Value *old_limit = c->compare->operand(1);
  LocalBuilder b(ctx, *c->compare);
  c->compare->setOperand(
      1, b.constant(
             b.splatAttr(old_limit->type, c->init + double(trips) * c->step)));
  if (!old_limit->hasUses() && old_limit->defining_op)
    old_limit->defining_op->parentBlock()->erase(old_limit->defining_op);
  return true;
}

void updateFunctionType(Context &ctx, Operation &func) {
  Block &entry = func.region(0).front();
  std::vector<Type> inputs, results;
  for (size_t i = 0; i < entry.numArguments(); ++i)
    inputs.push_back(entry.argument(i)->type);
  for (size_t i = 0; i < entry.back()->numOperands(); ++i)
    results.push_back(entry.back()->operand(i)->type);
  func.attrs.set(ctx.intern("function_type"),
                 ctx.attrs.make(Attr{AttrKind::TypeAttr,
                                     ctx.types.function(inputs, results),
                                     nullptr,
                                     {}}));
}

LayerLoops findLayerLoops(Operation &func) {
  LayerLoops found;
  std::vector<Operation *> candidates;
  walk(func, [&](Operation &op) {
    if (slicesByTrip(op))
      candidates.push_back(&op);
  });
  // A loop over micro-batches slices the batch by micro-batch as a layer
  // loop slices the weights: only the innermost are layer loops.
  for (Operation *loop : candidates)
    if (std::none_of(candidates.begin(), candidates.end(),
                     [&](Operation *other) { return isInside(other, loop); }))
      found.loops.push_back(loop);
  if (found.loops.empty()) {
    found.error = "no loop over stacked layers (a counted while loop whose "
                  "body slices [L, ...] weights one layer at a time, as "
                  "jax.lax.scan writes a layer stack)";
    return found;
  }
  found.trips = *constantTripCount(*found.loops.front());
  for (Operation *loop : found.loops)
    if (*constantTripCount(*loop) != found.trips) {
      found.error = "its layer loops have different lengths (" +
                    std::to_string(found.trips) + " and " +
                    std::to_string(*constantTripCount(*loop)) + " trips)";
      return found;
    }
  // Every stack they slice has the same rows: the layers.
  for (Operation *loop : found.loops)
    for (Operation &op : loop->region(1).front())
      if (Value *stack = layerSliced(op, *loop)) {
        const int64_t rows = stack->type->shape[0];
        if (found.layers == 0)
          found.layers = rows;
        if (rows != found.layers) {
          found.error = "its layer loops slice stacks of different lengths (" +
                        std::to_string(found.layers) + " and " +
                        std::to_string(rows) + " rows)";
          return found;
        }
      }
  found.micro_batch_loop = enclosingLoop(found.loops);
  if (!found.micro_batch_loop)
    found.no_micro_batches = "its layer loops are not inside a loop over "
                             "micro-batches (gradient accumulation)";
  if (found.micro_batch_loop) {
    const std::optional<int64_t> m = constantTripCount(*found.micro_batch_loop);
    if (!m) {
      found.error = "the loop around its layer loops has no constant trip "
                    "count (micro-batches)";
      return found;
    }
    found.micro_batches = *m;
  }
  return found;
}

} // namespace shardlab
