// Data-flow edge owners (data_flow_edges.h) and -sdy-add-data-flow-edges,
// which puts an sdy.data_flow_edge after every edge owner with a static
// shape, carrying the owner's sharding, and routes the owner's uses through
// it.
#include "import_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"

#include <algorithm>

namespace shardlab {

bool isShardableDataFlowOp(const Operation &op) {
  return op.is("stablehlo.while") || op.is("stablehlo.case") ||
         op.is("stablehlo.optimization_barrier") ||
         op.is("sdy.manual_computation") || op.is("sdy.named_computation");
}

bool mayContainShardableDataFlowOps(const Module &module) {
  return mayContain(module,
                    {"stablehlo.while", "stablehlo.case",
                     "stablehlo.optimization_barrier", "sdy.manual_computation",
                     "sdy.named_computation"});
}

std::vector<Value *> blockArgEdgeOwners(Operation &op) {
  std::vector<Value *> owners;
  if ((op.is("sdy.manual_computation") || op.is("sdy.named_computation")) &&
      op.numRegions() && !op.region(0).empty()) {
    Block &body = op.region(0).front();
    for (size_t i = 0; i < body.numArguments(); ++i)
      owners.push_back(body.argument(i));
  }
  return owners;
}

std::vector<Value *> resultEdgeOwners(Operation &op) {
  std::vector<Value *> owners;
  if (isShardableDataFlowOp(op))
    for (size_t i = 0; i < op.numResults(); ++i)
      owners.push_back(op.result(i));
  return owners;
}

const std::vector<std::string> &manualAxesOf(const Operation &op) {
  return std::get<std::vector<std::string>>(
      op.attrs.get("manual_axes")->payload);
}

namespace {

Operation *manualComputationOfArg(const Value *owner) {
  if (!owner->isBlockArgument() || !owner->owner_block->parent)
    return nullptr;
  Operation *op = owner->owner_block->parent->parent;
  return op && op->is("sdy.manual_computation") ? op : nullptr;
}

// The outer sharding's manual axes followed by the new sharding's axes, per
// dim, with the outer replicated/unreduced axes.
TensorSharding addManualAxes(const TensorSharding &outer,
                             const TensorSharding &inner,
                             const std::vector<std::string> &manual_axes) {
  TensorSharding result = inner;
  result.replicated = outer.replicated;
  result.unreduced = outer.unreduced;
  result.unreduced_kind = outer.unreduced_kind;
  for (size_t d = 0; d < result.dims.size() && d < outer.dims.size(); ++d) {
    std::vector<AxisRef> axes;
    for (const AxisRef &axis : outer.dims[d].axes)
      if (std::find(manual_axes.begin(), manual_axes.end(), axis.name) !=
          manual_axes.end())
        axes.push_back(axis);
    axes.insert(axes.end(), inner.dims[d].axes.begin(),
                inner.dims[d].axes.end());
    result.dims[d].axes = std::move(axes);
  }
  return result;
}

} // namespace

std::optional<TensorSharding> edgeOwnerSharding(Value *owner) {
  const TensorSharding *sharding = getSharding(owner);
  if (!sharding)
    return std::nullopt;
  if (Operation *manual = manualComputationOfArg(owner))
    return withoutAxes(*sharding, manualAxesOf(*manual));
  return *sharding;
}

void setEdgeOwnerSharding(Value *owner, const TensorSharding &sharding,
                          Context &ctx) {
  Operation *manual = manualComputationOfArg(owner);
  const TensorSharding *outer = getSharding(owner);
  if (manual && outer)
    setSharding(owner, addManualAxes(*outer, sharding, manualAxesOf(*manual)),
                ctx);
  else
    setSharding(owner, sharding, ctx);
}

namespace {

Operation *owningOp(const Value *value) {
  if (!value->isBlockArgument())
    return value->defining_op;
  Region *region = value->owner_block ? value->owner_block->parent : nullptr;
  return region ? region->parent : nullptr;
}

} // namespace

Value *edgeOwnerFromTarget(Value *target) {
  Operation *op = owningOp(target);
  if (!op || !isShardableDataFlowOp(*op))
    return nullptr;
  if (target->isBlockArgument() && op->is("stablehlo.while"))
    return op->result(target->index);
  if (target->isBlockArgument() && !op->is("sdy.manual_computation") &&
      !op->is("sdy.named_computation"))
    return nullptr;
  return target;
}

Operation *dataFlowEdgeUser(Value *owner) {
  for (Operation *user : usersOf(owner))
    if (user->is("sdy.data_flow_edge"))
      return user;
  return nullptr;
}

Value *shardableValue(Value *value) {
  Value *owner = edgeOwnerFromTarget(value);
  if (owner)
    if (Operation *edge = dataFlowEdgeUser(owner))
      return edge->result(0);
  if (!value->isBlockArgument())
    return value;
  Operation *op = owningOp(value);
  if (op && op->is("func.func"))
    return value;
  return owner;
}

void setShardableValueSharding(Value *value, const TensorSharding &sharding,
                               Context &ctx) {
  Operation *def = value->defining_op;
  if (def && def->is("sdy.data_flow_edge"))
    def->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(sharding));
  else
    setSharding(value, sharding, ctx);
}

namespace {

bool hasStaticShape(const Value *value) {
  return value->type->isRankedTensor() && value->type->hasStaticShape();
}

// Adds an edge for each owner, the first after `after` (or at the front of
// `block` when null), the next ones after the previous edge.
void addEdges(const std::vector<Value *> &owners, Block &block,
              Operation *after, Context &ctx) {
  Operation *before = after ? after->nextInBlock() : block.front();
  for (Value *owner : owners) {
    if (!hasStaticShape(owner))
      continue;
    std::vector<OpOperand *> uses;
    for (OpOperand *use = owner->firstUse(); use; use = use->next_use)
      uses.push_back(use);
    auto edge =
        makeOp(ctx, "sdy.data_flow_edge", {owner}, {owner->type}, owner->loc);
    if (std::optional<TensorSharding> sharding = edgeOwnerSharding(owner))
      edge->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(*sharding));
    Operation *inserted = block.insertBefore(before, std::move(edge));
    for (OpOperand *use : uses)
      use->set(inserted->result(0));
  }
}

} // namespace

void addDataFlowEdgesOf(Operation &op, Context &ctx) {
  std::vector<Value *> args = blockArgEdgeOwners(op);
  if (!args.empty())
    addEdges(args, op.region(0).front(), nullptr, ctx);
  addEdges(resultEdgeOwners(op), *op.parentBlock(), &op, ctx);
}

bool addDataFlowEdgesPass(Module &module, const PassOptions &,
                          DiagnosticEngine &) {
  if (!mayContainShardableDataFlowOps(module))
    return markUnchanged(module);
  Context &ctx = module.ctx();
  walk(module.op(), [&](Operation &op) {
    if (isShardableDataFlowOp(op))
      addDataFlowEdgesOf(op, ctx);
  });
  return true;
}

} // namespace shardlab
