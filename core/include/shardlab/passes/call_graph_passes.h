// The Shardy passes that work on the call graph (func.func / func.call and
// sdy.named_computation), MLIR's -symbol-dce, and the import and propagation
// pipelines. Each has the PassFn signature of the pass registry; the comment
// gives Shardy's flag.
#pragma once

#include "shardlab/passes/pass_registry.h"
#include "shardlab/sharding/sharding.h"

#include <string_view>
#include <vector>

namespace shardlab {

// -symbol-dce: erases private symbols (funcs) no live symbol refers to.
bool symbolDcePass(Module &, const PassOptions &, DiagnosticEngine &);

// Import.
// -sdy-add-func-data-flow-edges
bool addFuncDataFlowEdgesPass(Module &, const PassOptions &,
                              DiagnosticEngine &);
// -sdy-flatten-call-graph
bool flattenCallGraphPass(Module &, const PassOptions &, DiagnosticEngine &);
// -sdy-import-func-calls
bool importFuncCallsPass(Module &, const PassOptions &, DiagnosticEngine &);
// -sdy-pre-order-funcs
bool preOrderFuncsPass(Module &, const PassOptions &, DiagnosticEngine &);
// -sdy-propagate-sharding-from-func-to-call
bool propagateShardingFromFuncToCallPass(Module &, const PassOptions &,
                                         DiagnosticEngine &);
// -sdy-explicit-gather-scatter-batching
bool explicitGatherScatterBatchingPass(Module &, const PassOptions &,
                                       DiagnosticEngine &);

// Export.
// -sdy-sink-func-data-flow-edges
bool sinkFuncDataFlowEdgesPass(Module &, const PassOptions &,
                               DiagnosticEngine &);
// -sdy-export-named-computations
bool exportNamedComputationsPass(Module &, const PassOptions &,
                                 DiagnosticEngine &);
// -sdy-unflatten-call-graph (option dedup-functions-fully)
bool unflattenCallGraphPass(Module &, const PassOptions &, DiagnosticEngine &);
// -sdy-insert-func-call-reshards
/// The shardings the results of `call` must have: its callee's result
/// shardings, or, when the callee has none but the call has, fully closed
/// replicated ones; nothing when neither has any.
std::optional<std::vector<TensorSharding>>
expectedCallResultShardings(Module &module, Operation &call, Operation &func);
/// Reshards results of `call` whose sharding differs from `expected` (the
/// callee's) and sets `expected` on the call: `op_name` is sdy.reshard, or
/// mhlo.copy as XLA writes it.
void insertReshardsOnCallResults(Module &module, Operation &call,
                                 const std::vector<TensorSharding> &expected,
                                 std::string_view op_name);
/// Reshards operands of `call` to `expected` (the callee's arguments).
void insertReshardsOnCallOperands(Module &module, Operation &call,
                                  const std::vector<TensorSharding> &expected,
                                  std::string_view op_name);

bool insertFuncCallReshardsPass(Module &, const PassOptions &,
                                DiagnosticEngine &);
// -sdy-verify-unreduced-axes
bool verifyUnreducedAxesPass(Module &, const PassOptions &, DiagnosticEngine &);

// Pipelines (option dedup-functions-fully).
bool importPipeline(Module &, const PassOptions &, DiagnosticEngine &);
bool propagationPipeline(Module &, const PassOptions &, DiagnosticEngine &);

} // namespace shardlab
