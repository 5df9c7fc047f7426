// -sdy-remove-all-gather-reduce-scatter-for-cmv1: leaves the all-gather
// feeding a dot and the reduce-scatter after one to the backend's
// collective matmul (CMV1), which overlaps them with the dot's compute.
//
//   %g = sdy.all_gather [{"x"}, {}] %w out_sharding=<@m, [{}, {}]>
//   %d = stablehlo.dot %a, %g        ->   %d = stablehlo.dot %a, %w
//
//   %d = stablehlo.dot %a, %b {sdy.sharding = <[{}, {}]>}
//   %r = sdy.reduce_scatter [{"x"}, {}] %d out_sharding=<@m, [{"x"}, {}]>
//                                    ->   %d = stablehlo.dot %a, %b
//                                             {sdy.sharding = <[{"x"}, {}]>}
// An all-gather goes only when the dot is its one use, a reduce-scatter
// only when it is the dot's one use and no axis is left unreduced.
#include "export_passes.h"
#include "passes/pass_utils.h"
#include "shardlab/ir/sharding_access.h"

namespace shardlab {
namespace {

bool isDot(const Operation *op) {
  return op && (op->is("stablehlo.dot") || op->is("stablehlo.dot_general"));
}

bool removeAllGatherBeforeDot(Operation &gather) {
  Value *result = gather.result(0);
  if (!result->hasOneUse() || !isDot(result->firstUse()->owner))
    return false;
  result->replaceAllUsesWith(gather.operand(0));
  eraseOp(gather);
  return true;
}

bool removeReduceScatterAfterDot(Operation &scatter, Context &ctx) {
  Value *input = scatter.operand(0);
  Operation *dot = input->defining_op;
  const TensorSharding &out = opSharding(scatter, "out_sharding");
  const TensorSharding *dot_sharding = getSharding(input);
  if (!isDot(dot) || !input->hasOneUse() || !out.unreduced.empty() ||
      (dot_sharding && !dot_sharding->unreduced.empty()))
    return false;
  setSharding(input, out, ctx);
  scatter.result(0)->replaceAllUsesWith(input);
  eraseOp(scatter);
  return true;
}

} // namespace

bool removeAllGatherReduceScatterForCmv1Pass(Module &module,
                                             const PassOptions &,
                                             DiagnosticEngine &) {
  bool changed = false;
  for (Operation *gather : opsNamed(module, "sdy.all_gather"))
    changed = removeAllGatherBeforeDot(*gather) || changed;
  for (Operation *scatter : opsNamed(module, "sdy.reduce_scatter"))
    changed = removeReduceScatterAfterDot(*scatter, module.ctx()) || changed;
  return changed || markUnchanged(module);
}

} // namespace shardlab
