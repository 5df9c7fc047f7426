// -xla-sdy-round-trip-export-pipeline: a Shardy module ready to go through
// HLO with every Shardy attribute kept as a frontend-attribute string (the
// inverse of -xla-sdy-round-trip-import-pipeline). Each sharding is kept
// twice, as the Shardy text and as the HLO string XLA reads:
//
//   sdy.mesh @m = <...>          -> module {mhlo.frontend_attributes =
//                                     {xla.sdy.meshes = "{m =
//                                     #sdy.mesh<...>}"}}
//                                   (meshes over the same devices merged first)
//   {sdy.sharding = S}           -> {mhlo.frontend_attributes =
//                                     {xla.sdy.sharding = "S"},
//                                   mhlo.sharding = "{devices=...}"}
//   func result sharding S       -> custom_call @xla.sdy.FuncResultSharding
//                                   on the returned value; the result keeps
//                                   only mhlo.sharding
//   sdy.sharding_constraint      -> custom_call @Sharding
//   sdy.sharding_group           -> custom_call @xla.sdy.ShardingGroup
//   sdy.propagation_barrier      -> custom_call @xla.sdy.PropagationBarrier
//   sdy.manual_computation       -> -xla-sdy-round-trip-shard-map-export
//   sdy.constant                 -> stablehlo.constant
//   sdy.sharding_rule R          -> xla.sdy.sharding_rule = "R"
//
// A module with no Shardy content is left as it is.
#include "ir/propagation_direction.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "sharding/hlo_sharding.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"
#include "xla_passes.h"

#include <optional>

namespace shardlab {

namespace {

constexpr std::string_view kFrontend = "mhlo.frontend_attributes";

bool hasShardyContent(Module &module) {
  bool found = false;
  walk(module.op(), [&](Operation &op) {
    found = found || op.dialect() == "sdy" || op.attrs.get("sdy.sharding") ||
            op.attrs.get("sdy.sharding_rule");
    if (op.is("func.func"))
      for (const char *list : {"arg_attrs", "res_attrs"})
        if (const Attr *array = op.attrs.get(list);
            array && array->kind == AttrKind::Array)
          for (const Attr *dict : array->elements())
            found = found || (dict && dict->kind == AttrKind::Dict &&
                              dict->get("sdy.sharding"));
  });
  return found;
}

class RoundTripExporter {
public:
  RoundTripExporter(Module &module, DiagnosticEngine &diags)
      : module_(module), ctx_(module.ctx()), diags_(diags) {}

  bool ok = true;

  void exportFunc(Operation &func) {
    // Every sharding is read before the dictionaries lose them.
    std::vector<const Attr *> args, results;
    for (size_t i = 0; i < funcNumInputs(func); ++i)
      args.push_back(shardingAttr(getFuncArgAttr(func, i, "sdy.sharding")));
    for (size_t i = 0; i < funcNumResults(func); ++i)
      results.push_back(
          shardingAttr(getFuncResultAttr(func, i, "sdy.sharding")));
    eraseFuncArgAndResultAttr(func, "sdy.sharding", ctx_);
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i])
        continue;
      setFuncArgAttr(func, i, kFrontend,
                     withEntry(getFuncArgAttr(func, i, kFrontend),
                               "xla.sdy.sharding", args[i]),
                     ctx_);
      setFuncArgAttr(
          func, i, "mhlo.sharding",
          ctx_.attrs.string(hloText({args[i]->sharding()}, func.loc)), ctx_);
    }
    exportResults(func, results);
    if (func.numRegions() && !func.region(0).empty())
      exportBlock(func.region(0).front());
  }

  void exportMeshes() {
    std::string text;
    for (Operation *op = module_.body().front(); op;) {
      Operation *next = op->nextInBlock();
      if (op->is("sdy.mesh")) {
        text += (text.empty() ? "" : ", ") + op->attrs.get("sym_name")->str() +
                " = " + printAttribute(op->attrs.get("mesh"));
        module_.body().erase(op);
      }
      op = next;
    }
    if (text.empty())
      return;
    Operation &top = module_.op();
    top.attrs.set(
        ctx_.intern(kFrontend),
        withText(top.attrs.get(kFrontend), "xla.sdy.meshes", "{" + text + "}"));
    module_.invalidateSymbols();
  }

