// Index arithmetic and element moves the interpreter's op families share:
// row-major walks, flat offsets, one element copied or taken as a scalar,
// and the window attributes (strides and dilations default to 1, padding
// to 0) of reduce_window, select_and_scatter and convolution.
#pragma once

#include "shardlab/interpreter/tensor.h"
#include "shardlab/ir/ir.h"
#include "shardlab/support/result.h"

#include <string_view>
#include <vector>

namespace shardlab::interpreter::detail {

/// Advances `index` over `shape` in row-major order; false after the last.
bool nextIndex(std::vector<int64_t> &index, const std::vector<int64_t> &shape);

/// The flat offset of `index` with `strides`.
int64_t flatIndex(const std::vector<int64_t> &index,
                  const std::vector<int64_t> &strides);

/// out[to] = in[from], every part.
void copyElement(Tensor &out, int64_t to, const Tensor &in, int64_t from);

/// Copies the box of `sizes` at `from_start` in `from` to `to_start` in
/// `to` (both boxes inside their tensors).
void copyBox(const Tensor &from, const std::vector<int64_t> &from_start,
             Tensor &to, const std::vector<int64_t> &to_start,
             const std::vector<int64_t> &sizes);

/// Element `i` of `from` as a tensor of the scalar type `scalar`.
Tensor scalarAt(const Tensor &from, int64_t i, Type scalar);

/// A tensor of `type` holding a dense literal's elements (a splat
/// repeated).
Tensor fromLiteral(const DenseReader &reader, Type type);

/// A float's place in the total order (-NaN < -inf < ... < -0 < +0 < ...
/// < +inf < +NaN): its bits read as a sign-magnitude integer.
int64_t totalOrderKey(uint64_t bits, const FloatFormat &format);

/// The integers of attribute `name`, or `rank` ones when it is absent.
std::vector<int64_t> intsOrOnes(const Operation &op, std::string_view name,
                                size_t rank);

/// The low edge of each dimension's `padding` (dense [rank, 2]); zeros when
/// absent, an error when unreadable.
Result<std::vector<int64_t>> lowPadding(const Operation &op, size_t rank);

} // namespace shardlab::interpreter::detail
