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

} // namespace shardlab
