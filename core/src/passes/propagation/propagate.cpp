// The four propagation passes: -sdy-basic-propagate,
// -sdy-aggressive-propagate, -sdy-op-priority-propagate and
// -sdy-user-priority-propagate, with Shardy's option names.

#include "propagation/propagate.h"
#include "passes/pass_utils.h"
#include "propagation_passes.h"

namespace shardlab {

namespace {

// Each layer reads the options it declares (propagation_passes.cpp): the
// strategy from the aggressive layer up, the op-priority switch above that.
PropagationOptions parseOptions(const PassOptions &options,
                                PropagationLayer layer) {
  PropagationOptions out;
  out.layer = layer;
  out.keep_sharding_rules = options.flag("keep-sharding-rules");
  out.conservative = options.flag("conservative-propagation");
  out.debug_sharding_origins = options.flag("debug-sharding-origins");
  out.debug_propagation_edge_sharding =
      options.flag("debug-propagation-edge-sharding");
  if (layer == PropagationLayer::Basic)
    return out;
  const std::string &strategy = options.text("propagation-strategy");
  if (strategy == "basic")
    out.strategies = {FactorStrategy::Basic};
  else if (strategy == "basic-then-aggressive")
    out.strategies = {FactorStrategy::Basic, FactorStrategy::Aggressive};
  else
    out.strategies = {FactorStrategy::Aggressive};
  if (layer != PropagationLayer::Aggressive)
    out.run_op_priority = options.flag("run-op-priority-propagation");
  return out;
}

// Shardy's propagation passes drive their rewrites with MLIR's greedy
// driver, which erases the trivially dead ops it visits on the way.
bool propagate(Module &module, const PassOptions &options,
               PropagationLayer layer, DiagnosticEngine &diags) {
  eraseTriviallyDeadOps(module.op());
  return propagateShardings(module, parseOptions(options, layer), diags);
}

} // namespace

bool runBasicPropagate(Module &module, const PassOptions &options,
                       DiagnosticEngine &diags) {
  return propagate(module, options, PropagationLayer::Basic, diags);
}

bool runAggressivePropagate(Module &module, const PassOptions &options,
                            DiagnosticEngine &diags) {
  return propagate(module, options, PropagationLayer::Aggressive, diags);
}

bool runOpPriorityPropagate(Module &module, const PassOptions &options,
                            DiagnosticEngine &diags) {
  return propagate(module, options, PropagationLayer::OpPriority, diags);
}

bool runUserPriorityPropagate(Module &module, const PassOptions &options,
                              DiagnosticEngine &diags) {
  return propagate(module, options, PropagationLayer::UserPriority, diags);
}

} // namespace shardlab
