// -sdy-insert-func-call-reshards: where a call's operand or result sharding
// differs from the callee's, an sdy.reshard makes them agree.
#include "export_passes.h"
#include "passes/call_graph.h"
#include "passes/call_graph_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/format.h"

#include <map>

namespace shardlab {

namespace {

// TensorShardingAttr::isEquivalent with a possibly missing other sharding.
bool equivalentTo(const TensorSharding &sharding, const TensorSharding *other) {
  if (other)
    return isEquivalent(sharding, *other);
  return isFullyReplicated(sharding) && sharding.unreduced.empty();
}

TensorSharding fullyClosedLike(const TensorSharding &sharding) {
  return fullyClosedSharding(sharding.mesh, sharding.dims.size());
}

} // namespace

// `sdy.reshard %v <s>` or, as XLA writes it, `mhlo.copy %v {sdy.sharding =
// #sdy.sharding_per_value<[s]>}` (with the manual axes around it, if any).
Operation *insertReshardOp(Context &ctx, std::string_view op_name, Value *value,
                           const TensorSharding &sharding, Block &block,
                           Operation *before, const Attr *manual_axes) {
  auto reshard = makeOp(ctx, op_name, {value}, {value->type}, value->loc);
  if (op_name == "sdy.reshard") {
    setOpSharding(*reshard, sharding, ctx);
  } else {
    setShardingList(*reshard, "sdy.sharding", {sharding}, ctx);
    if (manual_axes)
      reshard->attrs.set(ctx.intern("xla.sdy.manual_axes"), manual_axes);
  }
  return block.insertBefore(before, std::move(reshard));
}

void insertReshardsOnCallResults(Module &module, Operation &call,
                                 const std::vector<TensorSharding> &expected,
                                 std::string_view op_name) {
  Context &ctx = module.ctx();
  const Attr *manual_axes = call.attrs.get("xla.sdy.manual_axes");
  for (size_t i = 0; i < call.numResults() && i < expected.size(); ++i) {
    Value *result = call.result(i);
    const TensorSharding *actual = getSharding(result);
    if (equivalentTo(expected[i], actual))
      continue;
    std::vector<OpOperand *> uses;
    for (OpOperand *use = result->firstUse(); use; use = use->next_use)
      uses.push_back(use);
    Operation *inserted = insertReshardOp(
        ctx, op_name, result, actual ? *actual : fullyClosedLike(expected[i]),
        *call.parentBlock(), call.nextInBlock(), manual_axes);
    for (OpOperand *use : uses)
      use->set(inserted->result(0));
  }
  setShardingList(call, "sdy.sharding", expected, ctx);
}

void insertReshardsOnCallOperands(Module &module, Operation &call,
                                  const std::vector<TensorSharding> &expected,
                                  std::string_view op_name) {
  Context &ctx = module.ctx();
  const Attr *manual_axes = call.attrs.get("xla.sdy.manual_axes");
  for (size_t i = 0; i < call.numOperands() && i < expected.size(); ++i) {
    Value *operand = call.operand(i);
    const TensorSharding *actual = getSharding(operand);
    // A manual computation's argument is compared as seen inside it.
    Operation *owner = operand->isBlockArgument() && operand->owner_block &&
                               operand->owner_block->parent
                           ? operand->owner_block->parent->parent
                           : nullptr;
    std::optional<TensorSharding> local;
    if (actual && owner && owner->is("sdy.manual_computation")) {
      const Attr *axes = owner->attrs.get("manual_axes");
      if (axes && axes->kind == AttrKind::ManualAxes)
        local = withoutAxes(*actual,
                            std::get<std::vector<std::string>>(axes->payload));
    }
    if (equivalentTo(expected[i], local ? &*local : actual))
      continue;
    Operation *copy = insertReshardOp(ctx, op_name, operand, expected[i],
                                      *call.parentBlock(), &call, manual_axes);
    call.setOperand(i, copy->result(0));
  }
}

std::optional<std::vector<TensorSharding>>
expectedCallResultShardings(Module &module, Operation &call, Operation &func) {
  std::optional<std::vector<TensorSharding>> expected =
      funcResultShardings(module, func);
  if (expected)
    return expected;
  std::optional<std::vector<TensorSharding>> actual = opShardings(call);
  if (!actual)
    return std::nullopt;
  expected.emplace();
  for (const TensorSharding &sharding : *actual)
    expected->push_back(fullyClosedLike(sharding));
  return expected;
}

bool insertFuncCallReshardsPass(Module &module, const PassOptions &,
                                DiagnosticEngine &) {
  if (!mayContain(module, {"func.call"}))
    return markUnchanged(module);
  for (Operation *call : callsUnder(module.op()))
    if (Operation *func = calleeOf(module, *call))
      if (auto expected = expectedCallResultShardings(module, *call, *func))
        insertReshardsOnCallResults(module, *call, *expected, "sdy.reshard");
  return true;
}

} // namespace shardlab
