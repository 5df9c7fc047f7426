// FLOP rates from scattered GEMM measurements (rules in gemm_scattered.h).
#include "shardlab/cost/gemm_scattered.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace shardlab::cost {
namespace {

constexpr size_t kDims = 4;
constexpr double kHuberLog = 0.03; // residuals above 3% are down-weighted
constexpr int kHuberSteps = 3;
constexpr double kPointsPerTerm = 1.5;

std::array<double, kDims> log2Of(const GridPoint<4> &p) {
  std::array<double, kDims> out;
  for (size_t d = 0; d < kDims; ++d)
    out[d] = std::log2(double(p[d]));
  return out;
}

std::vector<int64_t> toVector(const GridPoint<4> &p) {
  return std::vector<int64_t>(p.begin(), p.end());
}

/// Solves a * x = b (n x n, row-major) by Gaussian elimination with partial
/// pivoting; false when the system is singular.
bool solve(std::vector<double> a, std::vector<double> &b, size_t n) {
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::fabs(a[r * n + col]) > std::fabs(a[pivot * n + col]))
        pivot = r;
    if (std::fabs(a[pivot * n + col]) < 1e-12)
      return false;
    if (pivot != col) {
      for (size_t c = 0; c < n; ++c)
        std::swap(a[col * n + c], a[pivot * n + c]);
      std::swap(b[col], b[pivot]);
    }
    for (size_t r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / a[col * n + col];
      for (size_t c = col; c < n; ++c)
        a[r * n + c] -= f * a[col * n + c];
      b[r] -= f * b[col];
    }
  }
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t c = i + 1; c < n; ++c)
      s -= a[i * n + c] * b[c];
    b[i] = s / a[i * n + i];
  }
  return true;
}

/// The regression terms of one point, relative to the query: 1, the linear
/// deltas of `linear` dims, the squares of `square` dims and, when `cross`,
/// the products of pairs of `linear` dims.
struct TermSet {
  std::vector<size_t> linear, square;
  bool cross = false;
  size_t size() const {
    const size_t l = linear.size();
    return 1 + l + square.size() + (cross ? l * (l - (l > 0)) / 2 : 0);
  }
  void row(const std::array<double, kDims> &delta,
           std::vector<double> &row) const {
    row.clear();
    row.push_back(1);
    for (size_t d : linear)
      row.push_back(delta[d]);
    for (size_t d : square)
      row.push_back(delta[d] * delta[d]);
    if (cross)
      for (size_t i = 0; i < linear.size(); ++i)
        for (size_t j = i + 1; j < linear.size(); ++j)
          row.push_back(delta[linear[i]] * delta[linear[j]]);
  }
};

/// Terms at `level` (3: full quadratic, 2: no cross terms, 1: linear, 0:
/// constant) for the dims that vary among the selected deltas.
TermSet termsFor(const std::vector<std::array<double, kDims>> &deltas,
                 int level) {
  TermSet t;
  for (size_t d = 0; d < kDims; ++d) {
    std::vector<double> values;
    for (const auto &delta : deltas)
      values.push_back(std::round(delta[d] * 1e6));
    std::sort(values.begin(), values.end());
    const size_t distinct =
        size_t(std::unique(values.begin(), values.end()) - values.begin());
    if (level >= 1 && distinct >= 2)
      t.linear.push_back(d);
    if (level >= 2 && distinct >= 3)
      t.square.push_back(d);
  }
  t.cross = level >= 3;
  return t;
}

/// Weighted least squares with Huber reweighting; the intercept (the value
/// at the query), or nothing when the system is singular.
std::optional<double>
fitIntercept(const std::vector<std::array<double, kDims>> &deltas,
             const std::vector<double> &y, const std::vector<double> &w0,
             const TermSet &terms, std::vector<double> &weights) {
  const size_t n = terms.size();
  weights = w0;
  std::vector<double> row, beta;
  for (int step = 0; step <= kHuberSteps; ++step) {
    std::vector<double> a(n * n, 0.0);
    beta.assign(n, 0.0);
    for (size_t i = 0; i < deltas.size(); ++i) {
      terms.row(deltas[i], row);
      for (size_t r = 0; r < n; ++r) {
        beta[r] += weights[i] * row[r] * y[i];
        for (size_t c = 0; c < n; ++c)
          a[r * n + c] += weights[i] * row[r] * row[c];
      }
    }
    if (!solve(a, beta, n))
      return std::nullopt;
    if (step == kHuberSteps)
      break;
    for (size_t i = 0; i < deltas.size(); ++i) {
      terms.row(deltas[i], row);
      double fitted = 0;
      for (size_t r = 0; r < n; ++r)
        fitted += beta[r] * row[r];
      const double residual = std::fabs(fitted - y[i]);
      weights[i] = w0[i] * (residual <= kHuberLog ? 1 : kHuberLog / residual);
    }
  }
  return beta[0];
}

} // namespace

