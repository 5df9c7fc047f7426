// dot_general: for every batch index and free index of each side, the sum
// over the contracting dimensions of the products, in contracting-index
// order. Floats accumulate as XLA's CPU backend does, which computed the
// test modules' expected values: each product and partial sum rounded to
// f32 for f16, bf16 and f32 results (f64 in double), the sum rounded once
// to the result type; integers wrap at their width.
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <complex>
#include <type_traits>

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

// The flat offsets of every index over `dims` of `shape` (row-major over
// those dims) with `strides`; `index_dims` names the dims the index runs
// over when they differ from the dims the strides are taken at (the rhs
// side of a contraction follows the lhs's order).
std::vector<int64_t> offsets(const std::vector<int64_t> &index_dims,
                             const std::vector<int64_t> &index_shape,
                             const std::vector<int64_t> &stride_dims,
                             const std::vector<int64_t> &strides) {
  std::vector<int64_t> out;
  std::vector<int64_t> index(index_dims.size(), 0);
  const int64_t n = count(index_dims, index_shape);
  out.reserve(size_t(n));
  for (int64_t i = 0; i < n; ++i, advance(index, index_dims, index_shape)) {
    int64_t at = 0;
    for (size_t k = 0; k < index.size(); ++k)
      at += index[k] * strides[size_t(stride_dims[k])];
    out.push_back(at);
  }
  return out;
}

// One element decoded in the form the accumulation reads.
template <class T> T element(const Tensor &t, int64_t i) {
  if constexpr (std::is_same_v<T, uint64_t>)
    return uint64_t(t.integer(i));
  else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return T(t.real(i));
  else
    return T(typename T::value_type(t.real(i)),
             typename T::value_type(t.imag(i)));
}

// One operand decoded once and laid out [batch][free][contracting], so
// that each output element reads two contiguous rows (a strided walk down
// a 4096-wide operand missed the cache at every step).
template <class T>
std::vector<T> packed(const Tensor &t, const std::vector<int64_t> &batch,
                      const std::vector<int64_t> &free,
                      const std::vector<int64_t> &contracting) {
  std::vector<T> out;
  out.reserve(batch.size() * free.size() * contracting.size());
  for (int64_t b : batch)
    for (int64_t f : free)
      for (int64_t k : contracting)
        out.push_back(element<T>(t, b + f + k));
  return out;
}

// The sum of a[k] * b[k] over k, in k order. Float accumulation (T =
// float, complex<float>) rounds each product and partial sum to f32;
// double and integer types accumulate in their width.
template <class T> T contract(const T *a, const T *b, size_t count) {
  T sum{};
  for (size_t k = 0; k < count; ++k) {
    const T product = a[k] * b[k];
    sum = sum + product;
  }
  return sum;
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
  // The op's types are trusted everywhere else; a dot's are checked, as
  // its loops index both operands by the other's sizes.
  if (dims.lhs_contracting.size() != dims.rhs_contracting.size() ||
      dims.lhs_batching.size() != dims.rhs_batching.size())
    return opError(op, "dimension numbers do not pair up");
  for (auto [l, r] : {std::pair{&dims.lhs_contracting, &dims.rhs_contracting},
                      {&dims.lhs_batching, &dims.rhs_batching}})
    for (size_t k = 0; k < l->size(); ++k)
      if ((*l)[k] < 0 || (*l)[k] >= lhs.rank() || (*r)[k] < 0 ||
          (*r)[k] >= rhs.rank() ||
          lhs.shape()[size_t((*l)[k])] != rhs.shape()[size_t((*r)[k])])
        return opError(op, "operand sizes do not agree along paired "
                           "dimensions");
  const std::vector<int64_t> lfree =
      freeDims(lhs.rank(), dims.lhs_batching, dims.lhs_contracting);
  const std::vector<int64_t> rfree =
      freeDims(rhs.rank(), dims.rhs_batching, dims.rhs_contracting);
  if (count(dims.lhs_batching, lhs.shape()) * count(lfree, lhs.shape()) *
          count(rfree, rhs.shape()) !=
      result->numElements())
    return opError(op, "result type does not match the operands");
  Tensor out = Tensor::zeros(result);
  const std::vector<int64_t> ls = lhs.strides(), rs = rhs.strides();
  const std::vector<int64_t> &lshape = lhs.shape(), &rshape = rhs.shape();
  const std::vector<int64_t> batch_l =
      offsets(dims.lhs_batching, lshape, dims.lhs_batching, ls);
  const std::vector<int64_t> batch_r =
      offsets(dims.lhs_batching, lshape, dims.rhs_batching, rs);
  const std::vector<int64_t> free_l = offsets(lfree, lshape, lfree, ls);
  const std::vector<int64_t> free_r = offsets(rfree, rshape, rfree, rs);
  const std::vector<int64_t> lk =
      offsets(dims.lhs_contracting, lshape, dims.lhs_contracting, ls);
  const std::vector<int64_t> rk =
      offsets(dims.lhs_contracting, lshape, dims.rhs_contracting, rs);
  // Every output element, in row-major order: batch, lhs free, rhs free.
  const size_t kcount = lk.size();
  // Every output element, in row-major order (batch, lhs free, rhs free),
  // with the sum over its two packed rows.
  auto each = [&](const auto &a, const auto &b, auto &&store) {
    int64_t flat = 0;
    for (size_t bi = 0; bi < batch_l.size(); ++bi)
      for (size_t l = 0; l < free_l.size(); ++l)
        for (size_t r = 0; r < free_r.size(); ++r)
          store(flat++,
                contract(a.data() + (bi * free_l.size() + l) * kcount,
                         b.data() + (bi * free_r.size() + r) * kcount, kcount));
  };
  auto run = [&](auto zero, auto &&store) {
    using T = decltype(zero);
    each(packed<T>(lhs, batch_l, free_l, lk),
         packed<T>(rhs, batch_r, free_r, rk), store);
  };
  // f64 (and complex<f64>) results accumulate in double; the rest in f32.
  const bool wide = out.layout().part_bits >= 64;
  const bool complex = lhs.isComplex() || rhs.isComplex();
  if (out.isInteger()) {
    const bool is_bool = out.layout().is_bool;
    run(uint64_t{}, [&](int64_t flat, uint64_t sum) {
      out.setInteger(flat, is_bool ? uint64_t(sum != 0) : sum);
    });
  } else if (complex) {
    auto store = [&](int64_t flat, auto sum) {
      out.setReal(flat, double(sum.real()));
      out.setImag(flat, double(sum.imag()));
    };
    wide ? run(std::complex<double>{}, store)
         : run(std::complex<float>{}, store);
  } else {
    auto store = [&](int64_t flat, auto sum) {
      out.setReal(flat, double(sum));
    };
    wide ? run(double{}, store) : run(float{}, store);
  }
  return out;
}

} // namespace shardlab::interpreter::detail
