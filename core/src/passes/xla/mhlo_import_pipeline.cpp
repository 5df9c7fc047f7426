// -xla-sdy-mhlo-import-pipeline: the older form of the stablehlo import
// pipeline, whose input is in MHLO (`mhlo.add`, `mhlo.while`,
// `mhlo.custom_call @Sharding`, ...): every MHLO op that StableHLO has
// becomes that StableHLO op (same operands, results, attributes and
// regions), then -xla-sdy-stablehlo-import-pipeline runs. MHLO ops without
// a StableHLO twin (mhlo.copy) stay as they are.
#include "ir/op_registry.h"
#include "passes/call_graph.h"
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "shardlab/passes/pass_manager.h"
#include "xla_passes.h"

namespace shardlab {

namespace {

void toStablehlo(Context &ctx, Operation &op) {
  const std::string name = "stablehlo." + std::string(op.name.substr(5));
  std::vector<Value *> operands;
  for (size_t i = 0; i < op.numOperands(); ++i)
    operands.push_back(op.operand(i));
  std::vector<Type> types;
  for (size_t i = 0; i < op.numResults(); ++i)
    types.push_back(op.result(i)->type);
  auto twin = makeOp(ctx, name, operands, types, op.loc);
  for (const NamedAttr &entry : op.attrs.entries())
    twin->attrs.set(entry.name, entry.value);
  for (size_t r = 0; r < op.numRegions(); ++r)
    moveRegionBlocks(op.region(r), twin->addRegion());
  Operation *inserted = op.parentBlock()->insertBefore(&op, std::move(twin));
  std::vector<Value *> results;
  for (size_t i = 0; i < inserted->numResults(); ++i)
    results.push_back(inserted->result(i));
  replaceOp(op, results);
}

} // namespace

bool convertMhloToStablehlo(Module &module) {
  std::vector<Operation *> mhlo;
  walkPostOrder(module.op(), [&](Operation &op) {
    if (op.name.substr(0, 5) == "mhlo." &&
        lookupOp("stablehlo." + std::string(op.name.substr(5))))
      mhlo.push_back(&op);
  });
  for (Operation *op : mhlo)
    toStablehlo(module.ctx(), *op);
  return !mhlo.empty();
}

bool xlaMhloImportPipeline(Module &module, const PassOptions &options,
                           DiagnosticEngine &diags) {
  convertMhloToStablehlo(module);
  return runNestedPass(module, "xla-sdy-stablehlo-import-pipeline", diags);
}

} // namespace shardlab
