// The four propagation passes: -sdy-basic-propagate,
// -sdy-aggressive-propagate, -sdy-op-priority-propagate and
// -sdy-user-priority-propagate, with Shardy's option names.
#include "shardlab/passes/propagate_passes.h"

#include "shardlab/passes/pass_utils.h"
#include "shardlab/propagation/propagate.h"

namespace shardlab {

namespace {

bool flag(const PassOptions &options, const std::string &key,
          bool fallback = false) {
  return optionIsTrue(options, key, fallback);
}

PropagationOptions parseOptions(const PassOptions &options,
                                PropagationLayer layer) {
  PropagationOptions out;
  out.layer = layer;
  out.keep_sharding_rules = flag(options, "keep-sharding-rules");
  out.conservative = flag(options, "conservative-propagation");
  out.debug_sharding_origins = flag(options, "debug-sharding-origins");
  out.debug_propagation_edge_sharding =
      flag(options, "debug-propagation-edge-sharding");
  out.run_op_priority = flag(options, "run-op-priority-propagation", true);
  auto it = options.find("propagation-strategy");
  std::string strategy = it == options.end() ? "aggressive" : it->second;
  if (strategy == "basic")
    out.strategies = {FactorStrategy::Basic};
  else if (strategy == "basic-then-aggressive")
    out.strategies = {FactorStrategy::Basic, FactorStrategy::Aggressive};
  else
    out.strategies = {FactorStrategy::Aggressive};
  return out;
}

} // namespace

bool runBasicPropagate(Module &module, const PassOptions &options,
                       DiagnosticEngine &diags) {
  return propagateShardings(
      module, parseOptions(options, PropagationLayer::Basic), diags);
}

bool runAggressivePropagate(Module &module, const PassOptions &options,
                            DiagnosticEngine &diags) {
  return propagateShardings(
      module, parseOptions(options, PropagationLayer::Aggressive), diags);
}

bool runOpPriorityPropagate(Module &module, const PassOptions &options,
                            DiagnosticEngine &diags) {
  return propagateShardings(
      module, parseOptions(options, PropagationLayer::OpPriority), diags);
}

bool runUserPriorityPropagate(Module &module, const PassOptions &options,
                              DiagnosticEngine &diags) {
  return propagateShardings(
      module, parseOptions(options, PropagationLayer::UserPriority), diags);
}

} // namespace shardlab
