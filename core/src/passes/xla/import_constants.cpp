// -xla-sdy-import-constants: `stablehlo.constant` becomes `sdy.constant`
// (same value and attributes), which canonicalization neither folds nor
// hoists out of the regions it sits in.
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "xla_passes.h"

namespace shardlab {

bool xlaImportConstantsPass(Module &module, const PassOptions &,
                            DiagnosticEngine &) {
  if (!mayContain(module, {"stablehlo.constant"}))
    return markUnchanged(module);
  std::vector<Operation *> constants;
  walk(module.op(), [&](Operation &op) {
    if (op.is("stablehlo.constant"))
      constants.push_back(&op);
  });
  Context &ctx = module.ctx();
  for (Operation *op : constants) {
    auto replacement =
        makeOp(ctx, "sdy.constant", {}, {op->result(0)->type}, op->loc);
    for (const NamedAttr &entry : op->attrs.entries())
      replacement->attrs.set(entry.name, entry.value);
    Value *value = replacement->result(0);
    op->parentBlock()->insertBefore(op, std::move(replacement));
    replaceOp(*op, {value});
  }
  return true;
}

} // namespace shardlab
