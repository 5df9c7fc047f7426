// reduce_window, sort and reduce_precision.
//  - reduce_window: each result element folds its window of the padded,
//    base-dilated input into the init values with the body, in index
//    order; a window element that falls on padding or a dilation hole is
//    the init value (the specification pads with the init values).
//  - sort: each 1-D slice along `dimension` is sorted by the comparator
//    region (stable when asked; std::stable_sort is used always, which is
//    a valid order for an unstable sort too).
//  - reduce_precision: XLA's bit recipe: round the significand to
//    mantissa_bits (nearest even), then flush values outside the reduced
//    exponent range to zero or infinity; NaNs stay NaN.
#include "indexing.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <algorithm>
#include <numeric>

namespace shardlab::interpreter::detail {
namespace {

// Where a reduce_window's windows fall in its input.
struct WindowPlacement {
  std::vector<int64_t> strides, base_dilations, window_dilations, pad_low;
  std::vector<int64_t> input_shape, input_strides;

  // The flat input index window position `w` of output index `at` reads,
  // or nullopt where it falls in the padding or between dilated elements.
  std::optional<int64_t> source(const std::vector<int64_t> &at,
                                const std::vector<int64_t> &w) const {
    int64_t from = 0;
    for (size_t d = 0; d < at.size(); ++d) {
      const int64_t p =
          at[d] * strides[d] + w[d] * window_dilations[d] - pad_low[d];
      if (p < 0 || p % base_dilations[d] != 0 ||
          p / base_dilations[d] >= input_shape[d])
        return std::nullopt;
      from += (p / base_dilations[d]) * input_strides[d];
    }
    return from;
  }
};

// Every output element of a one-op body: its init value with each element
// of its window folded in (the init value where the window is padding).
Tensor foldWindows(const SingleOpBody &body, const WindowPlacement &place,
                   const std::vector<int64_t> &window, const Tensor &x,
                   const Tensor &init, Type result) {
  Tensor out = Tensor::zeros(result);
  std::vector<int64_t> at(size_t(x.rank()), 0);
  for (int64_t flat = 0; flat < out.size();
       ++flat, nextIndex(at, out.shape())) {
    copyElement(out, flat, init, 0);
    std::vector<int64_t> w(at.size(), 0);
    do {
      const std::optional<int64_t> from = place.source(at, w);
      if (from)
        foldElement(body, out, flat, x, *from);
      else
        foldElement(body, out, flat, init, 0);
    } while (nextIndex(w, window));
  }
  return out;
}

// The same with the body run as a region, for N inputs.
Result<std::vector<Tensor>> combineWindows(const Combiner &combine,
                                           const WindowPlacement &place,
                                           const std::vector<int64_t> &window,
                                           const Operands &in,
                                           const std::vector<Type> &results) {
  const size_t n = results.size();
  std::vector<Tensor> outs;
  for (Type t : results)
    outs.push_back(Tensor::zeros(t));
  std::vector<int64_t> at(window.size(), 0);
  for (int64_t flat = 0; flat < outs[0].size();
       ++flat, nextIndex(at, outs[0].shape())) {
    std::vector<Tensor> acc;
    for (size_t k = 0; k < n; ++k)
      acc.push_back(*in[n + k]);
    std::vector<int64_t> w(window.size(), 0);
    do {
      const std::optional<int64_t> from = place.source(at, w);
      std::vector<Tensor> args = acc;
      for (size_t k = 0; k < n; ++k)
        args.push_back(from ? scalarAt(*in[k], *from, in[n + k]->type())
                            : *in[n + k]);
      Result<std::vector<Tensor>> next_acc = combine(args);
      if (!next_acc)
        return next_acc.error();
      acc = std::move(*next_acc);
    } while (nextIndex(w, window));
    for (size_t k = 0; k < n; ++k)
      copyElement(outs[k], flat, acc[k], 0);
  }
  return outs;
}

} // namespace

Result<std::vector<Tensor>> reduceWindow(const Operation &op,
                                         const Operands &in,
                                         const std::vector<Type> &results,
                                         const Combiner &combine) {
  const size_t n = results.size();
  if (in.size() != 2 * n || n == 0)
    return opError(op, "expected N inputs and N init values");
  const Tensor &x = *in[0];
  const size_t rank = size_t(x.rank());
  std::optional<std::vector<int64_t>> window =
      rules::intsAttr(op, "window_dimensions");
  if (!window || window->size() != rank)
    return opError(op, "window_dimensions missing");
  Result<std::vector<int64_t>> low = lowPadding(op, rank);
  if (!low)
    return low.error();
  const WindowPlacement place{intsOrOnes(op, "window_strides", rank),
                              intsOrOnes(op, "base_dilations", rank),
                              intsOrOnes(op, "window_dilations", rank),
                              *low,
                              x.shape(),
                              x.strides()};
  const std::optional<SingleOpBody> body = singleOpBody(op);
  if (body && foldsReduction(*body, in, results))
    return std::vector<Tensor>{
        foldWindows(*body, place, *window, x, *in[1], results[0])};
  return combineWindows(combine, place, *window, in, results);
}

Result<std::vector<Tensor>> sort(const Operation &op, const Operands &in,
                                 const std::vector<Type> &results,
                                 const Combiner &compare) {
  const Tensor &x = *in[0];
  int64_t dim = rules::intAttr(op, "dimension").value_or(-1);
  if (dim < 0)
    dim += x.rank();
  if (dim < 0 || dim >= x.rank() || results.size() != in.size())
    return opError(op, "dimension out of range");
  Operation &mutable_op = const_cast<Operation &>(op);
  if (!mutable_op.numRegions() || mutable_op.region(0).empty())
    return opError(op, "comparator missing");
  std::vector<Type> scalar;
  for (size_t k = 0; k < mutable_op.region(0).front().numArguments(); ++k)
    scalar.push_back(mutable_op.region(0).front().argument(k)->type);
  if (scalar.size() != 2 * in.size())
    return opError(op, "comparator takes 2 scalars per operand");
  std::vector<Tensor> outs;
  for (const Tensor *t : in)
    outs.push_back(*t);
  const std::vector<int64_t> strides = x.strides();
  const int64_t length = x.shape()[size_t(dim)];
  const int64_t step = strides[size_t(dim)];
  std::vector<int64_t> outer_shape = x.shape();
  outer_shape[size_t(dim)] = 1;
  std::vector<int64_t> at(size_t(x.rank()), 0);
  std::optional<Error> failure;
  do {
    int64_t base = 0;
    for (size_t d = 0; d < at.size(); ++d)
      base += at[d] * strides[d];
    std::vector<int64_t> order(static_cast<size_t>(length));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      if (failure)
        return false;
      std::vector<Tensor> args;
      for (size_t k = 0; k < in.size(); ++k) {
        args.push_back(scalarAt(*in[k], base + a * step, scalar[2 * k]));
        args.push_back(scalarAt(*in[k], base + b * step, scalar[2 * k + 1]));
      }
      Result<std::vector<Tensor>> less = compare(args);
      if (!less || less->empty()) {
        failure =
            less ? makeError("comparator returned nothing") : less.error();
        return false;
      }
      return (*less)[0].integer(0) != 0;
    });
    if (failure)
      return *failure;
    for (size_t k = 0; k < in.size(); ++k)
      for (int64_t i = 0; i < length; ++i)
        copyElement(outs[k], base + i * step, *in[k],
                    base + order[size_t(i)] * step);
  } while (nextIndex(at, outer_shape));
  return outs;
}