private:
  Module &module_;
  Context &ctx_;
  DiagnosticEngine &diags_;

  // `{a, b}` for several results, the one string for one.
  std::string hloText(const std::vector<TensorSharding> &shardings,
                      Location loc) {
    std::vector<std::string> texts;
    for (const TensorSharding &sharding : shardings) {
      const Mesh *mesh = lookupMesh(module_, sharding.mesh);
      if (!mesh) {
        diags_.error(loc, "unknown mesh @" + sharding.mesh.symbol);
        ok = false;
        return "{replicated}";
      }
      texts.push_back(hloShardingText(sharding, *mesh, {}));
    }
    if (texts.size() == 1)
      return texts[0];
    std::string tuple = "{";
    for (size_t i = 0; i < texts.size(); ++i)
      tuple += (i ? ", " : "") + texts[i];
    return tuple + "}";
  }

  // A frontend-attribute dictionary with `key` = the text of `value` added.
  const Attr *withEntry(const Attr *dict, std::string_view key,
                        const Attr *value) {
    return withText(dict, key, printAttribute(value));
  }

  const Attr *withText(const Attr *dict, std::string_view key,
                       std::string text) {
    return dictWith(dict, key, ctx_.attrs.string(std::move(text)), ctx_);
  }

  static const Attr *shardingAttr(const Attr *attr) {
    return attr && attr->kind == AttrKind::Sharding ? attr : nullptr;
  }

  // Result shardings move onto @xla.sdy.FuncResultSharding calls before the
  // return; the results keep the HLO string.
  void exportResults(Operation &func,
                     const std::vector<const Attr *> &shardings) {
    Operation *ret = func.numRegions() && !func.region(0).empty()
                         ? func.region(0).front().back()
                         : nullptr;
    for (size_t i = 0; i < shardings.size(); ++i) {
      if (!shardings[i])
        continue;
      const TensorSharding &sharding = shardings[i]->sharding();
      setFuncResultAttr(func, i, "mhlo.sharding",
                        ctx_.attrs.string(hloText({sharding}, func.loc)), ctx_);
      if (!ret || i >= ret->numOperands())
        continue;
      Value *value = ret->operand(i);
      Operation *call =
          customCallBefore(*ret, "xla.sdy.FuncResultSharding", value,
                           value->type, /*side_effect=*/true);
      call->attrs.set(ctx_.intern(kFrontend),
                      withEntry(nullptr, "xla.sdy.sharding",
                                ctx_.attrs.shardingPerValue({sharding})));
      ret->setOperand(i, call->result(0));
    }
  }

  Operation *customCallBefore(Operation &at, std::string_view target,
                              Value *operand, Type result, bool side_effect) {
    std::vector<Type> results;
    if (result)
      results.push_back(result);
    auto call =
        makeOp(ctx_, "stablehlo.custom_call", {operand}, results, at.loc);
    call->attrs.set(ctx_.intern("call_target_name"),
                    ctx_.attrs.string(std::string(target)));
    if (side_effect)
      call->attrs.set(ctx_.intern("has_side_effect"), ctx_.attrs.boolean(true));
    return at.parentBlock()->insertBefore(&at, std::move(call));
  }

  void exportBlock(Block &block) {
    for (Operation *op = block.front(); op;) {
      Operation *next = op->nextInBlock();
      exportOp(*op);
      op = next;
    }
  }

  void exportOp(Operation &op) {
    if (op.is("sdy.sharding_constraint")) {
      const TensorSharding &sharding = opSharding(op);
      Operation *call = customCallBefore(op, "Sharding", op.operand(0),
                                         op.result(0)->type, false);
      call->attrs.set(ctx_.intern("sdy.sharding"),
                      ctx_.attrs.shardingPerValue({sharding}));
      replaceOp(op, {call->result(0)});
      exportShardingAndRule(*call);
      return;
    }
    if (op.is("sdy.sharding_group")) {
      Operation *call = customCallBefore(op, "xla.sdy.ShardingGroup",
                                         op.operand(0), nullptr, true);
      call->attrs.set(ctx_.intern(kFrontend),
                      withEntry(nullptr, "xla.sdy.sharding_group_id",
                                op.attrs.get("group_id")));
      eraseOp(op);
      return;
    }
    if (op.is("sdy.propagation_barrier")) {
      Operation *call =
          customCallBefore(op, "xla.sdy.PropagationBarrier", op.operand(0),
                           op.result(0)->type, true);
      call->attrs.set(
          ctx_.intern(kFrontend),
          withText(nullptr, "xla.sdy.allowed_direction", directionText(op)));
      replaceOp(op, {call->result(0)});
      return;
    }
    if (op.is("sdy.constant")) {
      auto constant =
          makeOp(ctx_, "stablehlo.constant", {}, {op.result(0)->type}, op.loc);
      for (const NamedAttr &entry : op.attrs.entries())
        constant->attrs.set(entry.name, entry.value);
      Operation *inserted =
          op.parentBlock()->insertBefore(&op, std::move(constant));
      replaceOp(op, {inserted->result(0)});
      exportShardingAndRule(*inserted);
      return;
    }
    exportShardingAndRule(op);
    for (size_t r = 0; r < op.numRegions(); ++r)
      for (auto &block : op.region(r).blocks)
        exportBlock(*block);
  }

  // `allowed_direction` as the integer of Shardy's PropagationDirection.
  static std::string directionText(const Operation &op) {
    const Attr *direction = op.attrs.get("allowed_direction");
    const std::string name = direction && direction->kind == AttrKind::String
                                 ? direction->str()
                                 : "BOTH";
    return std::to_string(propagationDirectionNumber(name)) + " : i32";
  }

  void exportShardingAndRule(Operation &op) {
    const Attr *sharding = op.attrs.get("sdy.sharding");
    const Attr *rule = op.attrs.get("sdy.sharding_rule");
    if (!sharding && !rule)
      return;
    const Attr *frontend = op.attrs.get(kFrontend);
    if (sharding && sharding->kind == AttrKind::ShardingPerValue) {
      frontend = withEntry(frontend, "xla.sdy.sharding", sharding);
      op.attrs.set(ctx_.intern("mhlo.sharding"),
                   ctx_.attrs.string(hloText(sharding->shardings(), op.loc)));
      op.attrs.erase("sdy.sharding");
    }
    if (rule) {
      frontend = withEntry(frontend, "xla.sdy.sharding_rule", rule);
      op.attrs.erase("sdy.sharding_rule");
    }
    op.attrs.set(ctx_.intern(kFrontend), frontend);
  }
};

} // namespace

bool xlaRoundTripExportPipeline(Module &module, const PassOptions &options,
                                DiagnosticEngine &diags) {
  if (!hasShardyContent(module))
    return true;
  if (!runNestedPass(module, "xla-sdy-round-trip-shard-map-export", diags))
    return false;
  dedupMeshesOverSameDevices(module);
  RoundTripExporter exporter(module, diags);
  forEachFunc(module, [&](Operation &func) { exporter.exportFunc(func); });
  if (!exporter.ok)
    return false;
  exporter.exportMeshes();
  return true;
}

} // namespace shardlab
