// cuDNN's fused attention (`__cudnn$fmhaSoftmax`, `...Backward`) as the
// interpreter runs it: the attention the call fuses, written out, so that
// a rewrite of it (shardlab-context-ring's ring) can be run against it.
//
// Layout (JAX's BTNH, as the cost model reads it): q [B, T, N, D], k and v
// [B, S, Nkv, D], query head h reading key head h / (N / Nkv); the scale
// is the backend_config's "fmha_scale", else 1/sqrt(D); mask_type CAUSAL
// hides key s from query t where s > t. Per batch b and head h, with
// x[t, s] = scale q_t . k_s:
//   forward:  l_t = log sum_s exp x[t, s]   (the statistics, [B, N, T])
//             o_t = sum_s exp(x[t, s] - l_t) v_s
//   backward (q, k, v, l, dO, o): p = exp(x - l), delta_t = dO_t . o_t,
//             dv_s = sum_t p dO_t, ds = p (dO_t . v_s - delta_t),
//             dq_t = scale sum_s ds k_s, dk_s = scale sum_t ds q_t
// (dk and dv summed over the query heads that share a key head). Sums in
// double, rounded once to the element type. The workspace result is zeros.
#include "ops.h"

#include "ir/op_properties.h"

#include <cmath>
#include <limits>
#include <string>

