// The interpreter's op families, each in its file; the evaluator
// (interpreter.cpp) walks blocks, runs regions and calls these.
#pragma once

#include "shardlab/interpreter/interpreter.h"
#include "shardlab/support/result.h"

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace shardlab::interpreter::detail {

using Operands = std::vector<const Tensor *>;

/// Elementwise math, comparisons, select, clamp, convert, bitcast_convert
/// (elementwise.cpp); nullopt when `op` is none of them.
std::optional<Result<Tensor>> elementwise(const Operation &op,
                                          const Operands &in, Type result);

/// One element of the elementwise binary op `name` (add, multiply, maximum,
/// and, ...): out[io] = a[ia] op b[ib], rounded to the element type as the
/// op rounds it; false when the op is not defined on a's kind of element
/// (elementwise.cpp). `out` may be `a` or `b` at the same index.
bool binaryElement(std::string_view name, const Tensor &a, int64_t ia,
                   const Tensor &b, int64_t ib, Tensor &out, int64_t io);

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

/// A reduction body that is one elementwise binary op on its two
/// arguments, as JAX writes sums and maxima:
///
///   ^bb0(%acc: tensor<f32>, %x: tensor<f32>):
///     %0 = stablehlo.add %acc, %x : tensor<f32>
///     stablehlo.return %0 : tensor<f32>
///
/// A reduction folds each element into its accumulator with binaryElement
/// instead of running the region once per element: the same steps in the
/// same order, so the same bits, in some 15 times fewer instructions.
struct SingleOpBody {
  std::string_view op;            ///< "stablehlo.add", ...
  bool accumulator_second{false}; ///< `add %x, %acc`
  Type type;                      ///< the arguments' and result's type
};

/// `op`'s first region as a SingleOpBody, or nullopt when it is anything
/// else (two ops, a convert, a variadic body, an op not in the fold set)
/// (reduce.cpp).
std::optional<SingleOpBody> singleOpBody(const Operation &op);

/// Whether `body` folds elements of `element` type into accumulators of
/// its own type with no conversion between them.
bool foldsElementsOf(const SingleOpBody &body, Type element);

/// Whether a reduction of one input and one init value (reduce,
/// reduce_window) folds with `body`: the init value of its type, the input
/// and the result of its element type.
bool foldsReduction(const SingleOpBody &body, const Operands &in,
                    const std::vector<Type> &results);

/// acc[at] = body(acc[at], x[from]), as running the region computes it.
void foldElement(const SingleOpBody &body, Tensor &acc, int64_t at,
                 const Tensor &x, int64_t from);

/// stablehlo.reduce over `dimensions` of N inputs with N init values
/// (reduce.cpp). A one-op body is folded without running the region.
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
