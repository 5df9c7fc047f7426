// -xla-sdy-stablehlo-import-pipeline: a module JAX or XLA wrote with GSPMD
// shardings, in Shardy form.
//
//   1. -xla-sdy-import-shardings (the mesh and every sdy.sharding);
//   2. shard_map bodies: the pattern XLA writes for a manual region,
//        %s = custom_call @Sharding(%x)      {mhlo.sharding = <in sharding>}
//        %l = custom_call @SPMDFullToShardShape(%s) {mhlo.sharding = {manual}}
//        %r = call @body(%l, ...)
//        %m = custom_call @Sharding(%r)      {mhlo.sharding = {manual}}
//        %y = custom_call @SPMDShardToFullShape(%m) {<out sharding>}
//      becomes `sdy.manual_computation(%x) in_shardings=[<in>]
//      out_shardings=[<out>] manual_axes={...}` holding @body's ops;
//   3. the other `custom_call @Sharding`s become sdy.sharding_constraint
//      (dims listed in `backend_config = "unspecified_dims=[..]"` open);
//   4. custom calls on tuples flattened to several operands and results;
//   5. -xla-sdy-import-constants.
#include "manual_computation_from_func.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "shardlab/passes/pass_manager.h"
#include "tuple_flattening.h"
#include "xla_passes.h"

#include <algorithm>
#include <set>

