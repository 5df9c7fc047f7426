// The interpreter's op families, each in its file; the evaluator
// (interpreter.cpp) walks blocks, runs regions and calls these.
#pragma once

#include "shardlab/interpreter/interpreter.h"
#include "shardlab/support/result.h"

#include <functional>
#include <optional>
#include <vector>

namespace shardlab::interpreter::detail {

using Operands = std::vector<const Tensor *>;

/// Elementwise math, comparisons, select, clamp, convert, bitcast_convert
/// (elementwise.cpp); nullopt when `op` is none of them.
std::optional<Result<Tensor>> elementwise(const Operation &op,
                                          const Operands &in, Type result);

/// Ops that move elements: broadcast_in_dim, reshape, transpose, slice,
/// concatenate, iota, reverse, pad, dynamic_slice, dynamic_update_slice
/// (shape_ops.cpp); nullopt when `op` is none of them.
std::optional<Result<Tensor>> shapeOp(const Operation &op, const Operands &in,
                                      Type result);

/// The work of `op` on one device before it runs: elements produced or
/// read, a dot's or a convolution's multiply-adds (work.cpp).
int64_t opWork(const Operation &op, const Operands &in,
               const std::vector<Type> &types);

/// dot_general (and the legacy dot) (dot.cpp).
Result<Tensor> dotGeneral(const Operation &op, const Operands &in, Type result);

/// cuDNN's fused attention, forward or backward (fused_attention.cpp).
Result<std::vector<Tensor>> fusedAttention(const Operation &op,
                                           const Operands &in,
                                           const std::vector<Type> &types);

/// fft (fft.cpp).
Result<Tensor> fft(const Operation &op, const Tensor &x, Type result);

/// triangular_solve (triangular_solve.cpp).
Result<Tensor> triangularSolve(const Operation &op, const Tensor &a,
                               const Tensor &b, Type result);

/// rng_bit_generator (rng_bit_generator.cpp): the new state and the bits.
Result<std::vector<Tensor>> rngBitGenerator(const Operation &op,
                                            const Tensor &state,
                                            const std::vector<Type> &results);

/// convolution (convolution.cpp).
Result<Tensor> convolution(const Operation &op, const Operands &in,
                           Type result);

/// Combines accumulators with elements: the body of a reduction region,
/// called with (accumulators..., elements...) and returning the new
/// accumulators.
using Combiner =
    std::function<Result<std::vector<Tensor>>(const std::vector<Tensor> &)>;

/// stablehlo.reduce over `dimensions` of N inputs with N init values
/// (reduce.cpp).
Result<std::vector<Tensor>> reduce(const Operation &op, const Operands &in,
                                   const std::vector<Type> &results,
                                   const Combiner &combine);

/// gather (gather_scatter.cpp).
Result<Tensor> gather(const Operation &op, const Operands &in, Type result);

/// scatter of N inputs at indices with N updates, combined by the update
/// computation (gather_scatter.cpp).
Result<std::vector<Tensor>> scatter(const Operation &op, const Operands &in,
                                    const std::vector<Type> &results,
                                    const Combiner &combine);

/// reduce_window of N inputs with N init values (windows.cpp).
Result<std::vector<Tensor>> reduceWindow(const Operation &op,
                                         const Operands &in,
                                         const std::vector<Type> &results,
                                         const Combiner &combine);

/// sort of N operands along `dimension` by the comparator (windows.cpp).
Result<std::vector<Tensor>> sort(const Operation &op, const Operands &in,
                                 const std::vector<Type> &results,
                                 const Combiner &compare);

/// select_and_scatter: each source element goes to the element its window
/// selects (windows.cpp).
Result<Tensor> selectAndScatter(const Operation &op, const Operands &in,
                                Type result, const Combiner &select,
                                const Combiner &scatter);

/// chlo.top_k: the k largest of each last-dimension row, with their
/// indices (windows.cpp).
Result<std::vector<Tensor>> topK(const Operation &op, const Tensor &x,
                                 const std::vector<Type> &results);

/// reduce_precision (windows.cpp).
Result<Tensor> reducePrecision(const Operation &op, const Tensor &x,
                               Type result);

/// The reduction region of a collective as lane `lane` runs it.
using LaneCombiner = std::function<Combiner(size_t lane)>;
/// A collective on the lanes of simulated devices: `in` is [lane][operand],
/// `devices` each lane's partition id out of `num_devices`; the results
/// are [result][lane] (collectives.cpp).
Result<std::vector<std::vector<Tensor>>>
collective(Operation &op, const std::vector<Operands> &in,
           const std::vector<Type> &types, const std::vector<int64_t> &devices,
           int64_t num_devices, const LaneCombiner &reducer);

/// A `check.*` custom call on its operands (checks.cpp); nullopt when
/// `target` is not a check the interpreter knows.
std::optional<CheckResult>
runCheck(const Operation &op, std::string_view target, const Operands &in);

/// `line:col: name: message`.
Error opError(const Operation &op, const std::string &message);

} // namespace shardlab::interpreter::detail
