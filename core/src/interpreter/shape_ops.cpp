// Ops that move elements without computing: each output element copies the
// bits of one input element (or of a padding value), found by index
// arithmetic on row-major strides.
#include "indexing.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <algorithm>

namespace shardlab::interpreter::detail {
namespace {

using rules::intAttr;
using rules::intsAttr;

// Calls fn(index, flat) for every index of `shape`, in row-major order.
template <class Fn>
void forEachIndex(const std::vector<int64_t> &shape, Fn &&fn) {
  std::vector<int64_t> index(shape.size(), 0);
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  for (int64_t flat = 0; flat < total; ++flat, nextIndex(index, shape))
    fn(index, flat);
}

Result<Tensor> broadcastInDim(const Operation &op, const Tensor &in,
                              Type result) {
  std::optional<std::vector<int64_t>> dims =
      intsAttr(op, "broadcast_dimensions");
  if (!dims || dims->size() != size_t(in.rank()))
    return opError(op, "broadcast_dimensions missing or of the wrong length");
  Tensor out = Tensor::zeros(result);
  const std::vector<int64_t> strides = in.strides();
  forEachIndex(out.shape(), [&](const std::vector<int64_t> &index,
                                int64_t flat) {
    int64_t from = 0;
    for (size_t d = 0; d < dims->size(); ++d)
      from += (in.shape()[d] == 1 ? 0 : index[size_t((*dims)[d])]) * strides[d];
    copyElement(out, flat, in, from);
  });
  return out;
}

Tensor reshape(const Tensor &in, Type result) {
  Tensor out = Tensor::zeros(result);
  for (int64_t i = 0; i < out.size(); ++i)
    copyElement(out, i, in, i);
  return out;
}

Result<Tensor> transpose(const Operation &op, const Tensor &in, Type result) {
  std::optional<std::vector<int64_t>> perm = intsAttr(op, "permutation");
  if (!perm || perm->size() != size_t(in.rank()))
    return opError(op, "permutation missing or of the wrong length");
  Tensor out = Tensor::zeros(result);
  const std::vector<int64_t> strides = in.strides();
  forEachIndex(out.shape(),
               [&](const std::vector<int64_t> &index, int64_t flat) {
                 int64_t from = 0;
                 for (size_t d = 0; d < perm->size(); ++d)
                   from += index[d] * strides[size_t((*perm)[d])];
                 copyElement(out, flat, in, from);
               });
  return out;
}

Result<Tensor> slice(const Operation &op, const Tensor &in, Type result) {
  std::optional<std::vector<int64_t>> start = intsAttr(op, "start_indices");
  std::optional<std::vector<int64_t>> step = intsAttr(op, "strides");
  if (!start || start->size() != size_t(in.rank()))
    return opError(op, "start_indices missing");
  Tensor out = Tensor::zeros(result);
  const std::vector<int64_t> strides = in.strides();
  forEachIndex(out.shape(), [&](const std::vector<int64_t> &index,
                                int64_t flat) {
    int64_t from = 0;
    for (size_t d = 0; d < index.size(); ++d)
      from += ((*start)[d] + index[d] * (step ? (*step)[d] : 1)) * strides[d];
    copyElement(out, flat, in, from);
  });
  return out;
}

Result<Tensor> concatenate(const Operation &op, const Operands &in,
                           Type result) {
  std::optional<int64_t> dim = intAttr(op, "dimension");
  if (!dim)
    return opError(op, "dimension missing");
  Tensor out = Tensor::zeros(result);
  const std::vector<int64_t> out_strides = out.strides();
  int64_t offset = 0;
  for (const Tensor *part : in) {
    forEachIndex(part->shape(), [&](std::vector<int64_t> index, int64_t flat) {
      index[size_t(*dim)] += offset;
      copyElement(out, flatIndex(index, out_strides), *part, flat);
    });
    offset += part->shape()[size_t(*dim)];
  }
  return out;
}

Result<Tensor> iota(const Operation &op, Type result) {
  std::optional<int64_t> dim = intAttr(op, "iota_dimension");
  if (!dim)
    return opError(op, "iota_dimension missing");
  Tensor out = Tensor::zeros(result);
  if (out.isComplex())
    return opError(op, "iota of complex elements");
  forEachIndex(out.shape(),
               [&](const std::vector<int64_t> &index, int64_t flat) {
                 const int64_t v = index[size_t(*dim)];
                 if (out.isInteger())
                   out.setInteger(flat, uint64_t(v));
                 else
                   out.setReal(flat, double(v));
               });
  return out;
}

Result<Tensor> reverse(const Operation &op, const Tensor &in, Type result) {
  std::optional<std::vector<int64_t>> dims = intsAttr(op, "dimensions");
  if (!dims)
    return opError(op, "dimensions missing");
  Tensor out = Tensor::zeros(result);
  const std::vector<int64_t> strides = in.strides();
  forEachIndex(out.shape(), [&](std::vector<int64_t> index, int64_t flat) {
    for (int64_t d : *dims)
      index[size_t(d)] = in.shape()[size_t(d)] - 1 - index[size_t(d)];
    copyElement(out, flat, in, flatIndex(index, strides));
  });
  return out;
}

// pad(operand, padding_value): low/high (negative: cut) and interior.
Result<Tensor> pad(const Operation &op, const Operands &in, Type result) {
  std::optional<std::vector<int64_t>> low = intsAttr(op, "edge_padding_low");
  std::optional<std::vector<int64_t>> interior =
      intsAttr(op, "interior_padding");
  if (!low || !interior)
    return opError(op, "padding attributes missing");
  const Tensor &x = *in[0], &value = *in[1];
  Tensor out = Tensor::zeros(result);
  for (int64_t i = 0; i < out.size(); ++i)
    copyElement(out, i, value, 0);
  const std::vector<int64_t> out_strides = out.strides();
  forEachIndex(x.shape(), [&](const std::vector<int64_t> &index, int64_t flat) {
    int64_t to = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      const int64_t at = (*low)[d] + index[d] * ((*interior)[d] + 1);
      if (at < 0 || at >= out.shape()[d])
        return;
      to += at * out_strides[d];
    }
    copyElement(out, to, x, flat);
  });
  return out;
}

// Whether a window of `sizes` fits in `operand` (the op's type
// constraints, which a malformed module may break) and one start index per
// dimension follows at `first`; the error otherwise.
std::optional<std::string> windowError(const Tensor &operand,
                                       const std::vector<int64_t> &sizes,
                                       const Operands &in, size_t first) {
  if (sizes.size() != size_t(operand.rank()))
    return std::string("the slice's rank differs from the operand's");
  if (in.size() != first + sizes.size())
    return std::string("expected one start index per dimension");
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > operand.shape()[d])
      return "the slice (" + std::to_string(sizes[d]) +
             ") is larger than the operand (" +
             std::to_string(operand.shape()[d]) + ") in dimension " +
             std::to_string(d);
    if (in[first + d]->size() != 1)
      return std::string("a start index is not a scalar");
  }
  return std::nullopt;
}

