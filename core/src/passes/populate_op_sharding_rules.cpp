#include "shardlab/passes/populate_op_sharding_rules.h"

#include "shardlab/rules/registry.h"

namespace shardlab {

namespace {

// Visits nested ops before their parent, as MLIR's default walk does, so
// that the first unknown op warned about is the one Shardy warns about.
template <typename Fn> void walkPostOrder(Operation &op, Fn &fn) {
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (auto &block : op.region(r).blocks)
      for (Operation *nested = block->front(); nested;) {
        Operation *next = nested->nextInBlock();
        walkPostOrder(*nested, fn);
        nested = next;
      }
  fn(op);
}

bool optionIsTrue(const PassOptions &options, const std::string &key) {
  auto it = options.find(key);
  return it != options.end() && (it->second == "true" || it->second == "1");
}

} // namespace

bool populateOpShardingRules(Module &module, const PassOptions &options,
                             DiagnosticEngine &diags) {
  const bool conservative = optionIsTrue(options, "conservative-propagation");
  Context &ctx = module.ctx();
  auto attach = [&](Operation &op) {
    getOrCreateShardingRule(op, ctx, conservative, /*attach=*/true, &diags);
  };
  for (Operation &op : module.body())
    if (op.is("func.func"))
      walkPostOrder(op, attach);
  return true;
}

} // namespace shardlab
