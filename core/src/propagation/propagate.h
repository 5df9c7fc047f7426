// Sharding propagation over a whole module, layer by layer as Shardy nests
// them: user priorities, then op priorities, then the aggressive/basic
// strategies, then the basic fixed-point driver. The four -sdy-*-propagate
// passes call propagateShardings with their layer.
#pragma once

#include "propagation/factor_propagation.h"
#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"

#include <vector>

namespace shardlab {

/// The outermost layer a pass runs (each includes the ones below it).
enum class PropagationLayer { Basic, Aggressive, OpPriority, UserPriority };

/// Options shared by the propagation passes (Shardy's PropagationOptions).
struct PropagationOptions {
  PropagationLayer layer = PropagationLayer::UserPriority;
  /// Strategies the aggressive layer runs in order (basic layer: Basic).
  std::vector<FactorStrategy> strategies = {FactorStrategy::Aggressive};
  bool keep_sharding_rules = false;
  bool conservative = false;
  bool run_op_priority = true;
  bool debug_sharding_origins = false;
  bool debug_propagation_edge_sharding = false;
  /// Reuse the outcome of a step through an op when an equal op took the
  /// same step before (prop::StepMemo). Off, every step is computed; the
  /// result is the same (the unit tests compare both).
  bool memoize_steps = true;
};

/// Propagates shardings in `module` in place. Returns false (with an error
/// in `diags`) for dynamic shapes or tuples, as Shardy does.
bool propagateShardings(Module &module, const PropagationOptions &options,
                        DiagnosticEngine &diags);

} // namespace shardlab