Result<Tensor> reducePrecision(const Operation &op, const Tensor &x,
                               Type result) {
  const std::optional<int64_t> exp_bits = rules::intAttr(op, "exponent_bits");
  const std::optional<int64_t> man_bits = rules::intAttr(op, "mantissa_bits");
  const FloatFormat *f = x.layout().float_format;
  if (!exp_bits || !man_bits || !f || !x.isFloat() ||
      f->non_finite != NonFinite::Ieee)
    return opError(op, "exponent_bits, mantissa_bits and an IEEE float "
                       "operand expected");
  const int64_t src_man = f->fraction_bits, src_exp = f->exponent_bits;
  const uint64_t sign_mask = uint64_t{1} << (f->bits - 1);
  const uint64_t exp_mask = ((uint64_t{1} << src_exp) - 1) << src_man;
  Tensor out = Tensor::zeros(result);
  for (int64_t i = 0; i < x.size(); ++i) {
    uint64_t v = x.bits(i);
    const bool nan = isNanBits(v, *f);
    if (*man_bits < src_man) {
      const int64_t shift = src_man - *man_bits;
      const uint64_t last = uint64_t{1} << shift;
      const uint64_t bias = (last >> 1) - 1 + ((v & last) >> shift);
      v = (v + bias) & ~(last - 1);
    }
    if (*exp_bits < src_exp) {
      const int64_t src_bias = (int64_t{1} << (src_exp - 1)) - 1;
      const int64_t reduced_bias = (int64_t{1} << (*exp_bits - 1)) - 1;
      const uint64_t max_exp = uint64_t(src_bias + reduced_bias) << src_man;
      const uint64_t min_exp = uint64_t(src_bias - reduced_bias) << src_man;
      const uint64_t e = v & exp_mask, sign = v & sign_mask;
      if (e > max_exp)
        v = sign | exp_mask; // infinity
      else if (e <= min_exp)
        v = sign; // zero
    }
    if (nan)
      v = *man_bits > 0 ? x.bits(i) | (uint64_t{1} << (src_man - 1)) : v;
    out.setBits(i, v);
  }
  return out;
}

} // namespace shardlab::interpreter::detail

