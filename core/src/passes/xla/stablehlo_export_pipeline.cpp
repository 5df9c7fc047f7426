// -xla-sdy-stablehlo-export-pipeline: a Shardy module back in GSPMD form,
// for XLA's SPMD partitioner (the inverse of the stablehlo import
// pipeline; the string form is in shardlab/sharding/hlo_sharding.h).
//
//   - every sdy.sharding (func arguments and results, ops, one string per
//     result or a tuple `{a, b}`) becomes an `mhlo.sharding` string; inside
//     a manual computation the manual axes form a `last_tile_dims={manual}`
//     group;
//   - named computations become calls (-xla-sdy-export-named-computations);
//   - sdy.constant becomes stablehlo.constant;
//   - sdy.reshard and the explicit collectives that move data (all_gather,
//     all_slice, all_to_all, collective_permute) become `mhlo.copy` with the
//     target sharding; all_reduce and propagation_barrier are dropped;
//     sharding_constraint becomes `custom_call @Sharding`;
//   - sdy.manual_computation becomes copy + `@SPMDFullToShardShape`, the
//     body inlined, copy + `@SPMDShardToFullShape`;
//   - sdy.mesh ops and sharding groups go away.
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "sharding/hlo_sharding.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "xla_passes.h"

#include <algorithm>
#include <optional>
#include <set>

namespace shardlab {

namespace {

class Exporter {
public:
  Exporter(Module &module, const PassOptions &options, DiagnosticEngine &diags)
      : module_(module), ctx_(module.ctx()), diags_(diags),
        v3_(options.flag("enable-hlo-sharding-v3")),
        simplify_(options.flag("simplify-replicated-shardings")) {}

  /// The string of `sharding` with `manual` axes, or nothing after a
  /// diagnostic (unknown mesh).
  std::optional<std::string> text(const TensorSharding &sharding,
                                  const std::vector<std::string> &manual,
                                  Location loc) {
    const Mesh *mesh = lookupMesh(module_, sharding.mesh);
    if (!mesh) {
      diags_.error(loc, "unknown mesh @" + sharding.mesh.symbol);
      return std::nullopt;
    }
    return v3_ ? hloShardingV3Text(sharding, *mesh, simplify_)
               : hloShardingText(sharding, *mesh, manual);
  }

  /// sdy.parameters_shardings / sdy.output_shardings of the module become
  /// XLA's mhlo.spmd_parameters_shardings / mhlo.spmd_output_sharding.
  bool exportModuleShardings() {
    Operation &top = module_.op();
    for (const char *name :
         {"sdy.parameters_shardings", "sdy.output_shardings"}) {
      const Attr *attr = top.attrs.get(name);
      if (!attr || attr->kind != AttrKind::ShardingPerValue)
        continue;
      std::vector<const Attr *> texts;
      for (const TensorSharding &sharding : attr->shardings()) {
        std::optional<std::string> one = text(sharding, {}, top.loc);
        if (!one)
          return false;
        texts.push_back(string(*one));
      }
      top.attrs.erase(name);
      const bool params = std::string_view(name) == "sdy.parameters_shardings";
      top.attrs.set(ctx_.intern(params ? "mhlo.spmd_parameters_shardings"
                                       : "mhlo.spmd_output_sharding"),
                    params || texts.size() != 1 ? ctx_.attrs.array(texts)
                                                : texts[0]);
    }
    return true;
  }

  const Attr *string(const std::string &text) {
    return ctx_.attrs.string(text);
  }

  bool exportFuncShardings(Operation &func,
                           const std::vector<std::string> &manual = {}) {
    return exportFuncEntries(func, true, manual) &&
           exportFuncEntries(func, false, manual);
  }

  /// A func called from inside a manual computation (a named computation
  /// there), exported once with the manual axes around its call.
  bool exportCalledFunc(Operation &func,
                        const std::vector<std::string> &manual) {
    if (!done.insert(&func).second)
      return true;
    bool ok = exportFuncShardings(func, manual);
    if (func.numRegions() && !func.region(0).empty())
      ok = exportBlock(func.region(0).front(), manual) && ok;
    return ok;
  }

  std::set<const Operation *> done; ///< funcs already exported

  /// Rewrites the ops of `block` (recursively), `manual` the axes made
  /// manual around it.
  bool exportBlock(Block &block, const std::vector<std::string> &manual) {
    bool ok = true;
    for (Operation *op = block.front(); op;) {
      Operation *next = op->nextInBlock();
      ok = exportOp(*op, manual) && ok;
      op = next;
    }
    return ok;
  }

