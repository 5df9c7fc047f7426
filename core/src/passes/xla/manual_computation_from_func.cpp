// Manual computations rebuilt from a function (manual_computation_from_func.h).
#include "manual_computation_from_func.h"
#include "xla_passes.h"

#include "passes/pass_utils.h"

namespace shardlab {

Operation *manualComputationFromFunc(Context &ctx, Operation &at,
                                     Operation &func,
                                     const ManualComputationParts &parts) {
  auto mc = makeOp(ctx, "sdy.manual_computation", parts.operands,
                   parts.result_types, at.loc);
  mc->attrs.set(ctx.intern("in_shardings"), parts.in_shardings);
  mc->attrs.set(ctx.intern("out_shardings"), parts.out_shardings);
  mc->attrs.set(ctx.intern("manual_axes"), parts.manual_axes);
  Block &body = mc->addRegion().addBlock();
  Block &callee = func.region(0).front();
  ValueMap map;
  for (size_t i = 0; i < callee.numArguments(); ++i) {
    Value *arg = callee.argument(i);
    Type type = i < parts.arg_types.size() && parts.arg_types[i]
                    ? parts.arg_types[i]
                    : arg->type;
    map[arg] = body.addArgument(type, arg->loc);
  }
  cloneBlockBefore(callee, body, nullptr, map, /*skip_terminator=*/true);
  Operation *ret = callee.back();
  std::vector<Value *> yielded;
  for (size_t i = 0; ret && i < ret->numOperands(); ++i) {
    auto it = map.find(ret->operand(i));
    yielded.push_back(it == map.end() ? ret->operand(i) : it->second);
  }
  body.push_back(makeOp(ctx, "sdy.return", yielded, {}, at.loc));
  return at.parentBlock()->insertBefore(&at, std::move(mc));
}

} // namespace shardlab
