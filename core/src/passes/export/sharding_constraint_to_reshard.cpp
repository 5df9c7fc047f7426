// -sdy-sharding-constraint-to-reshard: every sdy.sharding_constraint
// becomes an sdy.reshard with the same attributes.
#include "export_passes.h"
#include "passes/pass_utils.h"

namespace shardlab {

bool shardingConstraintToReshardPass(Module &module, const PassOptions &,
                                     DiagnosticEngine &) {
  std::vector<Operation *> constraints =
      opsNamed(module, "sdy.sharding_constraint");
  if (constraints.empty())
    return markUnchanged(module);
  for (Operation *op : constraints) {
    auto reshard = makeOp(module.ctx(), "sdy.reshard", {op->operand(0)},
                          {op->result(0)->type}, op->loc);
    reshard->attrs = op->attrs;
    Operation *created =
        op->parentBlock()->insertBefore(op, std::move(reshard));
    replaceOp(*op, {created->result(0)});
  }
  return true;
}

} // namespace shardlab