ScatteredRates::ScatteredRates(const std::map<GridPoint<4>, double> &values) {
  for (const auto &[at, rate] : values) {
    if (!(rate > 0))
      continue;
    points_.push_back({at, log2Of(at), std::log(rate)});
    for (size_t d = 0; d < kDims; ++d)
      coords_[d].push_back(at[d]);
  }
  for (auto &c : coords_) {
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
}

GridPoint<4> ScatteredRates::clamp(const GridPoint<4> &query) const {
  GridPoint<4> q = query;
  for (size_t d = 0; d < kDims; ++d)
    if (!coords_[d].empty())
      q[d] = std::clamp(q[d], coords_[d].front(), coords_[d].back());
  return q;
}

const ScatteredRates::Point *ScatteredRates::find(const GridPoint<4> &p) const {
  auto it = std::lower_bound(
      points_.begin(), points_.end(), p,
      [](const Point &a, const GridPoint<4> &b) { return a.at < b; });
  return it != points_.end() && it->at == p ? &*it : nullptr;
}

bool ScatteredRates::multilinear(const GridPoint<4> &q,
                                 std::vector<Neighbour> *used,
                                 double *rate) const {
  std::array<int64_t, kDims> lo, hi;
  std::array<double, kDims> t;
  for (size_t d = 0; d < kDims; ++d) {
    const std::vector<int64_t> &c = coords_[d];
    auto up = std::lower_bound(c.begin(), c.end(), q[d]);
    hi[d] = *up;
    lo[d] = *up == q[d] ? *up : *(up - 1);
    t[d] = hi[d] == lo[d] ? 0.0
                          : std::log2(double(q[d]) / double(lo[d])) /
                                std::log2(double(hi[d]) / double(lo[d]));
  }
  double log_rate = 0;
  std::vector<Neighbour> corners;
  for (int mask = 0; mask < (1 << kDims); ++mask) {
    GridPoint<4> c;
    double w = 1;
    for (size_t d = 0; d < kDims; ++d) {
      const bool upper = (mask >> d) & 1;
      c[d] = upper ? hi[d] : lo[d];
      w *= upper ? t[d] : 1 - t[d];
    }
    if (w == 0)
      continue;
    const Point *p = find(c);
    if (!p)
      return false;
    log_rate += w * p->log_rate;
    corners.push_back({toVector(c), std::exp(p->log_rate), w});
  }
  *rate = std::exp(log_rate);
  if (used)
    used->insert(used->end(), corners.begin(), corners.end());
  return true;
}

Result<double> ScatteredRates::localFit(const GridPoint<4> &q,
                                        std::vector<Neighbour> *used) const {
  const std::array<double, kDims> lq = log2Of(q);
  double span = 1;
  for (size_t d = 0; d < kDims; ++d)
    span = std::max(span, std::log2(double(coords_[d].back())) -
                              std::log2(double(coords_[d].front())));
  std::vector<std::array<double, kDims>> deltas;
  std::vector<double> y, w0, weights;
  std::vector<const Point *> chosen;
  for (double radius = 1;; radius *= 2) {
    deltas.clear();
    y.clear();
    w0.clear();
    chosen.clear();
    for (const Point &p : points_) {
      std::array<double, kDims> delta;
      double far = 0, dist2 = 0;
      for (size_t d = 0; d < kDims; ++d) {
        delta[d] = p.log2_at[d] - lq[d];
        far = std::max(far, std::fabs(delta[d]));
        dist2 += delta[d] * delta[d];
      }
      if (far > radius + 1e-9)
        continue;
      deltas.push_back(delta);
      y.push_back(p.log_rate);
      w0.push_back(1 / std::pow(std::sqrt(dist2) + 0.5, 2));
      chosen.push_back(&p);
    }
    // Narrower neighbourhoods try the full quadratic only; the widest one
    // drops terms (cross, then squares, then slopes) until the points
    // suffice, first with 1.5 points per term, then with one.
    const bool widest = radius >= span;
    for (double per_term : {kPointsPerTerm, 1.0}) {
      for (int level = 3; level >= (widest ? 0 : 3); --level) {
        const TermSet terms = termsFor(deltas, level);
        if (double(deltas.size()) < per_term * double(terms.size()))
          continue;
        std::optional<double> fit = fitIntercept(deltas, y, w0, terms, weights);
        if (!fit)
          continue;
        const auto [low, high] = std::minmax_element(y.begin(), y.end());
        const double log_rate =
            std::clamp(*fit, *low - std::log(2.0), *high + std::log(2.0));
        if (used) {
          double total = 0;
          for (double w : weights)
            total += w;
          for (size_t i = 0; i < chosen.size(); ++i)
            used->push_back({toVector(chosen[i]->at),
                             std::exp(chosen[i]->log_rate),
                             weights[i] / total});
        }
        return std::exp(log_rate);
      }
      if (!widest)
        break;
    }
    if (widest)
      return makeError("no measured point to estimate from");
  }
}

Result<double> ScatteredRates::rate(const GridPoint<4> &query,
                                    std::vector<Neighbour> *used,
                                    std::string *how) const {
  if (points_.empty())
    return makeError("the table has no measured point for this dtype");
  const GridPoint<4> q = clamp(query);
  const char *clamped = q == query ? "" : " (query clamped to the table)";
  if (const Point *p = find(q)) {
    if (used)
      used->push_back({toVector(q), std::exp(p->log_rate), 1});
    if (how)
      *how = std::string("measured point") + clamped;
    return std::exp(p->log_rate);
  }
  double rate = 0;
  if (multilinear(q, used, &rate)) {
    if (how)
      *how = std::string("log-multilinear between the bracket's measured "
                         "corners") +
             clamped;
    return rate;
  }
  if (how)
    *how = std::string("local quadratic fit in log space (the bracket has "
                       "unmeasured corners)") +
           clamped;
  return localFit(q, used);
}

} // namespace shardlab::cost
