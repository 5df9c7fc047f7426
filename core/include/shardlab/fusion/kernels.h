// The kernels XLA's GPU compiler would launch for a block of the per-device
// program: which ops it fuses into one kernel, and what that kernel reads and
// writes in memory. The cost model then prices each kernel once, from its
// boundary bytes and its FLOPs, instead of every op as if it read all its
// inputs from memory and wrote all its outputs.
//
// The rules, as XLA's GPU fusion passes (instruction fusion, priority
// fusion, multi-output fusion, the GEMM rewriter) form kernels, simplified:
//  - Loop fusion: elementwise ops, broadcasts, converts, reshapes, bitcasts,
//    iotas, constants, transposes, slices, pads, reverses and concatenates
//    are fused into the kernel that consumes them; a producer whose users
//    all sit in one kernel joins it; a cheap producer (broadcast, iota,
//    constant, convert, reshape, or any op whose results are scalars, such
//    as a loop's index arithmetic) used by several kernels is computed again
//    in each (XLA duplicates it rather than write it out).
//  - Input fusion: a reduce (or reduce_window) is a kernel's root, with the
//    producer chain that feeds it; its consumers start another kernel.
//  - Multi-output fusion: an elementwise producer of a reduce's input that
//    other kernels read too (softmax's exponential, read by the sum and the
//    divide) joins the reduce's kernel as a second output, as XLA's
//    multi-output fusion makes it: computed once, written once, and the
//    reduce reads it in registers. Only when its other readers all come
//    after the reduce: a stricter test than XLA's cycle check, never wrong
//    about a kernel waiting for itself.
//  - Sibling multi-output fusion: loop or reduction kernels that read one
//    tensor from memory (not a constant, iota or broadcast) and iterate over
//    the same space (two loop kernels writing one shape, two reductions of
//    one shape over the same dimensions, or a loop kernel writing the shape
//    a reduction reads) are one kernel that reads it once and writes what
//    each wrote, as XLA's FuseSiblings makes them: Adam's two moment updates
//    reading the gradient; LayerNorm's bias and scale gradients reading dy.
//    Only when everything outside that reads the earlier kernel's results
//    comes after the later one's root (the kernel runs there); then a
//    producer whose readers now share the kernel joins it.
//  - GEMM: a dot_general is a cuBLAS call; the epilogue the GEMM rewriter
//    folds into it joins it: a bias add (`add(dot, broadcast(b))`), a ReLU
//    (`maximum(x, broadcast(0))`), a scale by a broadcast scalar constant and
//    a convert of the output, one after another; right on the product, an
//    add of a matrix of its type that nothing else reads (a gradient
//    accumulator, `add(acc, dot)`: cuBLAS's C with beta = 1, as XLA's
//    FuseMatrixBiasAdd; not an argument of the entry function, which may
//    not be overwritten). A transpose of the two minor dimensions feeding
//    it is a cuBLAS operand flag, free.
//  - In place: dynamic_update_slice writes only its update into the buffer
//    (the buffer is neither read nor copied); the update's producers fuse
//    into it.
//  - Reading what is taken: a slice, dynamic_slice or gather in a kernel
//    reads only the elements it takes from a tensor in memory.
//  - Everything else (collectives, control flow, custom calls, sort,
//    scatter, convolution, FFT, ...) is a kernel of its own.
// Worked example (a GPT MLP block, per device):
//   %h = dot_general %x, %w1           -> GEMM kernel, with
//   %b = broadcast_in_dim %bias1           the bias add fused as
//   %hb = add %h, %b                       its epilogue
//   %g = <tanh-approximated gelu of %hb: 8 elementwise ops>
//                                      -> one loop kernel: reads %hb once,
//                                         writes %g once
//   %y = dot_general %g, %w2           -> GEMM kernel
// 12 ops, 3 kernels; without fusion each op was a kernel reading and
// writing the whole activation.
#pragma once

#include "shardlab/ir/ir.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace shardlab::fusion {

enum class KernelKind {
  Loop,      ///< elementwise-like ops fused together
  Reduction, ///< a reduce (or reduce_window) root and its producers
  Gemm,      ///< a dot_general and its cuBLAS epilogue
  InPlace,   ///< a dynamic_update_slice writing only its update
  Single,    ///< an op XLA runs as a kernel of its own
};
std::string_view toString(KernelKind kind);

/// One kernel: its ops in program order (the root last), what it reads and
/// writes in memory, and the FLOPs of its non-GEMM members (one per output
/// element, a reduction's one per element reduced; a GEMM's are the GEMM
/// table's business).
struct Kernel {
  KernelKind kind = KernelKind::Single;
  std::vector<Operation *> members;
  Operation *root = nullptr;
  /// Values read from memory (defined outside the kernel), in first-use
  /// order.
  std::vector<Value *> inputs;
  /// Members besides the root whose results are read outside the kernel
  /// (multi-output fusion): the kernel writes them too.
  std::vector<Operation *> extra_outputs;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  double flops = 0;
};

struct FusionOptions {
  /// Off, every compute op is a kernel of its own, reading all its operands
  /// and writing all its results (the estimate before fusion, to compare).
  bool enabled = true;
};

/// Bytes of a static tensor value (0 when its shape is not static).
int64_t valueBytes(const Value *value);

/// The kernels of `block`: every op `is_compute` accepts belongs to one or,
/// when duplicated, several kernels; ops it refuses (control flow,
/// collectives, no-ops) are never members and bound fusions. Kernels come in
/// the program order of their roots.
std::vector<Kernel>
planKernels(Block &block, const FusionOptions &options,
            const std::function<bool(const Operation &)> &is_compute);

/// `loop fusion: add, multiply, exponential (+2)`: the kind and the first
/// member ops of a kernel, for names and explanations.
std::string describe(const Kernel &kernel);

} // namespace shardlab::fusion
