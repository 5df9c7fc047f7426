// Invariants of the non-collective sdy ops (Shardy's op verify() methods):
// sharding_constraint, reshard, data_flow_edge, func_data_flow_edge,
// propagation_barrier, named_computation and constant, and the type rule
// they share with the collectives. Collectives and manual computations have
// their own files.
#include "verify_ops.h"

#include "sharding/collective_verify.h"

namespace shardlab::verify {

namespace {

Operation *terminatorOf(Operation &op) {
  if (op.numRegions() == 0 || op.region(0).empty())
    return nullptr;
  return op.region(0).front().back();
}

std::string typeList(const std::vector<Type> &types) {
  std::string text;
  for (size_t i = 0; i < types.size(); ++i)
    text += (i ? ", '" : "'") + types[i]->text + "'";
  return text;
}

const TensorSharding *shardingAttr(const Operation &op) {
  const Attr *attr = op.attrs.get("sharding");
  return attr && attr->kind == AttrKind::Sharding ? &attr->sharding() : nullptr;
}

// The attached sharding against the result type (unknown mesh, rank, axes,
// axes bound by a parent manual computation).
bool verifyResultSharding(VerifyContext &ctx, Operation &op,
                          const TensorSharding &sharding) {
  ShardingVerifyOptions options;
  options.already_manual_axes = enclosingManualAxes(op);
  std::optional<std::string> error =
      verifyTensorSharding(sharding, ctx.lookupMesh(sharding.mesh),
                           shapeInfo(op.result(0)->type), options);
  return !error || ctx.shardingError(op, *error);
}

// sdy.sharding_constraint / sdy.reshard: the sharding, then the unreduced
// axes transition from the operand's sharding.
bool verifyShardingOnOperand(VerifyContext &ctx, Operation &op) {
  const TensorSharding *sharding = shardingAttr(op);
  if (!sharding || op.numResults() != 1 || op.numOperands() != 1)
    return true;
  if (!verifyResultSharding(ctx, op, *sharding))
    return false;
  const TensorSharding *input = shardingOf(op.operand(0));
  ShardingRef in{input, input ? ctx.lookupMesh(input->mesh) : nullptr};
  ShardingRef out{sharding, ctx.lookupMesh(sharding->mesh)};
  ReductionKind removed = input ? input->unreduced_kind : ReductionKind::Sum;
  std::optional<std::string> error =
      verifyUnreducedAxesTransition({in}, {out}, ReductionKind::Sum, removed);
  return !error || ctx.opError(op, *error);
}

bool hasStaticResult(Operation &op) {
  return op.numResults() == 1 && op.result(0)->type->isRankedTensor() &&
         op.result(0)->type->hasStaticShape();
}

bool verifyDataFlowEdge(VerifyContext &ctx, Operation &op) {
  if (!hasStaticResult(op))
    return ctx.opError(op, "expected sdy.data_flow_edge to have a "
                           "static-shaped result. type: " +
                               op.result(0)->type->text);
  Value *input = op.operand(0);
  if (!input->hasOneUse())
    return ctx.opError(
        op, "expected input of sdy.data_flow_edge to have a single user");
  Operation *def = input->defining_op;
  // Ops with data-flow semantics (Shardy's ShardableDataFlowOpInterface:
  // named and manual computations) may feed an edge.
  bool data_flow_op = def && (def->is("sdy.named_computation") ||
                              def->is("sdy.manual_computation"));
  if (def && def->dialect() == "sdy" && !data_flow_op) {
    ctx.opError(op, "expected input of sdy.data_flow_edge to not be defined "
                    "by an SdyDialect op (other than an "
                    "sdy.named_computation).");
    ctx.note(def->loc, "sdy op defining the input of the sdy.data_flow_edge");
    return false;
  }
  const TensorSharding *sharding = shardingAttr(op);
  return !sharding || verifyResultSharding(ctx, op, *sharding);
}

bool verifyFuncDataFlowEdge(VerifyContext &ctx, Operation &op) {
  if (!hasStaticResult(op))
    return ctx.opError(op, "expected sdy.func_data_flow_edge to have a "
                           "static-shaped result. type: " +
                               op.result(0)->type->text);
  Value *input = op.operand(0);
  if (!input->hasOneUse())
    return ctx.opError(op, "expected operand of sdy.func_data_flow_edge to "
                           "have a single user");
  if (input->isBlockArgument()) {
    Region *region = input->owner_block ? input->owner_block->parent : nullptr;
    if (!region || !region->parent || !region->parent->is("func.func"))
      return ctx.opError(op, "expected operand of sdy.func_data_flow_edge to "
                             "be a block argument of a func op.");
    return true;
  }
  if (!input->defining_op->is("func.call"))
    return ctx.opError(op, "expected operand of sdy.func_data_flow_edge to "
                           "be a result of call op.");
  return true;
}

bool verifyBarrier(VerifyContext &ctx, Operation &op) {
  const Attr *direction = op.attrs.get("allowed_direction");
  if (direction && direction->kind == AttrKind::String &&
      direction->str() == "BOTH")
    return ctx.opError(op, "cannot specify `BOTH` as the direction. Not "
                           "blocking propagation direction makes the op "
                           "redundant.");
  return true;
}

// InferTypeOpInterface: the results are the terminator's operand types.
bool verifyInferredResults(VerifyContext &ctx, Operation &op) {
  Operation *terminator = terminatorOf(op);
  if (!terminator)
    return true;
  std::vector<Type> inferred = operandTypes(*terminator);
  std::vector<Type> actual = resultTypes(op);
  if (inferred == actual)
    return true;
  ctx.opError(op, "inferred type(s) " + typeList(inferred) +
                      " are incompatible with return type(s) of operation " +
                      typeList(actual));
  return ctx.opError(op, "failed to infer returned types");
}

// "number of block arguments must match ..." / "expected the type of ...".
bool verifyInnerOuterTypes(VerifyContext &ctx, Operation &op,
                           const std::vector<Type> &inner,
                           const std::vector<Type> &outer,
                           const std::string &inner_name,
                           const std::string &outer_name) {
  if (inner.size() != outer.size())
    return ctx.plainError(op, "number of " + inner_name +
                                  "s must match the number of " + outer_name +
                                  "s: " + std::to_string(inner.size()) +
                                  " != " + std::to_string(outer.size()));
  for (size_t i = 0; i < inner.size(); ++i)
    if (inner[i] != outer[i])
      return ctx.plainError(op, "expected the type of the " +
                                    std::to_string(i) + "'th " + inner_name +
                                    " to match the type of the corresponding " +
                                    outer_name + ": '" + inner[i]->text +
                                    "' vs '" + outer[i]->text + "'");
  return true;
}

bool verifyNamedShardings(VerifyContext &ctx, Operation &op, const char *name,
                          const std::vector<Type> &types) {
  const Attr *attr = op.attrs.get(name);
  if (!attr || attr->kind != AttrKind::ShardingPerValue)
    return true;
  ShardingVerifyOptions options;
  options.already_manual_axes = enclosingManualAxes(op);
  std::optional<std::string> error =
      verifyShardingPerValue(attr->shardings(), ctx.meshesOf(attr->shardings()),
                             shapeInfos(types), options);
  return !error || ctx.shardingError(op, std::string(name) + " " + *error);
}

std::vector<Type> blockArgTypes(Operation &op) {
  std::vector<Type> types;
  if (op.numRegions() == 0 || op.region(0).empty())
    return types;
  Block &block = op.region(0).front();
  for (size_t i = 0; i < block.numArguments(); ++i)
    types.push_back(block.argument(i)->type);
  return types;
}

bool verifyNamedComputation(VerifyContext &ctx, Operation &op) {
  if (!verifyInferredResults(ctx, op) ||
      !verifyInnerOuterTypes(ctx, op, blockArgTypes(op), operandTypes(op),
                             "block argument", "operand"))
    return false;
  Operation *terminator = terminatorOf(op);
  if (terminator &&
      !verifyInnerOuterTypes(ctx, op, operandTypes(*terminator),
                             resultTypes(op), "returned value", "result"))
    return false;
  return verifyNamedShardings(ctx, op, "in_shardings", operandTypes(op)) &&
         verifyNamedShardings(ctx, op, "out_shardings", resultTypes(op));
}

// The dense literal's type must be static (MLIR's elements attribute).
bool verifyConstant(VerifyContext &ctx, Operation &op) {
  const Attr *value = op.attrs.get("value");
  Type type = value && value->type ? value->type
              : op.numResults()    ? op.result(0)->type
                                   : nullptr;
  if (type && type->isTensor() &&
      (!type->isRankedTensor() || !type->hasStaticShape()))
    return ctx.plainError(op, "elements literal type must have static shape");
  return true;
}

// MLIR's SameOperandsAndResultType, which Shardy declares on the ops that
// keep a value whole in the global view: the markers and every collective
// (an all_gather of tensor<8xf32> returns tensor<8xf32>; only its sharding
// changes). Checked before the op's own rules, as MLIR checks traits first.
bool keepsItsType(const Operation &op) {
  return op.is("sdy.sharding_constraint") || op.is("sdy.reshard") ||
         op.is("sdy.data_flow_edge") || op.is("sdy.func_data_flow_edge") ||
         op.is("sdy.propagation_barrier") || isCollective(op);
}

bool verifySameOperandsAndResultType(VerifyContext &ctx, Operation &op) {
  Type first = nullptr;
  bool same = true;
  auto compare = [&](Type type) {
    first = first ? first : type;
    same = same && type == first;
  };
  for (size_t i = 0; i < op.numOperands(); ++i)
    compare(op.operand(i)->type);
  for (size_t i = 0; i < op.numResults(); ++i)
    compare(op.result(i)->type);
  return same ||
         ctx.opError(op, "requires the same type for all operands and results");
}

} // namespace

bool verifySdyDialectOp(VerifyContext &ctx, Operation &op) {
  if (keepsItsType(op) && !verifySameOperandsAndResultType(ctx, op))
    return false;
  if (op.is("sdy.sharding_constraint") || op.is("sdy.reshard"))
    return verifyShardingOnOperand(ctx, op);
  if (op.is("sdy.data_flow_edge") && op.numOperands() == 1)
    return verifyDataFlowEdge(ctx, op);
  if (op.is("sdy.func_data_flow_edge") && op.numOperands() == 1)
    return verifyFuncDataFlowEdge(ctx, op);
  if (op.is("sdy.propagation_barrier"))
    return verifyBarrier(ctx, op);
  if (op.is("sdy.named_computation"))
    return verifyNamedComputation(ctx, op);
  if (op.is("sdy.constant"))
    return verifyConstant(ctx, op);
  if (op.is("sdy.manual_computation"))
    return verifyManualComputation(ctx, op);
  if (isCollective(op))
    return verifyCollective(ctx, op);
  return true;
}

} // namespace shardlab::verify
