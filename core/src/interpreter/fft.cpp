// stablehlo.fft: discrete Fourier transforms over the trailing
// len(fft_length) dimensions, one dimension at a time (the transform is
// separable), each a direct O(n^2) sum in double. FFT and IFFT are complex
// to complex (IFFT scaled by 1/n); RFFT takes real input and keeps the
// n/2 + 1 non-redundant outputs of the last dimension; IRFFT is its
// inverse, real output of length fft_length.back().
#include "indexing.h"
#include "ops.h"

#include "ir/op_properties.h"
#include "rules/stablehlo_attrs.h"

#include <cmath>
#include <complex>

namespace shardlab::interpreter::detail {
namespace {

using cplx = std::complex<double>;
constexpr double kTwoPi = 6.283185307179586476925286766559;

// A dense complex array with a shape, for the per-dimension passes.
struct Grid {
  std::vector<int64_t> shape;
  std::vector<cplx> v;
};

// One DFT along `dim`: `out_len` outputs from `in_len` inputs (inputs past
// the grid's length along dim are zeros).
Grid transform(const Grid &in, size_t dim, int64_t in_len, int64_t out_len,
               int64_t n, bool inverse) {
  Grid out;
  out.shape = in.shape;
  out.shape[dim] = out_len;
  int64_t total = 1;
  for (int64_t d : out.shape)
    total *= d;
  out.v.assign(size_t(total), 0);
  const std::vector<int64_t> is = stridesOf(in.shape),
                             os = stridesOf(out.shape);
  const double sign = inverse ? 1 : -1;
  std::vector<int64_t> at(out.shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t base = 0;
    for (size_t d = 0; d < at.size(); ++d)
      if (d != dim)
        base += at[d] * is[d];
    cplx sum = 0;
    const int64_t k = at[dim];
    for (int64_t j = 0; j < std::min(in_len, in.shape[dim]); ++j)
      sum += in.v[size_t(base + j * is[dim])] *
             std::polar(1.0, sign * kTwoPi * double((j * k) % n) / double(n));
    out.v[size_t(flat)] = inverse ? sum / double(n) : sum;
    nextIndex(at, out.shape);
  }
  return out;
}

} // namespace

Result<Tensor> fft(const Operation &op, const Tensor &x, Type result) {
  const std::optional<std::string_view> type =
      stablehloEnum(rules::findAttr(op, "fft_type"), "fft_type");
  std::optional<std::vector<int64_t>> lengths =
      rules::intsAttr(op, "fft_length");
  if (!type || !lengths || lengths->empty() ||
      lengths->size() > size_t(x.rank()))
    return opError(op, "fft_type or fft_length missing");
  Tensor out = Tensor::zeros(result);
  if (out.size() == 0)
    return out;
  Grid g{x.shape(), {}};
  for (int64_t i = 0; i < x.size(); ++i)
    g.v.push_back({x.real(i), x.imag(i)});
  const size_t first = size_t(x.rank()) - lengths->size();
  const bool inverse = *type == "IFFT" || *type == "IRFFT";
  // IRFFT: the last dimension first, from n/2 + 1 inputs, rebuilding the
  // redundant half by conjugate symmetry; then the others as IFFT.
  const size_t last = size_t(x.rank()) - 1;
  if (*type == "IRFFT") {
    const int64_t n = lengths->back();
    Grid full = g;
    full.shape[last] = n;
    std::vector<int64_t> fs = stridesOf(full.shape), gs = stridesOf(g.shape);
    int64_t total = 1;
    for (int64_t d : full.shape)
      total *= d;
    full.v.assign(size_t(total), 0);
    std::vector<int64_t> at(full.shape.size(), 0);
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t base = 0;
      for (size_t d = 0; d < last; ++d)
        base += at[d] * gs[d];
      const int64_t k = at[last];
      const int64_t half = g.shape[last];
      full.v[size_t(flat)] = k < half ? g.v[size_t(base + k)]
                                      : std::conj(g.v[size_t(base + n - k)]);
      nextIndex(at, full.shape);
    }
    g = std::move(full);
  }
  for (size_t d = first; d < size_t(x.rank()); ++d) {
    const int64_t n = (*lengths)[d - first];
    const int64_t out_len = *type == "RFFT" && d == last ? n / 2 + 1 : n;
    g = transform(g, d, n, out_len, n, inverse);
  }
  for (int64_t i = 0; i < out.size(); ++i) {
    out.setReal(i, g.v[size_t(i)].real());
    out.setImag(i, g.v[size_t(i)].imag());
  }
  return out;
}

} // namespace shardlab::interpreter::detail