namespace shardlab {

namespace {

Operation *definingCustomCall(Value *value, std::string_view target) {
  Operation *def =
      value && !value->isBlockArgument() ? value->defining_op : nullptr;
  return isCustomCall(def, target) ? def : nullptr;
}

Operation *onlyUser(Value *value, std::string_view target) {
  std::vector<Operation *> users = usersOf(value);
  return users.size() == 1 && isCustomCall(users[0], target) ? users[0]
                                                             : nullptr;
}

// The pieces of one shard_map call (step 2 of the header).
struct ManualPattern {
  Operation *call = nullptr;
  Operation *callee = nullptr;
  std::vector<Operation *> in_sharding, full_to_shard;  // per operand
  std::vector<Operation *> out_sharding, shard_to_full; // per result
};

std::optional<ManualPattern> matchManual(Module &module, Operation &call) {
  const Attr *callee = call.attrs.get("callee");
  ManualPattern p;
  p.call = &call;
  p.callee = callee ? module.lookupSymbol(callee->str()) : nullptr;
  if (!p.callee || !p.callee->is("func.func") || p.callee->region(0).empty())
    return std::nullopt;
  for (size_t i = 0; i < call.numOperands(); ++i) {
    Operation *local =
        definingCustomCall(call.operand(i), "SPMDFullToShardShape");
    Operation *global =
        local ? definingCustomCall(local->operand(0), "Sharding") : nullptr;
    if (!global || !firstResultSharding(*global))
      return std::nullopt;
    p.full_to_shard.push_back(local);
    p.in_sharding.push_back(global);
  }
  for (size_t i = 0; i < call.numResults(); ++i) {
    Operation *manual = onlyUser(call.result(i), "Sharding");
    Operation *full =
        manual ? onlyUser(manual->result(0), "SPMDShardToFullShape") : nullptr;
    if (!full || !firstResultSharding(*full))
      return std::nullopt;
    p.out_sharding.push_back(manual);
    p.shard_to_full.push_back(full);
  }
  if (p.full_to_shard.empty() && p.shard_to_full.empty())
    return std::nullopt;
  return p;
}

// The manual axes recorded by the import on the pattern's @Sharding and
// @SPMD* calls, in mesh order.
std::vector<std::string> manualAxes(Module &module, const ManualPattern &p) {
  std::set<std::string> axes;
  auto add = [&](const Operation *op) {
    const Attr *attr = op->attrs.get("xla.sdy.manual_axes");
    if (attr && attr->kind == AttrKind::ManualAxes)
      for (const std::string &axis :
           std::get<std::vector<std::string>>(attr->payload))
        axes.insert(axis);
  };
  for (const Operation *op : p.full_to_shard)
    add(op);
  for (const Operation *op : p.out_sharding)
    add(op);
  std::vector<std::string> ordered;
  if (const Mesh *mesh = lookupMesh(module, std::string_view("mesh")))
    for (const MeshAxis &axis : mesh->axes)
      if (axes.count(axis.name.str()))
        ordered.push_back(axis.name.str());
  return ordered;
}

void buildManualComputation(Module &module, const ManualPattern &p) {
  Context &ctx = module.ctx();
  std::vector<Value *> operands;
  std::vector<TensorSharding> in, out;
  std::vector<Type> types;
  for (Operation *global : p.in_sharding) {
    operands.push_back(global->operand(0));
    in.push_back(*firstResultSharding(*global));
  }
  for (Operation *full : p.shard_to_full) {
    types.push_back(full->result(0)->type);
    out.push_back(*firstResultSharding(*full));
  }
  ManualComputationParts parts;
  parts.operands = std::move(operands);
  parts.result_types = std::move(types);
  parts.in_shardings = ctx.attrs.shardingPerValue(std::move(in));
  parts.out_shardings = ctx.attrs.shardingPerValue(std::move(out));
  parts.manual_axes = ctx.attrs.make(
      Attr{AttrKind::ManualAxes, manualAxes(module, p), nullptr, {}});
  Operation *inserted =
      manualComputationFromFunc(ctx, *p.call, *p.callee, parts);
  for (size_t i = 0; i < p.shard_to_full.size(); ++i)
    replaceOp(*p.shard_to_full[i], {inserted->result(i)});
  for (Operation *op : p.out_sharding)
    eraseOp(*op);
  eraseOp(*p.call);
  for (size_t i = 0; i < p.full_to_shard.size(); ++i) {
    if (usersOf(p.full_to_shard[i]->result(0)).empty())
      eraseOp(*p.full_to_shard[i]);
    if (usersOf(p.in_sharding[i]->result(0)).empty())
      eraseOp(*p.in_sharding[i]);
  }
}

bool hasCalls(Module &module, const std::string &name) {
  bool found = false;
  walk(module.op(), [&](Operation &op) {
    const Attr *callee = op.is("func.call") ? op.attrs.get("callee") : nullptr;
    found = found || (callee && callee->str() == name);
  });
  return found;
}

void importManualComputations(Module &module) {
  std::vector<Operation *> calls;
  walk(module.op(), [&](Operation &op) {
    if (op.is("func.call"))
      calls.push_back(&op);
  });
  std::set<Operation *> callees;
  for (Operation *call : calls)
    if (std::optional<ManualPattern> p = matchManual(module, *call)) {
      callees.insert(p->callee);
      buildManualComputation(module, *p);
    }
  for (Operation *callee : callees)
    if (!hasCalls(module, callee->attrs.get("sym_name")->str()))
      module.body().erase(callee);
  module.invalidateSymbols();
}

// `unspecified_dims=[0, 2]` in a @Sharding call's backend_config.
std::vector<int64_t> unspecifiedDims(const Operation &op) {
  std::vector<int64_t> dims;
  const Attr *config = op.attrs.get("backend_config");
  if (!config || config->kind != AttrKind::String)
    return dims;
  const std::string &text = config->str();
  size_t at = text.find("unspecified_dims=[");
  if (at == std::string::npos)
    return dims;
  const char *p = text.c_str() + at + 18;
  while (*p && *p != ']') {
    char *end = nullptr;
    long value = std::strtol(p, &end, 10);
    if (end == p)
      break;
    dims.push_back(value);
    p = end;
    while (*p == ',' || *p == ' ')
      ++p;
  }
  return dims;
}

void shardingCallsToConstraints(Module &module) {
  std::vector<Operation *> calls;
  walk(module.op(), [&](Operation &op) {
    if (isCustomCall(&op, "Sharding") && op.numOperands() == 1 &&
        op.numResults() == 1 && op.result(0)->type->isRankedTensor() &&
        firstResultSharding(op))
      calls.push_back(&op);
  });
  Context &ctx = module.ctx();
  for (Operation *call : calls) {
    TensorSharding sharding = *firstResultSharding(*call);
    for (int64_t dim : unspecifiedDims(*call))
      if (dim >= 0 && static_cast<size_t>(dim) < sharding.dims.size())
        sharding.dims[static_cast<size_t>(dim)].closed = false;
    auto constraint = makeOp(ctx, "sdy.sharding_constraint", {call->operand(0)},
                             {call->result(0)->type}, call->loc);
    setOpSharding(*constraint, sharding, ctx);
    Value *value = constraint->result(0);
    call->parentBlock()->insertBefore(call, std::move(constraint));
    replaceOp(*call, {value});
  }
}

// `custom_call @foo(stablehlo.tuple %a, %b) -> tuple<...>` read back with
// get_tuple_element alone becomes `custom_call @foo(%a, %b) -> (ta, tb)`:
// Shardy shards values, not tuples.
void flattenTupleCustomCalls(Module &module) {
  std::vector<Operation *> calls;
  walk(module.op(), [&](Operation &op) {
    if (op.is("stablehlo.custom_call") && op.numResults() == 1 &&
        op.result(0)->type->kind == TypeKind::Tuple)
      calls.push_back(&op);
  });
  for (Operation *call : calls) {
    std::vector<Operation *> users = usersOf(call->result(0));
    bool only_get = !users.empty();
    for (Operation *user : users)
      only_get = only_get && user->is("stablehlo.get_tuple_element");
    if (only_get)
      flattenTupleCustomCall(module.ctx(), *call);
  }
}

void dropManualAxesMarks(Module &module) {
  walk(module.op(),
       [&](Operation &op) { op.attrs.erase("xla.sdy.manual_axes"); });
}

} // namespace

bool xlaStablehloImportPipeline(Module &module, const PassOptions &options,
                                DiagnosticEngine &diags) {
  if (!runNestedPass(module, "xla-sdy-import-shardings", diags,
                     {{"record-manual-axes", "true"}}))
    return false;
  importManualComputations(module);
  dropManualAxesMarks(module);
  flattenTupleCustomCalls(module);
  openConstraintsOnWhileFreeVariables(module);
  shardingCallsToConstraints(module);
  return runNestedPass(module, "xla-sdy-import-constants", diags);
}

} // namespace shardlab
