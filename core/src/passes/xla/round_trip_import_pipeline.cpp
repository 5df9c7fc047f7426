// -xla-sdy-round-trip-import-pipeline: a module that went through HLO with
// its Shardy attributes kept as strings (-xla-sdy-round-trip-export-
// pipeline) back in Shardy form.
//
//   module {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh =
//   #sdy.mesh<...>}"}}
//     -> sdy.mesh @mesh = <...>
//   {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<...>"}}
//     -> {sdy.sharding = #sdy.sharding<...>} (args, results, ops; the HLO
//        copy in mhlo.sharding is dropped); xla.sdy.sharding_rule likewise
//   custom_call @xla.sdy.FuncResultSharding(%x)  -> the func result's
//        sharding where %x is returned, a sharding constraint elsewhere
//   custom_call @Sharding                        -> sdy.sharding_constraint
//   custom_call @xla.sdy.ShardingGroup           -> sdy.sharding_group
//   custom_call @xla.sdy.PropagationBarrier      -> sdy.propagation_barrier
//   GlobalToLocalShape / body call / LocalToGlobalShape -> manual_computation
// then mesh axes of size one are removed. Shardings on custom calls it does
// not know are dropped, as XLA does.
#include "ir/propagation_direction.h"
#include "passes/call_graph_passes.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "sharding/hlo_sharding.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"
#include "xla_passes.h"

#include <cstdlib>

namespace shardlab {

namespace {

constexpr std::string_view kFrontend = "mhlo.frontend_attributes";

class Importer {
public:
  Importer(Module &module, DiagnosticEngine &diags)
      : module_(module), ctx_(module.ctx()), diags_(diags) {}

  /// The attribute a frontend-attribute string holds; null when absent or
  /// after a diagnostic.
  const Attr *read(const Attr *frontend, std::string_view key, Location loc) {
    const Attr *text = frontend && frontend->kind == AttrKind::Dict
                           ? frontend->get(key)
                           : nullptr;
    if (!text || text->kind != AttrKind::String)
      return nullptr;
    Result<const Attr *> attr =
        parseAttributeText(text->str(), module_.sharedContext());
    if (!attr) {
      diags_.error(loc, "cannot read " + std::string(key) + " \"" +
                            text->str() + "\": " + attr.error().message);
      ok = false;
      return nullptr;
    }
    return *attr;
  }

  void importMeshes() {
    Operation &top = module_.op();
    const Attr *frontend = top.attrs.get(kFrontend);
    const Attr *meshes = read(frontend, "xla.sdy.meshes", top.loc);
    if (frontend && frontend->kind == AttrKind::Dict &&
        frontend->get("xla.sdy.meshes"))
      setOrEraseAttr(top, kFrontend,
                     dictWithout(frontend, "xla.sdy.meshes", ctx_), ctx_);
    if (!meshes || meshes->kind != AttrKind::Dict)
      return;
    Operation *first = module_.body().front();
    for (const NamedAttr &entry : meshes->entries()) {
      if (entry.value->kind != AttrKind::Mesh)
        continue;
      auto op = makeOp(ctx_, "sdy.mesh", {}, {}, top.loc);
      op->attrs.set(ctx_.intern("sym_name"),
                    ctx_.attrs.string(std::string(entry.name)));
      op->attrs.set(ctx_.intern("mesh"), entry.value);
      module_.body().insertBefore(first, std::move(op));
    }
    module_.invalidateSymbols();
  }

  void importFunc(Operation &func) {
    for (bool arg : {true, false}) {
      const char *list = arg ? "arg_attrs" : "res_attrs";
      const Attr *array = func.attrs.get(list);
      if (!array || array->kind != AttrKind::Array)
        continue;
      std::vector<const Attr *> dicts;
      for (const Attr *dict : array->elements())
        dicts.push_back(importEntry(dict, func.loc));
      func.attrs.set(ctx_.intern(list), ctx_.attrs.array(std::move(dicts)));
    }
  }

