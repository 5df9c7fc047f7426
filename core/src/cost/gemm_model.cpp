// XLA's matmul interpolator over GEMM performance tables.
#include "shardlab/cost/gemm_model.h"

#include <algorithm>
#include <cmath>

namespace shardlab::cost {
namespace {

bool contains(const std::vector<int64_t> &v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

Result<int64_t> productOf(const std::vector<int64_t> &shape,
                          const std::vector<int64_t> &dims, const char *what) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0 || d >= int64_t(shape.size()) || shape[d] < 0)
      return makeError(std::string("gemm: ") + what + " dimension " +
                       std::to_string(d) + " is out of range");
    p *= shape[d];
  }
  return p;
}

Result<int64_t> freeProduct(const std::vector<int64_t> &shape,
                            const std::vector<int64_t> &batch,
                            const std::vector<int64_t> &contracting) {
  int64_t p = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0)
      return makeError("gemm: dynamic or negative dimension");
    if (!contains(batch, d) && !contains(contracting, d))
      p *= shape[d];
  }
  return p;
}

} // namespace

Result<GemmDims> extractGemmDims(const std::vector<int64_t> &lhs_shape,
                                 const std::vector<int64_t> &rhs_shape,
                                 const std::vector<int64_t> &lhs_batch,
                                 const std::vector<int64_t> &lhs_contracting,
                                 const std::vector<int64_t> &rhs_batch,
                                 const std::vector<int64_t> &rhs_contracting) {
  Result<int64_t> b = productOf(lhs_shape, lhs_batch, "lhs batch");
  Result<int64_t> k = productOf(lhs_shape, lhs_contracting, "lhs contracting");
  Result<int64_t> rb = productOf(rhs_shape, rhs_batch, "rhs batch");
  Result<int64_t> rk = productOf(rhs_shape, rhs_contracting, "rhs contracting");
  for (const Result<int64_t> *r : {&b, &k, &rb, &rk})
    if (!*r)
      return r->error();
  Result<int64_t> m = freeProduct(lhs_shape, lhs_batch, lhs_contracting);
  Result<int64_t> n = freeProduct(rhs_shape, rhs_batch, rhs_contracting);
  if (!m || !n)
    return !m ? m.error() : n.error();
  if (*b != *rb || *k != *rk)
    return makeError("gemm: lhs and rhs batch/contracting sizes differ");
  return GemmDims{*b, *m, *k, *n};
}

int64_t runtimeNsFromClockCycles(int64_t clock_cycles, float clock_ghz) {
  return static_cast<int64_t>(static_cast<float>(clock_cycles) / clock_ghz);
}

int64_t clockCyclesFromRuntimeNs(int64_t runtime_ns, float clock_ghz) {
  return static_cast<int64_t>(static_cast<float>(runtime_ns) * clock_ghz);
}

MatmulInterpolator::MatmulInterpolator(const MatmulOptions &options)
    : options_(options) {}

} // namespace shardlab::cost
