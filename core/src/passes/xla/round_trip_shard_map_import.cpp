// -xla-sdy-round-trip-shard-map-import: the inverse of the round-trip
// shard-map export. The triple XLA keeps a manual computation in,
//   %l:2 = custom_call @xla.sdy.GlobalToLocalShape(%x, %y)
//            {mhlo.frontend_attributes = {xla.sdy.in_shardings = "...",
//                                         xla.sdy.manual_axes = "..."}}
//   %r = call @xla.sdy.manual_computation_body(%l#0, %l#1)
//   %g = custom_call @xla.sdy.LocalToGlobalShape(%r)
//            {mhlo.frontend_attributes = {xla.sdy.out_shardings = "...", ...}}
// becomes `%g = sdy.manual_computation(%x, %y) in_shardings=[...]
// out_shardings=[...] manual_axes={...} (...) { <body inlined> }`: operands
// are GlobalToLocalShape's, results LocalToGlobalShape's, position by
// position. The attributes may also sit on the call. Body funcs are
// removed; stray unused shape custom calls too.
#include "manual_computation_from_func.h"
#include "passes/call_graph.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "shardlab/text/text.h"
#include "tuple_flattening.h"
#include "xla_passes.h"

#include <set>

namespace shardlab {

namespace {

constexpr std::string_view kGlobalToLocal = "xla.sdy.GlobalToLocalShape";
constexpr std::string_view kLocalToGlobal = "xla.sdy.LocalToGlobalShape";

const Attr *frontendAttr(const Operation *op, std::string_view key) {
  const Attr *dict = op ? op->attrs.get("mhlo.frontend_attributes") : nullptr;
  return dict && dict->kind == AttrKind::Dict ? dict->get(key) : nullptr;
}

class Importer {
public:
  Importer(Module &module, DiagnosticEngine &diags)
      : module_(module), diags_(diags) {}

  /// The attribute `key` holds as text on the first of `ops` that has it;
  /// `fallback` when none does. Null after a diagnostic.
  const Attr *readAttr(std::initializer_list<const Operation *> ops,
                       std::string_view key, const Attr *fallback,
                       Location loc) {
    for (const Operation *op : ops) {
      const Attr *text = frontendAttr(op, key);
      if (!text)
        continue;
      if (text->kind != AttrKind::String)
        break;
      Result<const Attr *> attr =
          parseAttributeText(text->str(), module_.sharedContext());
      if (!attr) {
        diags_.error(loc, "cannot read " + std::string(key) + " \"" +
                              text->str() + "\": " + attr.error().message);
        return nullptr;
      }
      return *attr;
    }
    return fallback;
  }

  bool fail(Operation &call, const std::string &message) {
    diags_.error(call.loc, "'func.call' op " + message);
    diags_.error(call.loc, "failed to legalize operation 'func.call'");
    return false;
  }

  bool import(Operation &call, Operation &body) {
    Context &ctx = module_.ctx();
    const std::string callee = call.attrs.get("callee")->str();
    Operation *to_local = nullptr;
    for (size_t i = 0; i < call.numOperands() && !to_local; ++i) {
      Value *operand = call.operand(i);
      if (!operand->isBlockArgument() &&
          isCustomCall(operand->defining_op, kGlobalToLocal))
        to_local = operand->defining_op;
    }
    if (call.numOperands() && !to_local)
      return fail(call, "expected at least one operand of @" + callee +
                            " to be produced by a " +
                            std::string(kGlobalToLocal) + " CustomCallOp");
    Operation *to_global = nullptr;
    if (call.numResults()) {
      // Zero-sized results may be unused (a constant stands in for them).
      const OpOperand *first = nullptr;
      for (size_t i = 0; i < call.numResults() && !first; ++i)
        first = call.result(i)->firstUse();
      to_global = first ? first->owner : nullptr;
      if (!isCustomCall(to_global, kLocalToGlobal))
        return fail(call, "expected the first use of @" + callee +
                              " to be by a " + std::string(kLocalToGlobal) +
                              " CustomCallOp");
    }
    const Attr *empty_list = ctx.attrs.shardingPerValue({});
    const Attr *no_axes = ctx.attrs.make(
        Attr{AttrKind::ManualAxes, std::vector<std::string>{}, nullptr, {}});
    const Attr *in = readAttr({&call, to_local}, "xla.sdy.in_shardings",
                              empty_list, call.loc);
    const Attr *out = readAttr({&call, to_global}, "xla.sdy.out_shardings",
                               empty_list, call.loc);
    const Attr *axes = readAttr({&call, to_local, to_global},
                                "xla.sdy.manual_axes", no_axes, call.loc);
    if (!in || !out || !axes)
      return false;
    if (in->kind != AttrKind::ShardingPerValue ||
        out->kind != AttrKind::ShardingPerValue ||
        axes->kind != AttrKind::ManualAxes)
      return fail(call, "expected xla.sdy.in_shardings/out_shardings to be "
                        "#sdy.sharding_per_value and xla.sdy.manual_axes "
                        "#sdy<manual_axes{...}>");
    build(call, body, to_local, to_global, in, out, axes);
    return true;
  }

private:
  void build(Operation &call, Operation &body, Operation *to_local,
             Operation *to_global, const Attr *in, const Attr *out,
             const Attr *axes) {
    Context &ctx = module_.ctx();
    std::vector<Value *> operands;
    for (size_t i = 0; to_local && i < to_local->numOperands(); ++i)
      operands.push_back(to_local->operand(i));
    std::vector<Type> types;
    for (size_t i = 0; to_global && i < to_global->numResults(); ++i)
      types.push_back(to_global->result(i)->type);
    ManualComputationParts parts{operands, types, in, out, axes, {}};
    for (size_t i = 0; to_local && i < to_local->numResults(); ++i)
      parts.arg_types.push_back(to_local->result(i)->type);
    Operation *inserted = manualComputationFromFunc(ctx, call, body, parts);
    if (to_global) {
      std::vector<Value *> results;
      for (size_t i = 0; i < inserted->numResults(); ++i)
        results.push_back(inserted->result(i));
      replaceOp(*to_global, results);
    }
    bool call_used = false;
    for (size_t i = 0; i < call.numResults(); ++i)
      call_used = call_used || call.result(i)->firstUse();
    if (!call_used)
      eraseOp(call);
    if (to_local && usersOf(to_local->result(0)).empty() &&
        to_local->numResults() == 1)
      eraseOp(*to_local);
    else if (to_local) {
      bool used = false;
      for (size_t i = 0; i < to_local->numResults(); ++i)
        used = used || to_local->result(i)->firstUse();
      if (!used)
        eraseOp(*to_local);
    }
  }