  /// The mesh of the innermost manual computation, for the ops of its body
  /// that carry no sharding (they are replicated over the free axes).
  std::vector<MeshRef> manual_mesh;

private:
  // All argument (or result) shardings are read before any is removed.
  bool exportFuncEntries(Operation &func, bool arg,
                         const std::vector<std::string> &manual) {
    const size_t count = arg ? funcNumInputs(func) : funcNumResults(func);
    std::vector<std::optional<std::string>> texts(count);
    for (size_t i = 0; i < count; ++i) {
      const Attr *attr = arg ? getFuncArgAttr(func, i, "sdy.sharding")
                             : getFuncResultAttr(func, i, "sdy.sharding");
      if (!attr || attr->kind != AttrKind::Sharding) {
        // Inside a manual computation everything has a sharding.
        if (manual.empty() || manual_mesh.empty())
          continue;
        Type fn = std::get<Type>(func.attrs.get("function_type")->payload);
        Type type = arg ? fn->members[i] : fn->results[i];
        TensorSharding replicated;
        replicated.mesh = manual_mesh.back();
        replicated.dims.resize(type->isRankedTensor() ? size_t(type->rank())
                                                      : 0);
        texts[i] = text(replicated, manual, func.loc);
      } else {
        texts[i] = text(attr->sharding(), manual, func.loc);
      }
      if (!texts[i])
        return false;
    }
    const char *list = arg ? "arg_attrs" : "res_attrs";
    setOrEraseAttr(
        func, list,
        withoutDictEntries(func.attrs.get(list), "sdy.sharding", ctx_), ctx_);
    for (size_t i = 0; i < count; ++i) {
      if (!texts[i])
        continue;
      if (arg)
        setFuncArgAttr(func, i, "mhlo.sharding", string(*texts[i]), ctx_);
      else
        setFuncResultAttr(func, i, "mhlo.sharding", string(*texts[i]), ctx_);
    }
    return true;
  }

  // Ops without a sharding get one only where XLA needs it: inside a
  // manual computation (replicated over the free axes) and on while loops.
  std::optional<std::string>
  defaultSharding(Operation &op, const std::vector<std::string> &manual) {
    if (!manual.empty() && !manual_mesh.empty() && op.numResults() &&
        op.dialect() != "sdy") {
      // One string when every axis is manual (`{manual}`), else one
      // replicated-over-the-free-axes string per result.
      std::vector<std::string> texts;
      for (size_t i = 0; i < op.numResults(); ++i) {
        TensorSharding replicated;
        replicated.mesh = manual_mesh.back();
        Type type = op.result(i)->type;
        replicated.dims.resize(type->isRankedTensor() ? size_t(type->rank())
                                                      : 0);
        std::optional<std::string> one = text(replicated, manual, op.loc);
        if (!one)
          return std::nullopt;
        texts.push_back(*one);
      }
      if (texts.size() == 1 || texts[0] == "{manual}")
        return texts[0];
      std::string tuple = "{";
      for (size_t i = 0; i < texts.size(); ++i)
        tuple += (i ? ", " : "") + texts[i];
      return tuple + "}";
    }
    if (op.is("stablehlo.while"))
      return std::string("{replicated}");
    return std::nullopt;
  }

  bool exportOpSharding(Operation &op, const std::vector<std::string> &manual) {
    const Attr *attr = op.attrs.get("sdy.sharding");
    std::string hlo;
    if (attr && attr->kind == AttrKind::ShardingPerValue) {
      std::vector<std::string> texts;
      for (const TensorSharding &sharding : attr->shardings()) {
        std::optional<std::string> one = text(sharding, manual, op.loc);
        if (!one)
          return false;
        texts.push_back(*one);
      }
      op.attrs.erase("sdy.sharding");
      hlo = texts.size() == 1 ? texts[0] : "{";
      if (texts.size() != 1) {
        for (size_t i = 0; i < texts.size(); ++i)
          hlo += (i ? ", " : "") + texts[i];
        hlo += "}";
      }
    } else if (std::optional<std::string> fallback =
                   defaultSharding(op, manual)) {
      hlo = *fallback;
    } else {
      return true;
    }
    // XLA's erf and topk custom calls read their sharding from their own
    // attribute dictionary.
    const Attr *target = op.attrs.get("call_target_name");
    const Attr *inner = op.attrs.get("mhlo.attributes");
    if (target &&
        (target->str() == "mhlo.erf" || target->str() == "mhlo.topk") &&
        inner && inner->kind == AttrKind::Dict) {
      AttrDict dict;
      for (const NamedAttr &entry : inner->entries())
        dict.set(entry.name, entry.value);
      dict.set(ctx_.intern("mhlo.sharding"), string(hlo));
      op.attrs.set(
          ctx_.intern("mhlo.attributes"),
          ctx_.attrs.make(Attr{AttrKind::Dict, dict.toVector(), nullptr, {}}));
      return true;
    }
    op.attrs.set(ctx_.intern("mhlo.sharding"), string(hlo));
    return true;
  }

