// The parts of -sdy-insert-explicit-reshards that do not use a sharding
// rule: the sources of data-flow edges, call operands and func results are
// resharded to the sharding their target expects (after the unreduced-axis
// collectives), and single-device (maximal) ops get their operands moved to
// the device and their results back to the global mesh.
#include "explicit_reshards_util.h"
#include "export_passes.h"

#include "passes/call_graph.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

namespace shardlab {

namespace {

// Shardy's isEquivalent on nullable shardings.
bool equivalentOrBothReplicated(const std::optional<TensorSharding> &a,
                                const TensorSharding *b) {
  if (!a)
    return !b || isFullyReplicated(*b);
  if (!b)
    return isFullyReplicated(*a);
  return isEquivalent(*a, *b);
}

TensorSharding closedLike(const TensorSharding &sharding) {
  return fullyClosedSharding(sharding.mesh, sharding.dims.size());
}

size_t rankOf(const Value *value) { return value->type->shape.size(); }

// The operands that feed `owner` (Shardy's getEdgeSources).
std::vector<OpOperand *> edgeSources(Operation &op, Value *owner) {
  std::vector<OpOperand *> sources;
  if (owner->isBlockArgument()) {
    sources.push_back(&op.operandUse(owner->index));
    return sources;
  }
  size_t i = owner->index;
  if (op.is("stablehlo.optimization_barrier") || op.is("stablehlo.while"))
    if (i < op.numOperands())
      sources.push_back(&op.operandUse(i));
  if (op.is("stablehlo.optimization_barrier"))
    return sources;
  size_t first = op.is("stablehlo.while") ? 1 : 0;
  for (size_t r = first; r < op.numRegions(); ++r)
    if (Operation *ret = terminatorOf(op, r); ret && i < ret->numOperands())
      sources.push_back(&ret->operandUse(i));
  return sources;
}

// The sharding the sources of `owner` must have (transformTargetSharding
// before edge propagation): the operands of a manual computation take its
// global in sharding, the values returned inside it its out sharding
// without the manual axes, other sources the owner's sharding.
std::optional<TensorSharding> edgeTargetSharding(Operation &op, Value *owner) {
  const TensorSharding *sharding = getSharding(owner);
  if (!sharding)
    return std::nullopt;
  if (!owner->isBlockArgument() && op.is("sdy.manual_computation"))
    return withoutAxes(*sharding, manualAxesOf(op));
  return *sharding;
}

} // namespace

void reshardToTarget(Module &module, OpOperand &use,
                     const TensorSharding *target, const InsertPoint &point,
                     bool full) {
  std::optional<TensorSharding> source = shardingOf(use.value);
  source = allReduceIfUnreducedToReplicated(module, use, source, target, point);
  if (auto added = insertUnreducedCollectives(module, use, target, point))
    source = added;
  if (!full || equivalentOrBothReplicated(source, target))
    return;
  TensorSharding sharding = target ? *target : closedLike(*source);
  use.set(createReshard(module.ctx(), point, use.value, sharding)->result(0));
}

void reshardDataFlowSources(Module &module, Operation &op, bool full) {
  std::vector<Value *> owners = resultEdgeOwners(op);
  for (Value *arg : blockArgEdgeOwners(op))
    owners.push_back(arg);
  for (Value *owner : owners) {
    std::optional<TensorSharding> target = edgeTargetSharding(op, owner);
    for (OpOperand *source : edgeSources(op, owner))
      reshardToTarget(module, *source, target ? &*target : nullptr,
                      pointAfterValue(source->value), full);
  }
}

void reshardCallOperands(Module &module, Operation &call, bool full) {
  Operation *callee = calleeOf(module, call);
  if (!callee)
    return;
  std::optional<std::vector<TensorSharding>> targets =
      funcArgShardings(module, *callee);
  if (!targets) {
    std::optional<MeshRef> mesh;
    for (size_t i = 0; i < call.numOperands() && !mesh; ++i)
      if (const TensorSharding *s = getSharding(call.operand(i)))
        if (const Mesh *m = lookupMesh(module, *s); m && !m->isMaximal())
          mesh = s->mesh;
    if (!mesh)
      return;
    targets.emplace();
    for (size_t i = 0; i < call.numOperands(); ++i)
      targets->push_back(fullyClosedSharding(*mesh, rankOf(call.operand(i))));
  }
  for (size_t i = 0; i < call.numOperands() && i < targets->size(); ++i)
    reshardToTarget(module, call.operandUse(i), &(*targets)[i],
                    pointAfterValue(call.operand(i)), full);
}

void reshardFuncResults(Module &module, Operation &func, bool full) {
  Operation *ret = terminatorOf(func);
  if (!ret)
    return;
  for (size_t i = 0; i < ret->numOperands(); ++i)
    reshardToTarget(module, ret->operandUse(i), getFuncResultSharding(func, i),
                    pointBefore(*ret), full);
}

} // namespace shardlab