  void importOp(Operation &op) {
    const Attr *frontend = op.attrs.get(kFrontend);
    op.attrs.erase("mhlo.sharding");
    if (!frontend || frontend->kind != AttrKind::Dict)
      return;
    const Attr *sharding = read(frontend, "xla.sdy.sharding", op.loc);
    const Attr *rule = read(frontend, "xla.sdy.sharding_rule", op.loc);
    const Attr *rest =
        dictWithout(dictWithout(frontend, "xla.sdy.sharding", ctx_),
                    "xla.sdy.sharding_rule", ctx_);
    setOrEraseAttr(op, kFrontend, rest, ctx_);
    const bool custom = op.is("stablehlo.custom_call");
    const bool known = !custom || isCustomCall(&op, "Sharding") ||
                       isCustomCall(&op, "xla.sdy.FuncResultSharding") ||
                       onMaximalMesh(sharding);
    if (sharding && sharding->kind == AttrKind::ShardingPerValue && known)
      op.attrs.set(ctx_.intern("sdy.sharding"), sharding);
    if (rule && rule->kind == AttrKind::OpShardingRule)
      op.attrs.set(ctx_.intern("sdy.sharding_rule"), rule);
  }

  bool ok = true;

private:
  // A sharding that pins a custom call (a host callback) to one device.
  bool onMaximalMesh(const Attr *sharding) {
    if (!sharding || sharding->kind != AttrKind::ShardingPerValue ||
        sharding->shardings().empty())
      return false;
    const Mesh *mesh = lookupMesh(module_, sharding->shardings()[0].mesh);
    return mesh && mesh->isMaximal();
  }

  // One func argument or result dictionary.
  const Attr *importEntry(const Attr *dict, Location loc) {
    if (!dict || dict->kind != AttrKind::Dict)
      return dict;
    const Attr *frontend = dict->get(kFrontend);
    const Attr *sharding = read(frontend, "xla.sdy.sharding", loc);
    std::vector<NamedAttr> kept;
    for (const NamedAttr &entry : dict->entries()) {
      if (entry.name == "mhlo.sharding")
        continue;
      if (entry.name == kFrontend) {
        if (const Attr *rest =
                dictWithout(entry.value, "xla.sdy.sharding", ctx_))
          kept.push_back({entry.name, rest});
        continue;
      }
      kept.push_back(entry);
    }
    if (sharding && sharding->kind == AttrKind::Sharding)
      kept.push_back({ctx_.intern("sdy.sharding"), sharding});
    return ctx_.attrs.make(Attr{AttrKind::Dict, std::move(kept), nullptr, {}});
  }