// Start indices clamped so the slice stays inside the operand (the spec).
std::vector<int64_t> clampedStarts(const Tensor &operand,
                                   const std::vector<int64_t> &sizes,
                                   const Operands &in, size_t first) {
  std::vector<int64_t> starts;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t s = in[first + d]->integer(0);
    starts.push_back(std::clamp<int64_t>(s, 0, operand.shape()[d] - sizes[d]));
  }
  return starts;
}

Result<Tensor> dynamicSlice(const Operation &op, const Operands &in,
                            Type result) {
  const Tensor &x = *in[0];
  Tensor out = Tensor::zeros(result);
  if (auto why = windowError(x, out.shape(), in, 1))
    return opError(op, *why);
  const std::vector<int64_t> starts = clampedStarts(x, out.shape(), in, 1);
  const std::vector<int64_t> strides = x.strides();
  forEachIndex(out.shape(),
               [&](const std::vector<int64_t> &index, int64_t flat) {
                 int64_t from = 0;
                 for (size_t d = 0; d < index.size(); ++d)
                   from += (starts[d] + index[d]) * strides[d];
                 copyElement(out, flat, x, from);
               });
  return out;
}

Result<Tensor> dynamicUpdateSlice(const Operation &op, const Operands &in,
                                  Type result) {
  const Tensor &x = *in[0], &update = *in[1];
  if (auto why = windowError(x, update.shape(), in, 2))
    return opError(op, *why);
  Tensor out = x;
  const std::vector<int64_t> starts = clampedStarts(x, update.shape(), in, 2);
  const std::vector<int64_t> strides = x.strides();
  forEachIndex(update.shape(),
               [&](const std::vector<int64_t> &index, int64_t flat) {
                 int64_t to = 0;
                 for (size_t d = 0; d < index.size(); ++d)
                   to += (starts[d] + index[d]) * strides[d];
                 copyElement(out, to, update, flat);
               });
  (void)result;
  return out;
}

} // namespace

std::optional<Result<Tensor>> shapeOp(const Operation &op, const Operands &in,
                                      Type result) {
  const std::string_view name = op.name;
  if (name == "stablehlo.broadcast_in_dim")
    return broadcastInDim(op, *in[0], result);
  if (name == "stablehlo.reshape") {
    // A reshape keeps the element count; a program that breaks this (a
    // wrong per-device lowering) is named, not read out of bounds.
    if (in[0]->size() != result->numElements())
      return Result<Tensor>(opError(
          op, "reshape of " + std::to_string(in[0]->size()) + " elements to " +
                  std::to_string(result->numElements())));
    return Result<Tensor>(reshape(*in[0], result));
  }
  if (name == "stablehlo.transpose")
    return transpose(op, *in[0], result);
  if (name == "stablehlo.slice")
    return slice(op, *in[0], result);
  if (name == "stablehlo.concatenate")
    return concatenate(op, in, result);
  if (name == "stablehlo.iota")
    return iota(op, result);
  if (name == "stablehlo.reverse")
    return reverse(op, *in[0], result);
  if (name == "stablehlo.pad")
    return pad(op, in, result);
  if (name == "stablehlo.dynamic_slice")
    return dynamicSlice(op, in, result);
  if (name == "stablehlo.dynamic_update_slice")
    return dynamicUpdateSlice(op, in, result);
  return std::nullopt;
}

} // namespace shardlab::interpreter::detail
