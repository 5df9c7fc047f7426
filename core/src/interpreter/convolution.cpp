// stablehlo.convolution, output element by output element: the sum over
// the kernel's spatial positions and the input features of its group of
// input x kernel, where an input position that falls on padding or on a
// hole of the input dilation contributes nothing. Feature groups split the
// input and output features; batch groups split the input batch among the
// output features. Accumulated as dot_general is (f32 steps below f64).
#include "indexing.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <complex>

namespace shardlab::interpreter::detail {
Result<Tensor> convolution(const Operation &op, const Operands &in,
                           Type result) {
  const Attr *attr = rules::findAttr(op, "dimension_numbers");
  std::optional<rules::ConvDims> dims = attr && attr->kind == AttrKind::Opaque
                                            ? rules::parseConvDims(attr->text)
                                            : std::nullopt;
  if (!dims)
    return opError(op, "dimension_numbers unreadable");
  const Tensor &x = *in[0], &w = *in[1];
  Tensor out = Tensor::zeros(result);
  const size_t n = dims->input_spatial.size();
  const std::vector<int64_t> stride = intsOrOnes(op, "window_strides", n);
  const std::vector<int64_t> lhs_dil = intsOrOnes(op, "lhs_dilation", n);
  const std::vector<int64_t> rhs_dil = intsOrOnes(op, "rhs_dilation", n);
  Result<std::vector<int64_t>> low = lowPadding(op, n);
  if (!low)
    return low.error();
  const std::vector<int64_t> &pad_low = *low;
  if (const Attr *reversal = rules::findAttr(op, "window_reversal"))
    if (reversal->kind == AttrKind::DenseArray)
      for (int64_t r : reversal->ints())
        if (r)
          return opError(op, "window_reversal is not run by the interpreter");
  const int64_t groups = rules::intAttr(op, "feature_group_count").value_or(1);
  const int64_t batch_groups =
      rules::intAttr(op, "batch_group_count").value_or(1);
  const std::vector<int64_t> xs = x.strides(), ws = w.strides();
  const int64_t in_features = w.shape()[size_t(dims->kernel_input_feature)];
  const int64_t out_features = out.shape()[size_t(dims->output_feature)];
  const int64_t out_batch = out.shape()[size_t(dims->output_batch)];
  std::vector<int64_t> kernel_window;
  for (int64_t d : dims->kernel_spatial)
    kernel_window.push_back(w.shape()[size_t(d)]);
  const bool wide = out.layout().part_bits >= 64;
  std::vector<int64_t> at(size_t(out.rank()), 0);
  for (int64_t flat = 0; flat < out.size();
       ++flat, nextIndex(at, out.shape())) {
    const int64_t f = at[size_t(dims->output_feature)];
    const int64_t b = at[size_t(dims->output_batch)];
    const int64_t group = f / (out_features / groups);
    const int64_t batch = b + (f / (out_features / batch_groups)) * out_batch;
    std::complex<double> sum = 0;
    std::complex<float> fsum = 0;
    uint64_t isum = 0;
    std::vector<int64_t> k(n, 0);
    do {
      int64_t xbase = batch * xs[size_t(dims->input_batch)];
      bool inside = true;
      for (size_t s = 0; s < n && inside; ++s) {
        const int64_t p = at[size_t(dims->output_spatial[s])] * stride[s] +
                          k[s] * rhs_dil[s] - pad_low[s];
        const int64_t q = p / lhs_dil[s];
        inside = p >= 0 && p % lhs_dil[s] == 0 &&
                 q < x.shape()[size_t(dims->input_spatial[s])];
        xbase += q * xs[size_t(dims->input_spatial[s])];
      }
      if (!inside)
        continue;
      int64_t wbase = f * ws[size_t(dims->kernel_output_feature)];
      for (size_t s = 0; s < n; ++s)
        wbase += k[s] * ws[size_t(dims->kernel_spatial[s])];
      for (int64_t c = 0; c < in_features; ++c) {
        const int64_t xi =
            xbase + (group * in_features + c) * xs[size_t(dims->input_feature)];
        const int64_t wi = wbase + c * ws[size_t(dims->kernel_input_feature)];
        if (out.isInteger())
          isum += uint64_t(x.integer(xi)) * uint64_t(w.integer(wi));
        else if (wide)
          sum += std::complex<double>(x.real(xi), x.imag(xi)) *
                 std::complex<double>(w.real(wi), w.imag(wi));
        else
          fsum += std::complex<float>(float(x.real(xi)), float(x.imag(xi))) *
                  std::complex<float>(float(w.real(wi)), float(w.imag(wi)));
      }
    } while (nextIndex(k, kernel_window));
    if (out.isInteger()) {
      out.setInteger(flat, isum);
    } else {
      out.setReal(flat, wide ? sum.real() : fsum.real());
      out.setImag(flat, wide ? sum.imag() : fsum.imag());
    }
  }
  return out;
}

} // namespace shardlab::interpreter::detail