  /// A new op `name` before `at` with one operand and `at`'s result type,
  /// carrying `sharding`.
  Operation *insertWithSharding(Operation &at, std::string_view name,
                                Value *operand, Type type,
                                const std::string &sharding,
                                std::string_view target = {}) {
    auto op = makeOp(ctx_, target.empty() ? name : "stablehlo.custom_call",
                     {operand}, {type}, at.loc);
    if (!target.empty())
      op->attrs.set(ctx_.intern("call_target_name"),
                    ctx_.attrs.string(std::string(target)));
    op->attrs.set(ctx_.intern("mhlo.sharding"), string(sharding));
    return at.parentBlock()->insertBefore(&at, std::move(op));
  }

  bool exportOp(Operation &op, const std::vector<std::string> &manual) {
    if (op.is("sdy.manual_computation"))
      return exportManual(op, manual);
    if (isPythonCallback(op) && op.numResults() == 1 &&
        op.result(0)->type->kind != TypeKind::Tuple)
      return exportCallback(op, manual);
    if (op.is("func.call") && !manual.empty()) {
      op.attrs.erase("xla.sdy.manual_axes");
      const Attr *callee = op.attrs.get("callee");
      Operation *func = callee ? module_.lookupSymbol(callee->str()) : nullptr;
      if (func && func->is("func.func") && !exportCalledFunc(*func, manual))
        return false;
    }
    if (op.is("sdy.sharding_group")) {
      eraseOp(op);
      return true;
    }
    if (op.is("sdy.all_reduce") || op.is("sdy.propagation_barrier")) {
      replaceOp(op, {op.operand(0)});
      return true;
    }
    const bool moves = op.is("sdy.reshard") || op.is("sdy.all_gather") ||
                       op.is("sdy.all_slice") || op.is("sdy.all_to_all") ||
                       op.is("sdy.collective_permute");
    if (moves || op.is("sdy.sharding_constraint")) {
      const TensorSharding &target = opSharding(
          op, op.attrs.get("out_sharding") ? "out_sharding" : "sharding");
      std::optional<std::string> hlo = text(target, manual, op.loc);
      if (!hlo)
        return false;
      Operation *copy = insertWithSharding(
          op, "mhlo.copy", op.operand(0), op.result(0)->type, *hlo,
          moves ? std::string_view{} : std::string_view{"Sharding"});
      replaceOp(op, {copy->result(0)});
      return true;
    }
    bool ok = exportOpSharding(op, manual);
    for (size_t r = 0; r < op.numRegions(); ++r)
      for (auto &block : op.region(r).blocks)
        ok = exportBlock(*block, manual) && ok;
    if (op.is("sdy.constant")) {
      auto constant =
          makeOp(ctx_, "stablehlo.constant", {}, {op.result(0)->type}, op.loc);
      for (const NamedAttr &entry : op.attrs.entries())
        constant->attrs.set(entry.name, entry.value);
      Operation *inserted =
          op.parentBlock()->insertBefore(&op, std::move(constant));
      replaceOp(op, {inserted->result(0)});
    }
    return ok;
  }

  static bool isPythonCallback(const Operation &op) {
    const Attr *target = op.is("stablehlo.custom_call")
                             ? op.attrs.get("call_target_name")
                             : nullptr;
    if (!target)
      return false;
    const std::string &name = target->str();
    return name == "xla_python_cpu_callback" ||
           name == "xla_python_gpu_callback" ||
           name == "xla_ffi_python_cpu_callback" ||
           name == "xla_ffi_python_gpu_callback";
  }

  // XLA wants a host callback's single result as a one-element tuple: the
  // callback returns tuple<T> and a get_tuple_element carries the sharding.
  bool exportCallback(Operation &op, const std::vector<std::string> &manual) {
    Type type = op.result(0)->type;
    std::vector<Value *> operands;
    for (size_t i = 0; i < op.numOperands(); ++i)
      operands.push_back(op.operand(i));
    auto callback = makeOp(ctx_, "stablehlo.custom_call", operands,
                           {ctx_.types.tuple({type})}, op.loc);
    for (const NamedAttr &entry : op.attrs.entries())
      if (entry.name != "sdy.sharding")
        callback->attrs.set(entry.name, entry.value);
    Operation *call = op.parentBlock()->insertBefore(&op, std::move(callback));
    auto element = makeOp(ctx_, "stablehlo.get_tuple_element",
                          {call->result(0)}, {type}, op.loc);
    element->attrs.set(ctx_.intern("index"),
                       ctx_.attrs.integer(0, ctx_.types.element("i32")));
    if (const Attr *sharding = op.attrs.get("sdy.sharding"))
      element->attrs.set(ctx_.intern("sdy.sharding"), sharding);
    Operation *get = op.parentBlock()->insertBefore(&op, std::move(element));
    if (!exportOpSharding(*get, manual))
      return false;
    if (const Attr *hlo = get->attrs.get("mhlo.sharding"))
      call->attrs.set(ctx_.intern("mhlo.sharding"),
                      string("{" + hlo->str() + "}"));
    replaceOp(op, {get->result(0)});
    return true;
  }

