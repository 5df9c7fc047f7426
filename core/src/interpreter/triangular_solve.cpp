// stablehlo.triangular_solve: for each batch, solves op(a) x = b
// (left_side) or x op(a) = b, where a is read as its lower or upper
// triangle (the other one ignored, the diagonal taken as ones when
// unit_diagonal) and op is identity, transpose or adjoint. By substitution,
// row by row, accumulated in double and rounded once to the element type.
//
//   a = [[2, 0], [1, 1]] (lower), b = [[2], [3]]  ->  x = [[1], [2]]
#include "indexing.h"
#include "ops.h"

#include "ir/op_properties.h"
#include "rules/stablehlo_attrs.h"

#include <complex>

namespace shardlab::interpreter::detail {
namespace {

using cplx = std::complex<double>;

struct SolveForm {
  bool left = true;
  bool lower = true;
  bool unit = false;
  std::string_view transpose = "NO_TRANSPOSE";
};

// op(tri(a)) of one batch as a full m x m matrix, row-major.
std::vector<cplx> operatorMatrix(const Tensor &a, int64_t base, int64_t m,
                                 const SolveForm &form) {
  std::vector<cplx> t(size_t(m * m), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) {
      const bool kept = form.lower ? j <= i : j >= i;
      if (!kept)
        continue;
      const int64_t at = base + i * m + j;
      cplx v = i == j && form.unit ? cplx(1) : cplx(a.real(at), a.imag(at));
      if (form.transpose == "NO_TRANSPOSE")
        t[size_t(i * m + j)] = v;
      else
        t[size_t(j * m + i)] = form.transpose == "ADJOINT" ? std::conj(v) : v;
    }
  return t;
}

// Solves t y = c for y (t triangular, lower or upper), c with `cols`
// columns, all row-major; in place in c.
void substitute(const std::vector<cplx> &t, std::vector<cplx> &c, int64_t m,
                int64_t cols, bool lower) {
  for (int64_t step = 0; step < m; ++step) {
    const int64_t i = lower ? step : m - 1 - step;
    for (int64_t col = 0; col < cols; ++col) {
      cplx sum = c[size_t(i * cols + col)];
      for (int64_t k = 0; k < m; ++k)
        if (k != i && (lower ? k < i : k > i))
          sum -= t[size_t(i * m + k)] * c[size_t(k * cols + col)];
      c[size_t(i * cols + col)] = sum / t[size_t(i * m + i)];
    }
  }
}

} // namespace

Result<Tensor> triangularSolve(const Operation &op, const Tensor &a,
                               const Tensor &b, Type result) {
  SolveForm form;
  form.left = rules::boolAttr(op, "left_side", true);
  form.lower = rules::boolAttr(op, "lower", true);
  form.unit = rules::boolAttr(op, "unit_diagonal", false);
  if (std::optional<std::string_view> t =
          stablehloEnum(rules::findAttr(op, "transpose_a"), "transpose"))
    form.transpose = *t;
  if (a.rank() < 2 || b.rank() != a.rank() || a.isInteger())
    return opError(op, "expects float or complex a and b of the same rank");
  const int64_t m = a.shape().back();
  const int64_t rows = b.shape()[size_t(b.rank() - 2)];
  const int64_t cols = b.shape().back();
  if ((form.left ? rows : cols) != m)
    return opError(op, "b does not match a");
  // op(tri(a)) is lower when tri(a) is lower and not transposed, or upper
  // and transposed.
  const bool lower_op = form.lower == (form.transpose == "NO_TRANSPOSE");
  Tensor out = Tensor::zeros(result);
  const int64_t batches = a.size() / (m * m);
  for (int64_t batch = 0; batch < batches; ++batch) {
    const std::vector<cplx> t = operatorMatrix(a, batch * m * m, m, form);
    // x t = b  <=>  t^T x^T = b^T: solve with t transposed on b^T.
    std::vector<cplx> c(size_t(rows * cols));
    const int64_t bbase = batch * rows * cols;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k) {
        const int64_t at = bbase + r * cols + k;
        c[size_t(form.left ? r * cols + k : k * rows + r)] =
            cplx(b.real(at), b.imag(at));
      }
    if (form.left) {
      substitute(t, c, m, cols, lower_op);
    } else {
      std::vector<cplx> tt(t.size());
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j)
          tt[size_t(j * m + i)] = t[size_t(i * m + j)];
      substitute(tt, c, m, rows, !lower_op);
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k) {
        const cplx v = c[size_t(form.left ? r * cols + k : k * rows + r)];
        out.setReal(bbase + r * cols + k, v.real());
        if (out.isComplex())
          out.setImag(bbase + r * cols + k, v.imag());
      }
  }
  return out;
}

} // namespace shardlab::interpreter::detail