  Module &module_;
  DiagnosticEngine &diags_;
};

// A GlobalToLocalShape on tuples (as XLA writes X64-split values) becomes
// one on the tuples' leaves, its reads rewired to the leaves.
void flattenTupleGlobalToLocal(Module &module) {
  std::vector<Operation *> calls;
  walk(module.op(), [&](Operation &op) {
    if (isCustomCall(&op, kGlobalToLocal) && op.numResults() == 1 &&
        op.result(0)->type->kind == TypeKind::Tuple)
      calls.push_back(&op);
  });
  for (Operation *call : calls)
    flattenTupleCustomCall(module.ctx(), *call);
}

std::vector<Operation *> bodyCalls(Module &module) {
  std::vector<Operation *> calls;
  walk(module.op(), [&](Operation &op) {
    const Attr *callee = op.is("func.call") ? op.attrs.get("callee") : nullptr;
    if (callee && isManualComputationBody(callee->str()))
      calls.push_back(&op);
  });
  return calls;
}

bool insideBody(const Operation &op) {
  for (const Operation *p = &op; p; p = p->parentOp())
    if (p->is("func.func") && isManualComputationBody(symbolName(*p)))
      return true;
  return false;
}

void eraseStrayShapeCalls(Module &module) {
  std::vector<Operation *> stray;
  walk(module.op(), [&](Operation &op) {
    if (!isCustomCall(&op, kGlobalToLocal) &&
        !isCustomCall(&op, kLocalToGlobal))
      return;
    for (size_t i = 0; i < op.numResults(); ++i)
      if (op.result(i)->firstUse())
        return;
    stray.push_back(&op);
  });
  for (Operation *op : stray)
    eraseOp(*op);
}

} // namespace

bool xlaRoundTripShardMapImportPass(Module &module, const PassOptions &,
                                    DiagnosticEngine &diags) {
  // A body may be called once only; bodies nested in bodies are reached
  // once their caller is inlined, so repeat until no call is left.
  flattenTupleGlobalToLocal(module);
  Importer importer(module, diags);
  bool ok = true;
  std::set<const Operation *> bodies;
  for (Operation *call : bodyCalls(module)) {
    Operation *body = calleeOf(module, *call);
    if (body && !bodies.insert(body).second)
      ok = importer.fail(*call, "expected a unique FuncOp per @" +
                                    call->attrs.get("callee")->str() + " call");
  }
  bodies.clear();
  for (bool progress = true; progress && ok;) {
    progress = false;
    for (Operation *call : bodyCalls(module)) {
      if (insideBody(*call))
        continue;
      Operation *body = calleeOf(module, *call);
      if (!body || !body->is("func.func") || body->region(0).empty())
        continue;
      bodies.insert(body);
      ok = importer.import(*call, *body) && ok;
      progress = true;
      break; // the walk's list is stale once a call is replaced
    }
  }
  if (!ok)
    return false;
  for (const Operation *body : bodies)
    module.body().erase(const_cast<Operation *>(body));
  module.invalidateSymbols();
  eraseStrayShapeCalls(module);
  return true;
}

} // namespace shardlab