  Module &module_;
  Context &ctx_;
  DiagnosticEngine &diags_;
};

Value *constraint(Context &ctx, Operation &at, Value *input,
                  const TensorSharding &sharding) {
  auto op =
      makeOp(ctx, "sdy.sharding_constraint", {input}, {input->type}, at.loc);
  setOpSharding(*op, sharding, ctx);
  return at.parentBlock()->insertBefore(&at, std::move(op))->result(0);
}

// `@xla.sdy.FuncResultSharding(%x)`: the results where it is returned get
// its sharding; any other use keeps it as a sharding constraint.
// Sets `sharding` on the results of the enclosing function where `value`
// is returned; whether `value` has other uses.
bool shardReturned(Context &ctx, Operation &at, Value *value,
                   const TensorSharding &sharding) {
  Operation *func = at.parentOp();
  while (func && !func->is("func.func"))
    func = func->parentOp();
  bool other_uses = false;
  for (Operation *user : usersOf(value)) {
    if (!user->is("func.return") || user->parentOp() != func || !func) {
      other_uses = true;
      continue;
    }
    for (size_t i = 0; i < user->numOperands(); ++i)
      if (user->operand(i) == value)
        setFuncResultSharding(*func, i, sharding, ctx);
  }
  return other_uses;
}

// An i64 value XLA split into halves is returned as a tuple of them (or as
// several operands) and rebuilt by X64Combine: the sharding goes on the
// X64Combine, the halves flow through.
void importSplitFuncResultSharding(Context &ctx, Operation &call,
                                   const TensorSharding *sharding) {
  std::vector<Value *> halves;
  Operation *tuple = nullptr;
  if (call.numOperands() == 1 && !call.operand(0)->isBlockArgument() &&
      call.operand(0)->defining_op->is("stablehlo.tuple")) {
    tuple = call.operand(0)->defining_op;
    for (size_t i = 0; i < tuple->numOperands(); ++i)
      halves.push_back(tuple->operand(i));
    for (Operation *user : usersOf(call.result(0))) {
      const Attr *index = user->attrs.get("index");
      if (user->is("stablehlo.get_tuple_element") && index &&
          size_t(index->intValue()) < halves.size())
        replaceOp(*user, {halves[size_t(index->intValue())]});
    }
  } else if (call.numOperands() == call.numResults()) {
    for (size_t i = 0; i < call.numOperands(); ++i) {
      halves.push_back(call.operand(i));
      call.result(i)->replaceAllUsesWith(call.operand(i));
    }
  }
  for (Value *half : halves)
    for (Operation *user : usersOf(half))
      if (sharding && isCustomCall(user, "X64Combine") &&
          !user->attrs.get("sdy.sharding")) {
        setShardingList(*user, "sdy.sharding", {*sharding}, ctx);
        shardReturned(ctx, *user, user->result(0), *sharding);
      }
  bool used = false;
  for (size_t i = 0; i < call.numResults(); ++i)
    used = used || call.result(i)->firstUse();
  if (!used) {
    eraseOp(call);
    if (tuple && !tuple->result(0)->firstUse())
      eraseOp(*tuple);
  }
}

void importFuncResultSharding(Context &ctx, Operation &call) {
  const TensorSharding *sharding = firstResultSharding(call);
  if (!sharding || call.numOperands() != 1 || call.numResults() != 1 ||
      call.result(0)->type->kind == TypeKind::Tuple) {
    importSplitFuncResultSharding(ctx, call, sharding);
    return;
  }
  // An unused call marks the value it wraps, where that is returned.
  Value *target = call.result(0)->firstUse() ? call.result(0) : call.operand(0);
  const bool other_uses =
      shardReturned(ctx, call, target, *sharding) && target == call.result(0);
  Value *replacement = call.operand(0);
  if (other_uses)
    replacement = constraint(ctx, call, replacement, *sharding);
  replaceOp(call, {replacement});
}

int64_t integerOf(const Attr *frontend, std::string_view key) {
  const Attr *text = frontend && frontend->kind == AttrKind::Dict
                         ? frontend->get(key)
                         : nullptr;
  return text && text->kind == AttrKind::String
             ? std::strtoll(text->str().c_str(), nullptr, 10)
             : 0;
}

void importCustomCalls(Module &module) {
  Context &ctx = module.ctx();
  std::vector<Operation *> calls;
  walk(module.op(), [&](Operation &op) {
    if (op.is("stablehlo.custom_call"))
      calls.push_back(&op);
  });
  for (Operation *call : calls) {
    // An unused empty-tuple result is how HLO spells "no result".
    if (call->numResults() == 1 &&
        call->result(0)->type->kind == TypeKind::Tuple &&
        call->result(0)->type->members.empty() &&
        !call->result(0)->firstUse()) {
      std::vector<Value *> operands;
      for (size_t i = 0; i < call->numOperands(); ++i)
        operands.push_back(call->operand(i));
      auto bare = makeOp(ctx, "stablehlo.custom_call", operands, {}, call->loc);
      for (const NamedAttr &entry : call->attrs.entries())
        bare->attrs.set(entry.name, entry.value);
      Operation *inserted =
          call->parentBlock()->insertBefore(call, std::move(bare));
      eraseOp(*call);
      call = inserted;
    }
    if (isCustomCall(call, "xla.sdy.FuncResultSharding")) {
      importFuncResultSharding(ctx, *call);
    } else if (isCustomCall(call, "Sharding") && call->numOperands() == 1 &&
               firstResultSharding(*call)) {
      // The value a @Sharding call constrains carries that sharding only
      // through the call: a copy of it on the producer is dropped.
      Value *input = call->operand(0);
      if (!input->isBlockArgument() && usersOf(input).size() == 1)
        input->defining_op->attrs.erase("sdy.sharding");
      Value *value =
          constraint(ctx, *call, call->operand(0), *firstResultSharding(*call));
      replaceOp(*call, {value});
    } else if (isCustomCall(call, "xla.sdy.ShardingGroup") &&
               call->numOperands() == 1) {
      const Attr *frontend = call->attrs.get(kFrontend);
      auto group =
          makeOp(ctx, "sdy.sharding_group", {call->operand(0)}, {}, call->loc);
      group->attrs.set(
          ctx.intern("group_id"),
          ctx.attrs.integer(integerOf(frontend, "xla.sdy.sharding_group_id"),
                            ctx.types.element("i64")));
      call->parentBlock()->insertBefore(call, std::move(group));
      if (call->numResults() == 0 || !call->result(0)->firstUse())
        eraseOp(*call);
    } else if (isCustomCall(call, "xla.sdy.PropagationBarrier") &&
               call->numOperands() == 1 && call->numResults() == 1) {
      const int64_t direction =
          integerOf(call->attrs.get(kFrontend), "xla.sdy.allowed_direction");
      auto barrier = makeOp(ctx, "sdy.propagation_barrier", {call->operand(0)},
                            {call->result(0)->type}, call->loc);
      barrier->attrs.set(
          ctx.intern("allowed_direction"),
          ctx.attrs.string(std::string(propagationDirectionName(direction))));
      Operation *inserted =
          call->parentBlock()->insertBefore(call, std::move(barrier));
      replaceOp(*call, {inserted->result(0)});
    }
  }
}

// enable-hlo-sharding-v3: the shardings travel as HloShardingV3 strings in
// mhlo.sharding (`{mesh[a=8,b=8,c=8], [{b}]}`, over inline meshes), and
// main's arguments and results may take theirs from the module's
// xla.sdy.tuple_args_shardings / xla.sdy.tuple_results_shardings. Each
// becomes the xla.sdy.sharding frontend string the import reads (an
// existing one wins); the inline meshes are lifted and merged afterwards.
class V3Strings {
public:
  V3Strings(Module &module, DiagnosticEngine &diags)
      : module_(module), ctx_(module.ctx()), diags_(diags) {}