namespace shardlab::interpreter::detail {

Result<Tensor> selectAndScatter(const Operation &op, const Operands &in,
                                Type result, const Combiner &select,
                                const Combiner &scatter) {
  const Tensor &x = *in[0], &source = *in[1], &init = *in[2];
  const size_t rank = size_t(x.rank());
  std::optional<std::vector<int64_t>> window =
      rules::intsAttr(op, "window_dimensions");
  if (!window || window->size() != rank)
    return opError(op, "window_dimensions missing");
  const std::vector<int64_t> strides = intsOrOnes(op, "window_strides", rank);
  Result<std::vector<int64_t>> low = lowPadding(op, rank);
  if (!low)
    return low.error();
  const std::vector<int64_t> &pad_low = *low;
  Tensor out = Tensor::zeros(result);
  for (int64_t i = 0; i < out.size(); ++i)
    copyElement(out, i, init, 0);
  const Type scalar = init.type();
  const std::vector<int64_t> xs = x.strides();
  std::vector<int64_t> at(rank, 0);
  for (int64_t s = 0; s < source.size(); ++s, nextIndex(at, source.shape())) {
    int64_t selected = -1;
    std::vector<int64_t> w(rank, 0);
    do { // the window's elements in index order; padding is never selected
      int64_t from = 0;
      bool inside = true;
      for (size_t d = 0; d < rank && inside; ++d) {
        const int64_t p = at[d] * strides[d] + w[d] - pad_low[d];
        inside = p >= 0 && p < x.shape()[d];
        from += p * xs[d];
      }
      if (!inside)
        continue;
      if (selected < 0) {
        selected = from;
        continue;
      }
      Result<std::vector<Tensor>> keep =
          select({scalarAt(x, selected, scalar), scalarAt(x, from, scalar)});
      if (!keep)
        return keep.error();
      if (keep->empty() || (*keep)[0].integer(0) == 0)
        selected = from;
    } while (nextIndex(w, *window));
    if (selected < 0)
      continue;
    Result<std::vector<Tensor>> sum =
        scatter({scalarAt(out, selected, scalar), scalarAt(source, s, scalar)});
    if (!sum)
      return sum.error();
    copyElement(out, selected, (*sum)[0], 0);
  }
  return out;
}

Result<std::vector<Tensor>> topK(const Operation &op, const Tensor &x,
                                 const std::vector<Type> &results) {
  const std::optional<int64_t> k = rules::intAttr(op, "k");
  if (!k || results.size() != 2 || x.rank() < 1)
    return opError(op, "expected k, and values and indices results");
  const int64_t n = x.shape().back();
  if (*k > n)
    return opError(op, "k is larger than the last dimension");
  Tensor values = Tensor::zeros(results[0]),
         indices = Tensor::zeros(results[1]);
  const int64_t rows = n ? x.size() / n : 0;
  // Larger first in the total order (NaN above +inf, +0 above -0); equal
  // elements keep their order.
  auto key = [&](int64_t i) -> double {
    if (x.isFloat())
      return double(totalOrderKey(x.bits(i), *x.layout().float_format));
    return x.layout().is_unsigned || x.layout().is_bool
               ? double(uint64_t(x.integer(i)))
               : double(x.integer(i));
  };
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return key(r * n + a) > key(r * n + b);
    });
    for (int64_t j = 0; j < *k; ++j) {
      copyElement(values, r * *k + j, x, r * n + order[size_t(j)]);
      indices.setInteger(r * *k + j, uint64_t(order[size_t(j)]));
    }
  }
  return std::vector<Tensor>{std::move(values), std::move(indices)};
}

} // namespace shardlab::interpreter::detail
