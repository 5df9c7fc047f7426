// Shardings attached to values: the `sdy.sharding` (sharding per value) and
// `sdy.sharding_rule` discardable attributes of any op, and the
// `sdy.sharding` attributes of func.func arguments and results (Shardy's
// verifyOperationAttribute / verifyRegionArgAttribute /
// verifyRegionResultAttribute).
#include "verify_ops.h"

namespace shardlab::verify {

namespace {

ShardingVerifyOptions optionsFor(const VerifyContext &ctx,
                                 const Operation &op) {
  ShardingVerifyOptions options;
  if (ctx.mayHaveManualAxes())
    options.already_manual_axes = enclosingManualAxes(op);
  return options;
}

bool verifyOpSharding(VerifyContext &ctx, Operation &op, const Attr &attr) {
  if (attr.kind != AttrKind::ShardingPerValue)
    return ctx.opError(op, "should have a sharding attribute of type "
                           "TensorShardingPerValueAttr");
  // Inside a manual computation the answer also depends on the enclosing
  // manual axes: those ops are not memoized.
  ShardingVerifyOptions options = optionsFor(ctx, op);
  bool memo = options.already_manual_axes.empty();
  ctx.startKey(VerifyContext::Check::OpSharding, &attr);
  for (size_t i = 0; i < op.numResults(); ++i)
    ctx.addKeyType(op.result(i)->type);
  if (memo && ctx.passed())
    return true;
  std::optional<std::string> error =
      verifyShardingPerValue(attr.shardings(), ctx.meshesOf(attr.shardings()),
                             shapeInfos(resultTypes(op)), options);
  if (error)
    return ctx.shardingError(op, "result " + *error);
  if (memo)
    ctx.recordPassed();
  return true;
}

bool verifyOpRule(VerifyContext &ctx, Operation &op, const Attr &attr) {
  if (attr.kind != AttrKind::OpShardingRule)
    return ctx.opError(op, "should have a sharding rule attribute of type "
                           "OpShardingRuleAttr");
  ctx.startKey(VerifyContext::Check::OpRule, &attr);
  for (size_t i = 0; i < op.numOperands(); ++i)
    ctx.addKeyType(op.operand(i)->type);
  ctx.addKeyType(nullptr); // operands | results
  for (size_t i = 0; i < op.numResults(); ++i)
    ctx.addKeyType(op.result(i)->type);
  if (ctx.passed())
    return true;
  std::optional<std::string> error = verifyOpShardingRule(
      attr.rule(), shapeInfos(operandTypes(op)), shapeInfos(resultTypes(op)));
  if (error)
    return ctx.opError(op, *error);
  ctx.recordPassed();
  return true;
}

bool isPropagationEdgesName(std::string_view name) {
  return name == "sdy.propagation_edges" ||
         name == "sdy.result_propagation_edges" ||
         name == "sdy.block_arg_propagation_edges";
}

// "arg 0 - " / "result 2 - " checks of one func argument or result.
bool verifyFuncValue(VerifyContext &ctx, Operation &func, const Attr *dict,
                     Type type, VerifyContext::FuncValue kind, size_t index) {
  if (!dict || dict->kind != AttrKind::Dict)
    return true;
  const Attr *attr = dict->get("sdy.sharding");
  if (!attr)
    return true;
  if (attr->kind != AttrKind::Sharding)
    return ctx.funcValueError(func, kind, index,
                              "should have a sharding attribute of type "
                              "TensorShardingAttr");
  ctx.startKey(VerifyContext::Check::FuncValue, attr);
  ctx.addKeyType(type);
  if (ctx.passed())
    return true;
  std::optional<std::string> error = verifyTensorSharding(
      attr->sharding(), ctx.lookupMesh(attr->sharding().mesh), shapeInfo(type),
      optionsFor(ctx, func));
  if (error)
    return ctx.funcValueError(func, kind, index, *error);
  ctx.recordPassed();
  return true;
}

const Attr *dictAt(const Attr *array, size_t index) {
  if (!array || array->kind != AttrKind::Array ||
      index >= array->elements().size())
    return nullptr;
  return array->elements()[index];
}

} // namespace

bool verifyDiscardableAttrs(VerifyContext &ctx, Operation &op) {
  for (const NamedAttr &entry : op.attrs.entries()) {
    // Every name checked here is an sdy one: most entries fail this first.
    if (!entry.value || entry.name.size() < 12 ||
        entry.name.compare(0, 4, "sdy.") != 0)
      continue;
    if (entry.name == "sdy.sharding" &&
        !verifyOpSharding(ctx, op, *entry.value))
      return false;
    if (entry.name == "sdy.sharding_rule" &&
        !verifyOpRule(ctx, op, *entry.value))
      return false;
    if (isPropagationEdgesName(entry.name) &&
        !verifyPropagationEdgesAttr(ctx, op, entry))
      return false;
  }
  return true;
}

bool verifyFuncShardings(VerifyContext &ctx, Operation &func) {
  const Attr *function_type = func.attrs.get("function_type");
  if (!function_type || function_type->kind != AttrKind::TypeAttr)
    return true;
  Type type = std::get<Type>(function_type->payload);
  if (!type || type->kind != TypeKind::Function)
    return true;
  const Attr *arg_attrs = func.attrs.get("arg_attrs");
  for (size_t i = 0; i < type->members.size(); ++i)
    if (!verifyFuncValue(ctx, func, dictAt(arg_attrs, i), type->members[i],
                         VerifyContext::FuncValue::Arg, i))
      return false;
  const Attr *res_attrs = func.attrs.get("res_attrs");
  for (size_t i = 0; i < type->results.size(); ++i)
    if (!verifyFuncValue(ctx, func, dictAt(res_attrs, i), type->results[i],
                         VerifyContext::FuncValue::Result, i))
      return false;
  return true;
}

} // namespace shardlab::verify