  bool run() {
    forEachFunc(module_, [&](Operation &func) {
      for (size_t i = 0; i < funcNumInputs(func); ++i)
        convertEntry(func, i, true);
      for (size_t i = 0; i < funcNumResults(func); ++i)
        convertEntry(func, i, false);
    });
    walk(module_.op(), [&](Operation &op) {
      if (!op.is("func.func") && op.attrs.get("mhlo.sharding"))
        convertOp(op);
    });
    applyTupleShardings();
    return ok_;
  }

private:
  Module &module_;
  Context &ctx_;
  DiagnosticEngine &diags_;
  bool ok_ = true;

  std::optional<std::vector<TensorSharding>>
  parse(const Attr *text, const std::vector<Type> &types, Location loc) {
    if (!text || text->kind != AttrKind::String)
      return std::nullopt;
    auto shardings = parseHloShardingV3(text->str());
    if (!shardings) {
      diags_.error(loc, "cannot read mhlo.sharding \"" + text->str() +
                            "\": " + shardings.error().message);
      ok_ = false;
      return std::nullopt;
    }
    // `{mesh[], replicated}` names no dims: one closed dim per rank.
    for (size_t i = 0; i < shardings->size() && i < types.size(); ++i) {
      TensorSharding &sharding = (*shardings)[i];
      const Mesh &mesh = *sharding.mesh.inline_mesh;
      if (sharding.dims.empty() && !mesh.isMaximal() &&
          types[i]->isRankedTensor())
        sharding.dims.resize(size_t(types[i]->rank()));
    }
    return std::move(*shardings);
  }

  static bool hasFrontendSharding(const Attr *frontend) {
    return frontend && frontend->kind == AttrKind::Dict &&
           frontend->get("xla.sdy.sharding");
  }

  const Attr *withSharding(const Attr *frontend, const Attr *sharding) {
    return dictWith(frontend, "xla.sdy.sharding",
                    ctx_.attrs.string(printAttribute(sharding)), ctx_);
  }

  void setEntry(Operation &func, size_t i, bool arg, std::string_view name,
                const Attr *value) {
    if (arg)
      setFuncArgAttr(func, i, name, value, ctx_);
    else
      setFuncResultAttr(func, i, name, value, ctx_);
  }

  void convertEntry(Operation &func, size_t i, bool arg) {
    const Attr *text = arg ? getFuncArgAttr(func, i, "mhlo.sharding")
                           : getFuncResultAttr(func, i, "mhlo.sharding");
    const Attr *frontend = arg ? getFuncArgAttr(func, i, kFrontend)
                               : getFuncResultAttr(func, i, kFrontend);
    if (!text || hasFrontendSharding(frontend))
      return;
    Type fn = std::get<Type>(func.attrs.get("function_type")->payload);
    Type type = arg ? fn->members[i] : fn->results[i];
    auto shardings = parse(text, {type}, func.loc);
    if (shardings && shardings->size() == 1)
      setEntry(func, i, arg, kFrontend,
               withSharding(frontend, ctx_.attrs.sharding((*shardings)[0])));
  }