  // copy + SPMDFullToShardShape per operand, the body inlined, copy +
  // SPMDShardToFullShape per result.
  bool exportManual(Operation &op, const std::vector<std::string> &outer) {
    std::vector<std::string> manual = outer;
    const Attr *axes = op.attrs.get("manual_axes");
    if (axes && axes->kind == AttrKind::ManualAxes)
      for (const std::string &axis :
           std::get<std::vector<std::string>>(axes->payload))
        manual.push_back(axis);
    std::vector<TensorSharding> in = shardingList(op, "in_shardings");
    std::vector<TensorSharding> out = shardingList(op, "out_shardings");
    Block &body = op.region(0).front();
    // The body's own shardings first, with the manual axes around them.
    if (!in.empty() || !out.empty())
      manual_mesh.push_back(!in.empty() ? in[0].mesh : out[0].mesh);
    bool ok = exportBlock(body, manual);
    if (!in.empty() || !out.empty())
      manual_mesh.pop_back();
    std::vector<Value *> locals;
    for (size_t i = 0; i < op.numOperands(); ++i) {
      if (i >= in.size())
        return false;
      TensorSharding local = withoutAxes(in[i], manual);
      std::optional<std::string> global = text(in[i], outer, op.loc);
      std::optional<std::string> shard = text(local, manual, op.loc);
      if (!global || !shard)
        return false;
      Operation *copy = insertWithSharding(op, "mhlo.copy", op.operand(i),
                                           op.operand(i)->type, *global);
      Operation *to_shard =
          insertWithSharding(op, "", copy->result(0), body.argument(i)->type,
                             *shard, "SPMDFullToShardShape");
      locals.push_back(to_shard->result(0));
    }
    ValueMap map;
    for (size_t i = 0; i < body.numArguments() && i < locals.size(); ++i)
      map[body.argument(i)] = locals[i];
    cloneBlockBefore(body, *op.parentBlock(), &op, map,
                     /*skip_terminator=*/true);
    Operation *ret = body.back();
    std::vector<Value *> yielded;
    for (size_t i = 0; ret && i < ret->numOperands(); ++i) {
      auto it = map.find(ret->operand(i));
      yielded.push_back(it == map.end() ? ret->operand(i) : it->second);
    }
    std::vector<Value *> results;
    for (size_t i = 0; i < yielded.size() && i < op.numResults(); ++i) {
      if (i >= out.size())
        return false;
      TensorSharding local = withoutAxes(out[i], manual);
      std::optional<std::string> shard = text(local, manual, op.loc);
      std::optional<std::string> global = text(out[i], outer, op.loc);
      if (!shard || !global)
        return false;
      Operation *copy = insertWithSharding(op, "mhlo.copy", yielded[i],
                                           yielded[i]->type, *shard);
      Operation *to_full =
          insertWithSharding(op, "", copy->result(0), op.result(i)->type,
                             *global, "SPMDShardToFullShape");
      results.push_back(to_full->result(0));
    }
    replaceOp(op, results);
    return ok;
  }

  Module &module_;
  Context &ctx_;
  DiagnosticEngine &diags_;
  bool v3_, simplify_;
};

} // namespace

bool xlaStablehloExportPipeline(Module &module, const PassOptions &options,
                                DiagnosticEngine &diags) {
  if (!runNestedPass(
          module, "xla-sdy-export-named-computations", diags,
          {{"dedup-functions-fully",
            options.flag("dedup-functions-fully") ? "true" : "false"}}))
    return false;
  Exporter exporter(module, options, diags);
  bool ok = exporter.exportModuleShardings();
  forEachFunc(module, [&](Operation &func) {
    if (exporter.done.count(&func))
      return;
    exporter.done.insert(&func);
    ok = exporter.exportFuncShardings(func) && ok;
    if (func.numRegions() && !func.region(0).empty())
      ok = exporter.exportBlock(func.region(0).front(), {}) && ok;
  });
  for (Operation *op = module.body().front(); op;) {
    Operation *next = op->nextInBlock();
    if (op->is("sdy.mesh"))
      module.body().erase(op);
    else if (op->is("func.func"))
      op->attrs.erase("sdy.original_func_name");
    op = next;
  }
  module.invalidateSymbols();
  return ok;
}

} // namespace shardlab
