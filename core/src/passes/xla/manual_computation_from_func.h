// The sdy.manual_computation both XLA imports rebuild from a function call
// (the stablehlo import from the SPMDFullToShardShape pattern, the
// round-trip import from GlobalToLocalShape / body call /
// LocalToGlobalShape): its body is a copy of the function's body.
#pragma once

#include "shardlab/ir/ir.h"

#include <vector>

namespace shardlab {

/// The parts of the manual computation; `arg_types[i]`, where given (not
/// null), types body argument i instead of the function's argument.
struct ManualComputationParts {
  std::vector<Value *> operands;
  std::vector<Type> result_types;
  const Attr *in_shardings = nullptr;
  const Attr *out_shardings = nullptr;
  const Attr *manual_axes = nullptr;
  std::vector<Type> arg_types;
};

/// Inserts before `at` an sdy.manual_computation whose body is a copy of
/// `func`'s body ending in sdy.return of what `func` returns.
Operation *manualComputationFromFunc(Context &ctx, Operation &at,
                                     Operation &func,
                                     const ManualComputationParts &parts);

} // namespace shardlab
