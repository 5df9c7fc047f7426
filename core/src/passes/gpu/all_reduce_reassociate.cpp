// shardlab-all-reduce-reassociate: the sum of two all-reduced values is the
// all-reduce of their sum, as XLA's GPU compiler rewrites it
// (AllReduceReassociate, among its collective optimizations): one
// collective instead of two, and when its reader keeps one device's part,
// a reduce-scatter (shardlab-reduce-scatter-creator, which runs after).
//
// The rule, on the per-device program:
//   %a2 = all_reduce(%a) over groups G, summing
//   %b2 = all_reduce(%b) over the same groups G, summing
//   %s  = add %a2, %b2       (%a2 and %b2 read by nothing else)
// is `%s = all_reduce(add %a, %b)` over G. Both must use global device ids
// or neither, carry a channel or neither, and sum (a reducer that adds its
// two arguments). A chain folds from its first add on:
// (ar a + ar b) + ar c is ar (a + b + c).
//
// Worked example (Megatron's tensor parallelism with sequence parallelism,
// the backward of the MLP's two column-parallel GEMMs): each GEMM's input
// gradient is a partial sum over "tp", Shardy all-reduces each, and the
// block adds them and keeps its sequence part:
//   %g = all_reduce(%dg) [[0, 1]] ; %u = all_reduce(%du) [[0, 1]]
//   %s = add %g, %u ; %p = dynamic_slice %s at T[partition_id]
// becomes all_reduce(add %dg, %du), then one reduce_scatter: the one
// collective Megatron runs there.
#include "passes/gpu/gpu_passes.h"

#include "ir/op_properties.h"
#include "passes/call_graph.h"
#include "passes/export/local_builder.h"
#include "passes/pass_utils.h"

namespace shardlab {
namespace {

/// Whether `region` is a reducer that returns the sum of its two arguments.
bool sums(Region &region) {
  if (region.blocks.size() != 1)
    return false;
  Block &block = *region.blocks.front();
  if (block.numArguments() != 2 || block.size() != 2)
    return false;
  const Operation &add = *block.front();
  const Operation &ret = *block.back();
  const bool adds_arguments = add.is("stablehlo.add") &&
                              add.numOperands() == 2 &&
                              ((add.operand(0) == block.argument(0) &&
                                add.operand(1) == block.argument(1)) ||
                               (add.operand(0) == block.argument(1) &&
                                add.operand(1) == block.argument(0)));
  return adds_arguments && ret.numOperands() == 1 &&
         ret.operand(0) == add.result(0);
}

/// The all_reduce defining `value`, when `reader` is its only reader and it
/// sums one operand.
Operation *summingAllReduce(Value *value, const Operation &reader) {
  Operation *reduce = value->defining_op;
  if (!reduce || !reduce->is("stablehlo.all_reduce") ||
      reduce->numOperands() != 1 || reduce->numResults() != 1 ||
      reduce->numRegions() != 1 || !value->hasOneUse() ||
      value->firstUse()->owner != &reader || !sums(reduce->region(0)))
    return nullptr;
  return reduce;
}

/// Whether `a` and `b` run over the same groups with the same options.
bool sameCollective(const Operation &a, const Operation &b) {
  const Attr *ga = a.attrs.get("replica_groups");
  const Attr *gb = b.attrs.get("replica_groups");
  if (!ga || !gb)
    return false;
  const bool global = a.attrs.get("use_global_device_ids") != nullptr;
  if (global != (b.attrs.get("use_global_device_ids") != nullptr) ||
      (a.attrs.get("channel_handle") != nullptr) !=
          (b.attrs.get("channel_handle") != nullptr))
    return false;
  return readReplicaGroups(ga, 0) == readReplicaGroups(gb, 0);
}

/// Rewrites `add` of two matching all-reduces into an all-reduce of the
/// sum; false when the rule does not hold.
bool reassociate(Context &ctx, Operation &add) {
  if (!add.is("stablehlo.add") || add.numOperands() != 2)
    return false;
  Operation *first = summingAllReduce(add.operand(0), add);
  Operation *second = summingAllReduce(add.operand(1), add);
  if (!first || !second || first == second ||
      !sameCollective(*first, *second) ||
      first->operand(0)->type != add.result(0)->type ||
      second->operand(0)->type != add.result(0)->type)
    return false;
  LocalBuilder b(ctx, add);
  Operation *sum =
      b.create("stablehlo.add", {first->operand(0), second->operand(0)},
               {add.result(0)->type});
  std::vector<std::pair<std::string_view, const Attr *>> attrs;
  for (const NamedAttr &entry : first->attrs.entries())
    attrs.emplace_back(entry.name, entry.value);
  Operation *reduce = b.create("stablehlo.all_reduce", {sum->result(0)},
                               {add.result(0)->type}, attrs);
  // The first all-reduce's reducer moves over as it is.
  moveRegionBlocks(first->region(0), reduce->addRegion());
  add.result(0)->replaceAllUsesWith(reduce->result(0));
  eraseOp(add);
  eraseOp(*first);
  eraseOp(*second);
  return true;
}

} // namespace

bool allReduceReassociatePass(Module &module, const PassOptions &,
                              DiagnosticEngine &) {
  forEachFunc(module, [&](Operation &func) {
    // In program order, so that a chain's inner add is folded before the
    // add that reads it.
    // Not the adds of reducers: they go when their collective does.
    std::vector<Operation *> adds;
    walk(func, [&](Operation &op) {
      const Operation *parent = op.parentOp();
      if (op.is("stablehlo.add") && op.numOperands() == 2 &&
          !(parent && isCollectiveOp(*parent)))
        adds.push_back(&op);
    });
    for (Operation *add : adds)
      reassociate(module.ctx(), *add);
  });
  return true;
}

} // namespace shardlab
