// Following a value back to the entry argument it is a view of: through
// converts, copies, slices, transposes, broadcasts, reshapes, loops, named
// computations and calls, keeping track of which argument dimension each
// of the value's dimensions is. The comparer reads roles from it (a matmul
// weight is an argument its rhs comes from) and the strategy passes find
// the arguments a rewrite is about. In
//
//   func @main(%w: tensor<8x1024x4096xbf16>) {      // [L, H, F]
//     while (%i, %ws = %w) { ...
//       %l = dynamic_slice %ws, %i, 0, 0 sizes [1, 1024, 4096]
//       %r = reshape %l : 1x1024x4096 -> 1024x4096
//       %t = transpose %r [1, 0]                    // [F, H]
//
// %t traces to argument 0 with dims {2, 1}: its dim 0 is %w's dim 2.
#pragma once

#include "shardlab/ir/ir.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace shardlab {

/// How many ops and block arguments a trace follows back before giving up
/// (a bound on chains of views, not on the program).
inline constexpr int kMaxTraceSteps = 256;

/// An argument of the entry function a value comes from, with the
/// argument's dimension behind each of the value's (-1: none).
struct ArgumentTrace {
  int64_t arg = -1; ///< -1: the value is computed, not an argument's view
  std::vector<int64_t> dims;
};

/// Traces values of one module's entry function (its calls indexed once).
class ArgumentTracer {
public:
  ArgumentTracer(Module &module, Operation &entry);
  /// Follows `value` back through data movement to an entry argument.
  ArgumentTrace trace(Value *value) const;

private:
  Value *throughBlockArgument(Value &value, ArgumentTrace &t) const;

  Operation &entry_;
  std::unordered_map<std::string, Operation *> calls_;
};

/// For each dim of a reshape's result, the operand dim it is (-1 for
/// none), matched from the innermost outwards while sizes agree
/// (`1x4096x16384 -> 4096x16384` keeps both).
std::vector<int64_t> reshapeSources(const Value *operand, const Value *result);

} // namespace shardlab