namespace shardlab::interpreter::detail {
namespace {

struct Attention {
  int64_t b = 0, t = 0, n = 0, d = 0, s = 0, nkv = 0;
  double scale = 1;
  bool causal = false;
  // Element offsets: [B, T, N, D] for q-like, [B, S, Nkv, D] for k-like,
  // [B, N, T] for the statistics.
  int64_t q(int64_t bi, int64_t ti, int64_t h) const {
    return ((bi * t + ti) * n + h) * d;
  }
  int64_t k(int64_t bi, int64_t si, int64_t h) const {
    return ((bi * s + si) * nkv + h / (n / nkv)) * d;
  }
  int64_t stat(int64_t bi, int64_t h, int64_t ti) const {
    return (bi * n + h) * t + ti;
  }
  bool hidden(int64_t ti, int64_t si) const { return causal && si > ti; }
};

double dotRow(const Tensor &a, int64_t at, const Tensor &b, int64_t bt,
              int64_t d) {
  double sum = 0;
  for (int64_t i = 0; i < d; ++i)
    sum += a.real(at + i) * b.real(bt + i);
  return sum;
}

Result<Attention> readShapes(const Operation &op, const Operands &in) {
  if (in.size() < 3 || in[0]->rank() != 4 || in[1]->rank() != 4 ||
      in[2]->rank() != 4)
    return makeError("q, k and v must be [B, T, N, D] and [B, S, Nkv, D]");
  Attention a;
  a.b = in[0]->shape()[0];
  a.t = in[0]->shape()[1];
  a.n = in[0]->shape()[2];
  a.d = in[0]->shape()[3];
  a.s = in[1]->shape()[1];
  a.nkv = in[1]->shape()[2];
  if (a.nkv <= 0 || a.n % a.nkv != 0 || in[1]->shape()[3] != a.d ||
      in[1]->shape() != in[2]->shape() || in[1]->shape()[0] != a.b)
    return makeError("k and v do not match q's batch, heads or head size");
  a.scale = backendConfigNumber(op, {"cudnn_fmha_backend_config", "fmha_scale"})
                .value_or(1.0 / std::sqrt(double(a.d)));
  a.causal = isCausalAttention(op);
  return a;
}

// Query t's scores over the keys, x[s] (-inf where the mask hides key s),
// into `x`; returns their log-sum-exp.
double scoreRow(const Attention &a, const Tensor &q, const Tensor &k,
                int64_t bi, int64_t h, int64_t ti, std::vector<double> &x) {
  double top = -std::numeric_limits<double>::infinity();
  x.assign(size_t(a.s), top);
  for (int64_t si = 0; si < a.s; ++si) {
    if (!a.hidden(ti, si))
      x[size_t(si)] =
          a.scale * dotRow(q, a.q(bi, ti, h), k, a.k(bi, si, h), a.d);
    top = std::max(top, x[size_t(si)]);
  }
  double sum = 0;
  for (double v : x)
    sum += std::isinf(v) ? 0 : std::exp(v - top);
  return top + std::log(sum);
}

std::vector<Tensor> forward(const Attention &a, const Operands &in,
                            const std::vector<Type> &types) {
  const Tensor &q = *in[0], &k = *in[1], &v = *in[2];
  std::vector<Tensor> out;
  for (Type t : types)
    out.push_back(Tensor::zeros(t));
  std::vector<double> x, o;
  for (int64_t bi = 0; bi < a.b; ++bi)
    for (int64_t h = 0; h < a.n; ++h)
      for (int64_t ti = 0; ti < a.t; ++ti) {
        const double l = scoreRow(a, q, k, bi, h, ti, x);
        if (out.size() > 1)
          out[1].setReal(a.stat(bi, h, ti), l);
        o.assign(size_t(a.d), 0);
        for (int64_t si = 0; si < a.s; ++si) {
          if (a.hidden(ti, si))
            continue;
          const double p = std::exp(x[size_t(si)] - l);
          for (int64_t i = 0; i < a.d; ++i)
            o[size_t(i)] += p * v.real(a.k(bi, si, h) + i);
        }
        for (int64_t i = 0; i < a.d; ++i)
          out[0].setReal(a.q(bi, ti, h) + i, o[size_t(i)]);
      }
  return out;
}

std::vector<Tensor> backward(const Attention &a, const Operands &in,
                             const std::vector<Type> &types) {
  const Tensor &q = *in[0], &k = *in[1], &v = *in[2], &l = *in[3],
               &dout = *in[4], &o = *in[5];
  std::vector<double> dq(size_t(q.size()), 0), dk(size_t(k.size()), 0),
      dv(size_t(v.size()), 0);
  for (int64_t bi = 0; bi < a.b; ++bi)
    for (int64_t h = 0; h < a.n; ++h)
      for (int64_t ti = 0; ti < a.t; ++ti) {
        const int64_t qt = a.q(bi, ti, h);
        const double lt = l.real(a.stat(bi, h, ti));
        const double delta = dotRow(dout, qt, o, qt, a.d);
        for (int64_t si = 0; si < a.s; ++si) {
          if (a.hidden(ti, si))
            continue;
          const int64_t ks = a.k(bi, si, h);
          const double p = std::exp(a.scale * dotRow(q, qt, k, ks, a.d) - lt);
          const double ds = p * (dotRow(dout, qt, v, ks, a.d) - delta);
          for (int64_t i = 0; i < a.d; ++i) {
            dv[size_t(ks + i)] += p * dout.real(qt + i);
            dq[size_t(qt + i)] += a.scale * ds * k.real(ks + i);
            dk[size_t(ks + i)] += a.scale * ds * q.real(qt + i);
          }
        }
      }
  std::vector<Tensor> out;
  for (Type t : types)
    out.push_back(Tensor::zeros(t));
  const std::vector<double> *grads[] = {&dq, &dk, &dv};
  for (size_t r = 0; r < 3 && r < out.size(); ++r)
    for (int64_t i = 0; i < out[r].size(); ++i)
      out[r].setReal(i, (*grads[r])[size_t(i)]);
  return out;
}

} // namespace

Result<std::vector<Tensor>> fusedAttention(const Operation &op,
                                           const Operands &in,
                                           const std::vector<Type> &types) {
  Result<Attention> a = readShapes(op, in);
  if (!a)
    return a.error();
  if (isFusedAttentionBackward(op)) {
    if (in.size() != 6 || types.size() < 3)
      return makeError("the backward reads q, k, v, the statistics, dO and o "
                       "and returns dq, dk and dv");
    return backward(*a, in, types);
  }
  if (in.size() != 3 || types.size() < 2)
    return makeError(
        "the forward reads q, k and v and returns o and the statistics");
  return forward(*a, in, types);
}

} // namespace shardlab::interpreter::detail
