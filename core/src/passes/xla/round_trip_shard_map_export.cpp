// -xla-sdy-round-trip-shard-map-export: each sdy.manual_computation becomes
// the triple XLA keeps through HLO (the inverse of the shard-map import):
//   %l = custom_call @xla.sdy.GlobalToLocalShape(%x) {has_side_effect = true,
//          mhlo.frontend_attributes = {xla.sdy.in_shardings = "...",
//                                      xla.sdy.manual_axes = "..."}}
//   %r = call @xla.sdy.manual_computation_body_N(%l)
//   %g = custom_call @xla.sdy.LocalToGlobalShape(%r)
//          {mhlo.frontend_attributes = {xla.sdy.manual_axes = "...",
//                                       xla.sdy.out_shardings = "..."}}
// Inner manual computations are exported first (post order), so nested
// ones end up inside the outer body function.
#include "passes/call_graph.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "shardlab/text/text.h"
#include "xla_passes.h"

namespace shardlab {

namespace {

// `{key = "<attr as text>", ...}` in the given key order.
const Attr *frontendDict(
    Context &ctx,
    const std::vector<std::pair<std::string_view, const Attr *>> &entries) {
  std::vector<NamedAttr> named;
  for (const auto &[key, value] : entries)
    named.push_back({ctx.intern(key), ctx.attrs.string(printAttribute(value))});
  return ctx.attrs.make(Attr{AttrKind::Dict, std::move(named), nullptr, {}});
}

void exportManualComputation(Module &module, Operation &mc,
                             SymbolInserter &symbols) {
  Context &ctx = module.ctx();
  const Attr *in = mc.attrs.get("in_shardings");
  const Attr *out = mc.attrs.get("out_shardings");
  const Attr *axes = mc.attrs.get("manual_axes");
  Block &body = mc.region(0).front();
  std::vector<Value *> locals;
  if (mc.numOperands()) {
    std::vector<Value *> operands;
    std::vector<Type> types;
    for (size_t i = 0; i < mc.numOperands(); ++i)
      operands.push_back(mc.operand(i));
    for (size_t i = 0; i < body.numArguments(); ++i)
      types.push_back(body.argument(i)->type);
    auto to_local =
        makeOp(ctx, "stablehlo.custom_call", operands, types, mc.loc);
    to_local->attrs.set(ctx.intern("call_target_name"),
                        ctx.attrs.string("xla.sdy.GlobalToLocalShape"));
    to_local->attrs.set(ctx.intern("has_side_effect"), ctx.attrs.boolean(true));
    to_local->attrs.set(ctx.intern("mhlo.frontend_attributes"),
                        frontendDict(ctx, {{"xla.sdy.in_shardings", in},
                                           {"xla.sdy.manual_axes", axes}}));
    Operation *inserted =
        mc.parentBlock()->insertBefore(&mc, std::move(to_local));
    for (size_t i = 0; i < inserted->numResults(); ++i)
      locals.push_back(inserted->result(i));
  }
  // The body becomes a function.
  std::vector<Type> inputs, results;
  for (size_t i = 0; i < body.numArguments(); ++i)
    inputs.push_back(body.argument(i)->type);
  Operation *ret = body.back();
  for (size_t i = 0; ret && i < ret->numOperands(); ++i)
    results.push_back(ret->operand(i)->type);
  auto func = makePrivateFunc(ctx, "xla.sdy.manual_computation_body", inputs,
                              results, mc.loc);
  func->attrs.erase("sym_visibility");
  moveRegionBlocks(mc.region(0), func->addRegion());
  replaceTerminator(func->region(0).front(), "func.return", ctx);
  Operation *inserted_func = symbols.insert(std::move(func));
  auto call = makeOp(ctx, "func.call", locals, results, mc.loc);
  setCallee(*call, symbolName(*inserted_func), ctx);
  Operation *inserted_call =
      mc.parentBlock()->insertBefore(&mc, std::move(call));
  std::vector<Value *> globals;
  if (mc.numResults()) {
    std::vector<Value *> operands;
    std::vector<Type> types;
    for (size_t i = 0; i < inserted_call->numResults(); ++i)
      operands.push_back(inserted_call->result(i));
    for (size_t i = 0; i < mc.numResults(); ++i)
      types.push_back(mc.result(i)->type);
    auto to_global =
        makeOp(ctx, "stablehlo.custom_call", operands, types, mc.loc);
    to_global->attrs.set(ctx.intern("call_target_name"),
                         ctx.attrs.string("xla.sdy.LocalToGlobalShape"));
    to_global->attrs.set(ctx.intern("mhlo.frontend_attributes"),
                         frontendDict(ctx, {{"xla.sdy.manual_axes", axes},
                                            {"xla.sdy.out_shardings", out}}));
    Operation *inserted =
        mc.parentBlock()->insertBefore(&mc, std::move(to_global));
    for (size_t i = 0; i < inserted->numResults(); ++i)
      globals.push_back(inserted->result(i));
  }
  replaceOp(mc, globals);
}

} // namespace

bool xlaRoundTripShardMapExportPass(Module &module, const PassOptions &,
                                    DiagnosticEngine &) {
  std::vector<Operation *> manual;
  walkPostOrder(module.op(), [&](Operation &op) {
    if (op.is("sdy.manual_computation"))
      manual.push_back(&op);
  });
  SymbolInserter symbols(module);
  for (Operation *op : manual)
    exportManualComputation(module, *op, symbols);
  return true;
}

} // namespace shardlab
