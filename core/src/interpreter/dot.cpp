// dot_general: for every batch index and free index of each side, the sum
// over the contracting dimensions of the products, in contracting-index
// order. Floats accumulate as XLA's CPU backend does, which computed the
// test modules' expected values: each product and partial sum rounded to
// f32 for f16, bf16 and f32 results (f64 in double), the sum rounded once
// to the result type; integers wrap at their width.
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <complex>

namespace shardlab::interpreter::detail {
namespace {

std::vector<int64_t> freeDims(int64_t rank, const std::vector<int64_t> &batch,
                              const std::vector<int64_t> &contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) ==
            contracting.end())
      free.push_back(d);
  return free;
}

// Index vector over the listed dims of `shape`, advanced row-major.
bool advance(std::vector<int64_t> &index, const std::vector<int64_t> &dims,
             const std::vector<int64_t> &shape) {
  for (size_t k = dims.size(); k-- > 0;) {
    if (++index[k] < shape[size_t(dims[k])])
      return true;
    index[k] = 0;
  }
  return false;
}

int64_t count(const std::vector<int64_t> &dims,
              const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= shape[size_t(d)];
  return n;
}

// sum + lhs[la] * rhs[ra] with every product and sum rounded to f32.
std::complex<float> accumulate(std::complex<double> sum, const Tensor &lhs,
                               int64_t la, const Tensor &rhs, int64_t ra) {
  const std::complex<float> a(float(lhs.real(la)), float(lhs.imag(la)));
  const std::complex<float> b(float(rhs.real(ra)), float(rhs.imag(ra)));
  const std::complex<float> s(float(sum.real()), float(sum.imag()));
  if (a.imag() == 0 && b.imag() == 0 && s.imag() == 0)
    return {s.real() + a.real() * b.real(), 0.0f};
  return s + a * b;
}

} // namespace

Result<Tensor> dotGeneral(const Operation &op, const Operands &in,
                          Type result) {
  const Tensor &lhs = *in[0], &rhs = *in[1];
  rules::DotDims dims;
  if (op.is("stablehlo.dot")) {
    dims.lhs_contracting = {lhs.rank() - 1};
    dims.rhs_contracting = {0};
  } else {
    const Attr *attr = rules::findAttr(op, "dot_dimension_numbers");
    std::optional<rules::DotDims> read =
        attr ? rules::dotDims(*attr) : std::nullopt;
    if (!read)
      return opError(op, "dot_dimension_numbers missing");
    dims = *read;
  }
  const std::vector<int64_t> lfree =
      freeDims(lhs.rank(), dims.lhs_batching, dims.lhs_contracting);
  const std::vector<int64_t> rfree =
      freeDims(rhs.rank(), dims.rhs_batching, dims.rhs_contracting);
  Tensor out = Tensor::zeros(result);
  const std::vector<int64_t> ls = lhs.strides(), rs = rhs.strides();
  const int64_t batches = count(dims.lhs_batching, lhs.shape());
  const int64_t lcount = count(lfree, lhs.shape());
  const int64_t rcount = count(rfree, rhs.shape());
  const int64_t kcount = count(dims.lhs_contracting, lhs.shape());
  // f64 (and complex<f64>) results accumulate in double; the rest in f32.
  const bool wide = out.layout().part_bits >= 64;
  std::vector<int64_t> b(dims.lhs_batching.size(), 0);
  int64_t flat = 0;
  for (int64_t bi = 0; bi < batches;
       ++bi, advance(b, dims.lhs_batching, lhs.shape())) {
    int64_t lbase = 0, rbase = 0;
    for (size_t k = 0; k < b.size(); ++k) {
      lbase += b[k] * ls[size_t(dims.lhs_batching[k])];
      rbase += b[k] * rs[size_t(dims.rhs_batching[k])];
    }
    std::vector<int64_t> li(lfree.size(), 0);
    for (int64_t l = 0; l < lcount; ++l, advance(li, lfree, lhs.shape())) {
      int64_t loff = lbase;
      for (size_t k = 0; k < li.size(); ++k)
        loff += li[k] * ls[size_t(lfree[k])];
      std::vector<int64_t> ri(rfree.size(), 0);
      for (int64_t r = 0; r < rcount;
           ++r, ++flat, advance(ri, rfree, rhs.shape())) {
        int64_t roff = rbase;
        for (size_t k = 0; k < ri.size(); ++k)
          roff += ri[k] * rs[size_t(rfree[k])];
        std::complex<double> sum = 0;
        uint64_t isum = 0;
        std::vector<int64_t> c(dims.lhs_contracting.size(), 0);
        for (int64_t k = 0; k < kcount;
             ++k, advance(c, dims.lhs_contracting, lhs.shape())) {
          int64_t la = loff, ra = roff;
          for (size_t j = 0; j < c.size(); ++j) {
            la += c[j] * ls[size_t(dims.lhs_contracting[j])];
            ra += c[j] * rs[size_t(dims.rhs_contracting[j])];
          }
          if (out.isInteger())
            isum += uint64_t(lhs.integer(la)) * uint64_t(rhs.integer(ra));
          else if (wide)
            sum += std::complex<double>(lhs.real(la), lhs.imag(la)) *
                   std::complex<double>(rhs.real(ra), rhs.imag(ra));
          else
            sum = std::complex<double>(accumulate(sum, lhs, la, rhs, ra));
        }
        if (out.isInteger()) {
          out.setInteger(flat,
                         out.layout().is_bool ? uint64_t(isum != 0) : isum);
        } else {
          out.setReal(flat, sum.real());
          out.setImag(flat, sum.imag());
        }
      }
    }
  }
  return out;
}

} // namespace shardlab::interpreter::detail