  void convertOp(Operation &op) {
    const Attr *frontend = op.attrs.get(kFrontend);
    if (hasFrontendSharding(frontend))
      return;
    std::vector<Type> types;
    for (size_t i = 0; i < op.numResults(); ++i)
      types.push_back(op.result(i)->type);
    auto shardings = parse(op.attrs.get("mhlo.sharding"), types, op.loc);
    if (!shardings)
      return;
    op.attrs.set(
        ctx_.intern(kFrontend),
        withSharding(frontend, ctx_.attrs.shardingPerValue(*shardings)));
    op.attrs.erase("mhlo.sharding");
  }

  // xla.sdy.tuple_args_shardings / tuple_results_shardings of the module
  // (with xla.sdy.use_tuple_args) onto main's arguments and results.
  void applyTupleShardings() {
    Operation &top = module_.op();
    const Attr *frontend = top.attrs.get(kFrontend);
    if (!frontend || frontend->kind != AttrKind::Dict)
      return;
    Operation *main = module_.lookupSymbol("main");
    for (bool arg : {true, false}) {
      const char *key = arg ? "xla.sdy.tuple_args_shardings"
                            : "xla.sdy.tuple_results_shardings";
      const Attr *text = frontend->get(key);
      if (!text || text->kind != AttrKind::String)
        continue;
      Result<const Attr *> parsed =
          parseAttributeText(text->str(), module_.sharedContext());
      const Attr *list = parsed ? *parsed : nullptr;
      if (!list || list->kind != AttrKind::ShardingPerValue) {
        diags_.error(top.loc, "cannot read " + std::string(key) + ": " +
                                  (parsed ? "expected #sdy.sharding_per_value"
                                          : parsed.error().message));
        ok_ = false;
        continue;
      }
      const size_t count = !main ? 0
                           : arg ? funcNumInputs(*main)
                                 : funcNumResults(*main);
      for (size_t i = 0; i < count && i < list->shardings().size(); ++i)
        setEntry(*main, i, arg, kFrontend,
                 withSharding(arg ? getFuncArgAttr(*main, i, kFrontend)
                                  : getFuncResultAttr(*main, i, kFrontend),
                              ctx_.attrs.sharding(list->shardings()[i])));
    }
    for (const char *key :
         {"xla.sdy.tuple_args_shardings", "xla.sdy.tuple_results_shardings",
          "xla.sdy.use_tuple_args"})
      frontend = dictWithout(frontend, key, ctx_);
    if (frontend)
      top.attrs.set(ctx_.intern(kFrontend), frontend);
    else
      top.attrs.erase(kFrontend);
  }
};

} // namespace

bool xlaRoundTripImportPipeline(Module &module, const PassOptions &options,
                                DiagnosticEngine &diags) {
  const bool v3 = options.flag("enable-hlo-sharding-v3");
  if (v3 && !V3Strings(module, diags).run())
    return false;
  // enable-constant-import (default true): constants become sdy.constant.
  if (options.flag("enable-constant-import") &&
      !runNestedPass(module, "xla-sdy-import-constants", diags))
    return false;
  Importer importer(module, diags);
  importer.importMeshes();
  forEachFunc(module, [&](Operation &func) { importer.importFunc(func); });
  walk(module.op(), [&](Operation &op) {
    if (!op.is("func.func"))
      importer.importOp(op);
  });
  if (!importer.ok)
    return false;
  importCustomCalls(module);
  // With HloShardingV3 the manual computations name meshes that only exist
  // once lift-and-dedup-meshes below has lifted them.
  if (!runNestedPass(module, "xla-sdy-round-trip-shard-map-import", diags, {},
                     v3 ? VerifyAfter::No : VerifyAfter::Yes))
    return false;
  openConstraintsOnWhileFreeVariables(module);
  // import-only-uninlineable-func-calls=false: every call (also those XLA
  // marked inlineable) becomes an sdy.named_computation holding its callee.
  if (!options.flag("import-only-uninlineable-func-calls") &&
      !runNestedPass(module, "sdy-import-func-calls", diags))
    return false;
  // lift-and-dedup-meshes=true: inline meshes become symbols, and meshes
  // over the same devices one mesh.
  if (v3 || options.flag("lift-and-dedup-meshes")) {
    if (!runNestedPass(module, "sdy-lift-inlined-meshes", diags))
      return false;
    dedupMeshesOverSameDevices(module);
  }
  return runNestedPass(module, "sdy-remove-size-one-axes", diags);
}

} // namespace shardlab
