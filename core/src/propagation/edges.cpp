#include "edges.h"
#include "ir/op_properties.h"

#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>
#include <string>

namespace shardlab::prop {

bool isTerminator(const Operation &op) { return isBlockReturn(op); }

bool isDataFlowOp(const Operation &op) {
  return op.is("stablehlo.while") || op.is("stablehlo.case") ||
         op.is("stablehlo.optimization_barrier") ||
         op.is("sdy.manual_computation") || op.is("sdy.named_computation");
}

static bool hasBodyArgOwners(const Operation &op) {
  return op.is("sdy.manual_computation") || op.is("sdy.named_computation");
}

Operation *owningOp(Value *value) {
  if (!value->isBlockArgument())
    return value->defining_op;
  Region *region = value->owner_block ? value->owner_block->parent : nullptr;
  return region ? region->parent : nullptr;
}

Operation *funcReturnOp(Operation &func) {
  if (!func.numRegions() || func.region(0).empty())
    return nullptr;
  Operation *ret = func.region(0).front().back();
  return ret && ret->is("func.return") ? ret : nullptr;
}

Value *edgeOwnerFromTarget(Value *target) {
  Operation *op = owningOp(target);
  if (!op || !isDataFlowOp(*op))
    return nullptr;
  if (!target->isBlockArgument())
    return target;
  if (hasBodyArgOwners(*op))
    return target;
  if (op->is("stablehlo.while") && target->index < op->numResults())
    return op->result(target->index);
  return nullptr;
}

// The region of `op` holding `block`, or -1.
static int regionIndexOf(Operation &op, const Block *block) {
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (auto &b : op.region(r).blocks)
      if (b.get() == block)
        return static_cast<int>(r);
  return -1;
}

Value *edgeOwnerFromSource(OpOperand &use) {
  Operation *user = use.owner;
  if (isTerminator(*user)) {
    Operation *parent = user->parentOp();
    if (!parent || !isDataFlowOp(*parent) ||
        use.index() >= parent->numResults())
      return nullptr;
    if (parent->is("stablehlo.while") &&
        regionIndexOf(*parent, user->parentBlock()) != 1)
      return nullptr;
    return parent->result(use.index());
  }
  if (!isDataFlowOp(*user))
    return nullptr;
  if (hasBodyArgOwners(*user)) {
    Block &body = user->region(0).front();
    return use.index() < body.numArguments() ? body.argument(use.index())
                                             : nullptr;
  }
  if ((user->is("stablehlo.while") ||
       user->is("stablehlo.optimization_barrier")) &&
      use.index() < user->numResults())
    return user->result(use.index());
  return nullptr;
}

Operation *dataFlowEdgeUser(Value *owner) {
  if (!owner || !owner->hasOneUse())
    return nullptr;
  Operation *user = owner->firstUse()->owner;
  return user->is("sdy.data_flow_edge") ? user : nullptr;
}

static Value *terminatorOperand(Region &region, size_t index) {
  if (region.empty() || region.front().empty())
    return nullptr;
  Operation *term = region.front().back();
  return term && index < term->numOperands() ? term->operand(index) : nullptr;
}

std::vector<Value *> edgeSources(Value *owner) {
  std::vector<Value *> sources;
  Operation *op = owningOp(owner);
  size_t i = owner->index;
  auto add = [&](Value *v) {
    if (v)
      sources.push_back(v);
  };
  if (owner->isBlockArgument()) {
    if (i < op->numOperands())
      add(op->operand(i));
  } else if (op->is("stablehlo.while")) {
    add(i < op->numOperands() ? op->operand(i) : nullptr);
    if (op->numRegions() > 1)
      add(terminatorOperand(op->region(1), i));
  } else if (op->is("stablehlo.optimization_barrier")) {
    add(i < op->numOperands() ? op->operand(i) : nullptr);
  } else {
    for (size_t r = 0; r < op->numRegions(); ++r)
      add(terminatorOperand(op->region(r), i));
  }
  return sources;
}

std::vector<Value *> nonOwnerTargets(Value *owner) {
  std::vector<Value *> targets;
  Operation *op = owningOp(owner);
  if (!op || !op->is("stablehlo.while") || owner->isBlockArgument())
    return targets;
  for (size_t r = 0; r < op->numRegions(); ++r) {
    Region &region = op->region(r);
    if (!region.empty() && owner->index < region.front().numArguments())
      targets.push_back(region.front().argument(owner->index));
  }
  return targets;
}

Value *shardableValue(Value *value) {
  if (Value *owner = edgeOwnerFromTarget(value)) {
    if (Operation *edge = dataFlowEdgeUser(owner))
      return edge->result(0);
    return owner;
  }
  if (!value->isBlockArgument())
    return value;
  Operation *op = owningOp(value);
  return op && op->is("func.func") ? value : nullptr;
}

const TensorSharding *valueSharding(Value *value) {
  Value *v = shardableValue(value);
  return v ? getSharding(v) : nullptr;
}

// Before the first per-value sharding of a multi-result op is written, the
// list holds a fully open sharding of the right rank for every result (as
// Shardy's getOpenWithShardingAtIndex), not a rank-0 placeholder.
static void openPerValueList(Value &value, const MeshRef &mesh, Context &ctx) {
  if (value.isBlockArgument())
    return;
  Operation &op = *value.defining_op;
  if (op.numResults() < 2 || op.dialect() == "sdy" ||
      op.attrs.get("sdy.sharding"))
    return;
  std::vector<TensorSharding> list;
  for (size_t i = 0; i < op.numResults(); ++i)
    list.push_back(fullyOpenSharding(
        mesh, static_cast<size_t>(op.result(i)->type->rank())));
  op.attrs.set("sdy.sharding", ctx.attrs.shardingPerValue(std::move(list)));
}

namespace {

bool isManual(const std::vector<std::string> &manual, const AxisRef &axis) {
  return std::find(manual.begin(), manual.end(), axis.name) != manual.end();
}

size_t manualPrefixLength(const DimSharding &dim,
                          const std::vector<std::string> &manual) {
  size_t n = 0;
  while (n < dim.axes.size() && isManual(manual, dim.axes[n]))
    ++n;
  return n;
}

// `fresh` (free axes only) with the manual axes of `outer` put back in front.
TensorSharding addManualAxes(const TensorSharding &outer,
                             const TensorSharding &fresh,
                             const std::vector<std::string> &manual) {
  TensorSharding out;
  out.mesh = fresh.mesh;
  for (size_t d = 0; d < outer.dims.size(); ++d) {
    const DimSharding &o = outer.dims[d];
    DimSharding dim;
    dim.axes.assign(o.axes.begin(),
                    o.axes.begin() + manualPrefixLength(o, manual));
    if (d < fresh.dims.size()) {
      const DimSharding &n = fresh.dims[d];
      dim.axes.insert(dim.axes.end(), n.axes.begin(), n.axes.end());
      dim.closed = n.closed;
      dim.priority = n.priority;
    }
    out.dims.push_back(std::move(dim));
  }
  out.replicated = outer.replicated;
  out.unreduced = outer.unreduced;
  return out;
}

const TensorSharding *perValue(const Operation &op, const char *name,
                               size_t index) {
  const Attr *attr = op.attrs.get(name);
  if (!attr || attr->kind != AttrKind::ShardingPerValue ||
      index >= attr->shardings().size())
    return nullptr;
  return &attr->shardings()[index];
}

std::vector<std::string> manualAxes(const Operation &op) {
  const Attr *axes_attr = op.attrs.get("manual_axes");
  if (!axes_attr)
    return {};
  return std::get<std::vector<std::string>>(axes_attr->payload);
}

// The manual computation whose body argument `value` is, or null.
Operation *manualComputationOfArg(Value *value) {
  if (!value || !value->isBlockArgument())
    return nullptr;
  Operation *op = owningOp(value);
  return op && op->is("sdy.manual_computation") ? op : nullptr;
}

} // namespace

std::optional<TensorSharding> manualBodyArgView(Value *value) {
  Value *v = shardableValue(value);
  Operation *op = manualComputationOfArg(v);
  const TensorSharding *stored =
      op ? perValue(*op, "in_shardings", v->index) : nullptr;
  if (!stored)
    return std::nullopt;
  return withoutAxes(*stored, manualAxes(*op));
}

void setValueSharding(Value *value, const TensorSharding &sharding,
                      Context &ctx) {
  Value *v = shardableValue(value);
  if (!v)
    return;
  if (!v->isBlockArgument() && v->defining_op->is("sdy.data_flow_edge")) {
    v->defining_op->attrs.set("sharding", ctx.attrs.sharding(sharding));
    return;
  }
  // A manual computation's body argument without an edge: the stored in
  // sharding keeps its manual axes in front (Shardy's
  // setBlockArgumentEdgeOwnerShardings).
  if (Operation *op = manualComputationOfArg(v))
    if (const TensorSharding *outer = perValue(*op, "in_shardings", v->index)) {
      setSharding(v, addManualAxes(*outer, sharding, manualAxes(*op)), ctx);
      return;
    }
  openPerValueList(*v, sharding.mesh, ctx);
  setSharding(v, sharding, ctx);
}

TensorSharding transformEdgeSharding(Operation &edge,
                                     const TensorSharding &sharding,
                                     bool before) {
  Value *owner = edge.operand(0);
  Operation *op = owningOp(owner);
  if (!op || !op->is("sdy.manual_computation"))
    return sharding;
  std::vector<std::string> manual = manualAxes(*op);
  bool block_arg = owner->isBlockArgument();
  if (before != block_arg)
    return withoutAxes(sharding, manual);
  const TensorSharding *outer =
      perValue(*op, block_arg ? "in_shardings" : "out_shardings", owner->index);
  return outer ? addManualAxes(*outer, sharding, manual) : sharding;
}

} // namespace shardlab::prop
