// Building and querying the matmul interpolator's three lookup paths.
#include "shardlab/cost/gemm_model.h"

#include <algorithm>
#include <cmath>

namespace shardlab::cost {
namespace {

const char *const kBf16Key = "bf16xbf16->bf16";

GridContext<4> Context(int64_t min_dim, int64_t max_dim) {
  GridContext<4> c;
  c.next_step = {-1, -1, -1, -1};
  c.next_pow2 = {1, 1, 1, 1};
  c.min = {1, min_dim, min_dim, min_dim};
  c.max = {4, max_dim, max_dim, max_dim};
  return c;
}

double flops(const GridPoint<4> &p) {
  return 2.0 * double(p[0]) * double(p[1]) * double(p[2]) * double(p[3]);
}

/// Each point once (clamped corners coincide: their weights are added),
/// weights as shares of the total.
std::vector<Neighbour> distinct(std::vector<Neighbour> used) {
  std::vector<Neighbour> out;
  double total = 0;
  for (const Neighbour &n : used)
    total += n.weight;
  for (Neighbour &n : used) {
    if (total > 0)
      n.weight /= total;
    auto same = std::find_if(out.begin(), out.end(), [&](const Neighbour &o) {
      return o.point == n.point;
    });
    if (same == out.end())
      out.push_back(std::move(n));
    else
      same->weight += n.weight;
  }
  return out;
}

// Stored value of a user profile: FLOP/s on byte-scaled dims (int64).
int64_t userProfileValue(const GemmEntry &g, const GridPoint<4> &scaled) {
  if (g.time) {
    const int64_t ns = saturatingInt64(std::round(g.time->median_us * 1e3));
    if (ns > 0)
      return saturatingInt64(flops(scaled) * 1e9 / double(ns));
  }
  const double s = double(dtypeBytes(g.out_dtype));
  return saturatingInt64(g.flop_per_s * s * s * s);
}

template <class T> std::vector<int64_t> toVector(const T &p) {
  return std::vector<int64_t>(p.begin(), p.end());
}

Result<double> weightedRate(const WeightedAverageInterpolator<4> &table,
                            const GridPoint<4> &p,
                            std::vector<Neighbour> *used) {
  if (!used)
    return table.eval(p);
  std::vector<WeightedCorner<4>> corners;
  Result<double> rate = table.eval(p, &corners);
  for (const auto &c : corners)
    used->push_back({toVector(c.point), c.value, c.weight});
  return rate;
}

} // namespace

Result<MatmulInterpolator> MatmulInterpolator::create(const PerfTable &table,
                                                      GemmTableKind kind,
                                                      EstimateMode mode) {
  MatmulOptions options;
  options.kind = kind;
  options.mode = mode;
  options.dtype_fallback = true;
  return create(table, options);
}

Result<MatmulInterpolator>
MatmulInterpolator::create(const PerfTable &table,
                           const MatmulOptions &options) {
  MatmulInterpolator mi(options);
  for (const GemmEntry &g : table.gemms) {
    const int64_t s = dtypeBytes(g.out_dtype);
    if (s == 0)
      return makeError("gemm entry with unknown out dtype '" + g.out_dtype +
                       "'");
    if (options.kind == GemmTableKind::UserProfiles) {
      const GridPoint<4> p = {g.b, g.m * s, g.k * s, g.n * s};
      mi.nearest_.add(p, userProfileValue(g, p));
      continue;
    }
    const std::string key = gemmDtypeKey(g);
    auto it = mi.per_dtype_.find(key);
    if (it == mi.per_dtype_.end())
      it = mi.per_dtype_.emplace(key, Context(256, 4096)).first;
    it->second.add({g.b, g.m, g.k, g.n}, g.flop_per_s);
    if (key == kBf16Key) {
      if (!mi.bf16_fallback_)
        mi.bf16_fallback_.emplace(Context(512, 8192));
      mi.bf16_fallback_->add({g.b, 2 * g.m, 2 * g.k, 2 * g.n}, g.flop_per_s);
    }
  }
  for (auto &[key, per_dtype] : mi.per_dtype_) {
    per_dtype.buildIndex();
    mi.scattered_.emplace(key, ScatteredRates(per_dtype.values()));
  }
  mi.nearest_.buildIndex();
  if (mi.bf16_fallback_) {
    mi.bf16_fallback_->buildIndex();
    mi.bf16_fallback_scattered_.emplace(mi.bf16_fallback_->values());
  }
  return mi;
}

Result<bool> MatmulInterpolator::checkQuery(const GemmQuery &q) const {
  const GemmDims &d = q.dims;
  constexpr int64_t kMaxDim = int64_t{1} << 40; // byte-scaled dims fit
  if (d.b <= 0 || d.m <= 0 || d.k <= 0 || d.n <= 0 || d.b > kMaxDim ||
      d.m > kMaxDim || d.k > kMaxDim || d.n > kMaxDim)
    return makeError("gemm query: b, m, k, n must be in [1, 2^40]");
  if (dtypeBytes(q.out_dtype) == 0)
    return makeError("gemm query: unknown out dtype '" + q.out_dtype + "'");
  if (options_.kind == GemmTableKind::UserProfiles && nearest_.empty())
    return makeError("gemm table has no entries");
  return true;
}

std::string MatmulInterpolator::dtypeKeys() const {
  std::string keys;
  for (const auto &[key, table] : per_dtype_)
    keys += (keys.empty() ? "" : ", ") + key;
  return keys.empty() ? "none" : keys;
}

Result<MatmulInterpolator::Lookup>
MatmulInterpolator::selectChecked(const GemmQuery &q) const {
  if (Result<bool> ok = checkQuery(q); !ok)
    return ok.error();
  Lookup l = select(q);
  if (!l.table && options_.kind == GemmTableKind::Default) {
    std::string error = "gemm table has no '" + l.key +
                        "' entries (it has: " + dtypeKeys() + ")";
    if (!options_.dtype_fallback)
      error += "; XLA's bf16 byte-normalised fallback is off (option "
               "dtype_fallback / --dtype-fallback turns it on)";
    else
      error += " and no bf16xbf16->bf16 entries to fall back on";
    return makeError(error);
  }
  return l;
}

Result<Estimate> MatmulInterpolator::estimateTime(const GemmQuery &q) const {
  Result<Lookup> selected = selectChecked(q);
  if (!selected)
    return selected.error();
  Lookup &l = *selected;
  std::vector<Neighbour> used;
  std::string how;
  Result<double> rate = rateOf(l, &used, &how);
  if (!rate)
    return rate.error();
  std::string model = l.model;
  if (options_.kind == GemmTableKind::Default &&
      options_.mode == EstimateMode::Accurate)
    model = model == "gemm-table/weighted-average" ? "gemm-table/accurate"
                                                   : model + "/accurate";
  if (options_.kind == GemmTableKind::UserProfiles)
    l.key = "byte-normalised (b, m, k, n)";
  // XLA divides the FLOPs of the point it looked up (byte-normalised on the
  // fallback and user paths); the FLOPs reported are the problem's own.
  const double problem_flops = 2.0 * double(q.dims.b) * double(q.dims.m) *
                               double(q.dims.k) * double(q.dims.n);
  const double looked_up_flops = flops(l.point);
  const double exec_us = 1e6 * (looked_up_flops / *rate);
  Estimate e;
  e.time_us = std::max(exec_us, options_.min_time_us);
  e.explanation.model = std::move(model);
  e.explanation.key = std::move(l.key);
  e.explanation.terms = {{"flops", problem_flops, "FLOP"},
                         {"rate", *rate, "FLOP/s"}};
  e.explanation.note = "time = 2*b*m*k*n / rate";
  if (looked_up_flops != problem_flops) {
    e.explanation.terms.push_back(
        {"byte_normalised_flops", looked_up_flops, "FLOP"});
    e.explanation.note = "time = byte-normalised flops / rate (XLA's rule "
                         "for this path)";
  }
  if (options_.min_time_us > 0) {
    e.explanation.terms.push_back({"launch_floor", options_.min_time_us, "us"});
    if (exec_us < options_.min_time_us)
      e.explanation.note += "; below the kernel-launch floor, so the floor";
  }
  if (!how.empty())
    e.explanation.note += "; " + how;
  e.explanation.neighbours = distinct(std::move(used));
  return e;
}

Result<double> MatmulInterpolator::timeUs(const GemmQuery &q) const {
  Result<Lookup> selected = selectChecked(q);
  if (!selected)
    return selected.error();
  const Lookup &l = *selected;
  Result<double> rate = rateOf(l, nullptr, nullptr);
  if (!rate)
    return rate.error();
  return std::max(1e6 * (flops(l.point) / *rate), options_.min_time_us);
}

MatmulInterpolator::Lookup
MatmulInterpolator::select(const GemmQuery &q) const {
  Lookup l;
  const int64_t s = dtypeBytes(q.out_dtype);
  if (options_.kind == GemmTableKind::UserProfiles) {
    l.point = {q.dims.b, q.dims.m * s, q.dims.k * s, q.dims.n * s};
    l.model = "gemm-table/nearest";
    return l;
  }
  l.key = q.lhs_dtype + "x" + q.rhs_dtype + "->" + q.out_dtype;
  l.point = {q.dims.b, q.dims.m, q.dims.k, q.dims.n};
  l.model = "gemm-table/weighted-average";
  l.context = Context(256, 4096);
  const bool accurate = options_.mode == EstimateMode::Accurate;
  auto it = per_dtype_.find(l.key);
  auto bf16 = per_dtype_.find(kBf16Key);
  if (it != per_dtype_.end()) {
    l.table = &it->second;
    l.scattered = &scattered_.at(it->first);
  } else if (!options_.dtype_fallback) {
    return l;
  } else if (accurate && bf16 != per_dtype_.end()) {
    l.table = &bf16->second; // element counts, no byte scaling
    l.scattered = &scattered_.at(kBf16Key);
    l.model = "gemm-table/bf16-fallback";
  } else if (bf16_fallback_) {
    l.point = {q.dims.b, q.dims.m * s, q.dims.k * s, q.dims.n * s};
    l.table = &*bf16_fallback_;
    l.scattered = &*bf16_fallback_scattered_;
    l.context = Context(512, 8192);
    l.model = "gemm-table/bf16-byte-normalised-fallback";
  }
  return l;
}

Result<double> MatmulInterpolator::rateOf(const Lookup &l,
                                          std::vector<Neighbour> *used,
                                          std::string *how) const {
  if (options_.kind == GemmTableKind::UserProfiles) {
    const auto &[point, rate] =
        nearest_.points()[nearest_.nearestIndex(l.point)];
    if (rate <= 0)
      return makeError("gemm table entry has a non-positive FLOP rate");
    if (used)
      used->push_back({toVector(point), double(rate), 1});
    return double(rate);
  }
  Result<double> rate = makeError("");
  if (options_.mode == EstimateMode::Accurate) {
    rate = l.scattered->rate(l.point, used, how);
  } else {
    std::vector<Neighbour> corners;
    rate = weightedRate(*l.table, l.point, used ? &corners : nullptr);
    if (rate) {
      if (used)
        used->insert(used->end(), corners.begin(), corners.end());
    } else {
      // XLA needs every corner of the power-of-two bracket; where the table
      // lacks one, answer from the measured points instead of failing.
      std::string rule;
      rate = l.scattered->rate(l.point, used, &rule);
      if (rate && how)
        *how = "the table lacks a corner XLA's weighted average needs; " + rule;
    }
  }
  if (!rate)
    return makeError("gemm '" + l.key + "': " + rate.error().message);
  return rate;
}

} // namespace shardlab::cost
