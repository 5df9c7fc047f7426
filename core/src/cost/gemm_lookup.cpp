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

double Flops(const GridPoint<4> &p) {
  return 2.0 * double(p[0]) * double(p[1]) * double(p[2]) * double(p[3]);
}

Estimate FromRate(const GridPoint<4> &p, double rate, std::string model,
                  std::string key) {
  Estimate e;
  e.time_us = 1e6 * (Flops(p) / rate);
  e.explanation.model = std::move(model);
  e.explanation.key = std::move(key);
  e.explanation.terms = {{"flops", Flops(p), "FLOP"}, {"rate", rate, "FLOP/s"}};
  e.explanation.note = "time = 2*b*m*k*n / rate";
  return e;
}

// Stored value of a user profile: FLOP/s on byte-scaled dims (int64).
int64_t UserProfileValue(const GemmEntry &g, const GridPoint<4> &scaled) {
  if (g.time) {
    const int64_t ns = SaturatingInt64(std::round(g.time->median_us * 1e3));
    if (ns > 0)
      return SaturatingInt64(Flops(scaled) * 1e9 / double(ns));
  }
  const double s = double(DtypeBytes(g.out_dtype));
  return SaturatingInt64(g.flop_per_s * s * s * s);
}

template <class T> std::vector<int64_t> ToVector(const T &p) {
  return std::vector<int64_t>(p.begin(), p.end());
}

Result<double> WeightedRate(const WeightedAverageInterpolator<4> &table,
                            const GridPoint<4> &p,
                            std::vector<Neighbour> *used) {
  if (!used)
    return table.Eval(p);
  std::vector<WeightedCorner<4>> corners;
  Result<double> rate = table.Eval(p, &corners);
  for (const auto &c : corners)
    used->push_back({ToVector(c.point), c.value, c.weight});
  return rate;
}

} // namespace

Result<MatmulInterpolator> MatmulInterpolator::Create(const PerfTable &table,
                                                      GemmTableKind kind,
                                                      EstimateMode mode) {
  MatmulInterpolator mi(kind, mode);
  for (const GemmEntry &g : table.gemms) {
    const int64_t s = DtypeBytes(g.out_dtype);
    if (s == 0)
      return MakeError("gemm entry with unknown out dtype '" + g.out_dtype +
                       "'");
    if (kind == GemmTableKind::kUserProfiles) {
      const GridPoint<4> p = {g.b, g.m * s, g.k * s, g.n * s};
      mi.nearest_.Add(p, UserProfileValue(g, p));
      continue;
    }
    const std::string key = GemmDtypeKey(g);
    auto it = mi.per_dtype_.find(key);
    if (it == mi.per_dtype_.end())
      it = mi.per_dtype_.emplace(key, Context(256, 4096)).first;
    it->second.Add({g.b, g.m, g.k, g.n}, g.flop_per_s);
    if (key == kBf16Key) {
      if (!mi.bf16_fallback_)
        mi.bf16_fallback_.emplace(Context(512, 8192));
      mi.bf16_fallback_->Add({g.b, 2 * g.m, 2 * g.k, 2 * g.n}, g.flop_per_s);
    }
  }
  for (auto &[key, per_dtype] : mi.per_dtype_)
    per_dtype.BuildIndex();
  mi.nearest_.BuildIndex();
  if (mi.bf16_fallback_)
    mi.bf16_fallback_->BuildIndex();
  return mi;
}

Result<bool> MatmulInterpolator::CheckQuery(const GemmQuery &q) const {
  const GemmDims &d = q.dims;
  constexpr int64_t kMaxDim = int64_t{1} << 40; // byte-scaled dims fit
  if (d.b <= 0 || d.m <= 0 || d.k <= 0 || d.n <= 0 || d.b > kMaxDim ||
      d.m > kMaxDim || d.k > kMaxDim || d.n > kMaxDim)
    return MakeError("gemm query: b, m, k, n must be in [1, 2^40]");
  if (DtypeBytes(q.out_dtype) == 0)
    return MakeError("gemm query: unknown out dtype '" + q.out_dtype + "'");
  if (kind_ == GemmTableKind::kUserProfiles && nearest_.empty())
    return MakeError("gemm table has no entries");
  return true;
}

Result<MatmulInterpolator::Lookup>
MatmulInterpolator::SelectChecked(const GemmQuery &q) const {
  if (Result<bool> ok = CheckQuery(q); !ok)
    return ok.error();
  Lookup l = Select(q);
  if (!l.table && kind_ == GemmTableKind::kDefault)
    return MakeError("gemm table has no entries for '" + l.key +
                     "' and no bf16xbf16->bf16 entries to fall back on");
  return l;
}

Result<Estimate> MatmulInterpolator::EstimateTime(const GemmQuery &q) const {
  Result<Lookup> selected = SelectChecked(q);
  if (!selected)
    return selected.error();
  Lookup &l = *selected;
  std::vector<Neighbour> used;
  Result<double> rate = RateOf(l, &used);
  if (!rate)
    return rate.error();
  std::string model = l.model;
  if (kind_ == GemmTableKind::kDefault && mode_ == EstimateMode::kAccurate)
    model += "/accurate";
  if (kind_ == GemmTableKind::kUserProfiles)
    l.key = "byte-normalised (b, m, k, n)";
  Estimate e = FromRate(l.point, *rate, model, std::move(l.key));
  e.explanation.neighbours = std::move(used);
  return e;
}

Result<double> MatmulInterpolator::TimeUs(const GemmQuery &q) const {
  Result<Lookup> selected = SelectChecked(q);
  if (!selected)
    return selected.error();
  const Lookup &l = *selected;
  Result<double> rate = RateOf(l, nullptr);
  if (!rate)
    return rate.error();
  return 1e6 * (Flops(l.point) / *rate);
}

MatmulInterpolator::Lookup
MatmulInterpolator::Select(const GemmQuery &q) const {
  Lookup l;
  const int64_t s = DtypeBytes(q.out_dtype);
  if (kind_ == GemmTableKind::kUserProfiles) {
    l.point = {q.dims.b, q.dims.m * s, q.dims.k * s, q.dims.n * s};
    l.model = "gemm-table/nearest";
    return l;
  }
  l.key = q.lhs_dtype + "x" + q.rhs_dtype + "->" + q.out_dtype;
  l.point = {q.dims.b, q.dims.m, q.dims.k, q.dims.n};
  l.model = "gemm-table/weighted-average";
  l.context = Context(256, 4096);
  const bool accurate = mode_ == EstimateMode::kAccurate;
  auto it = per_dtype_.find(l.key);
  auto bf16 = per_dtype_.find(kBf16Key);
  if (it != per_dtype_.end()) {
    l.table = &it->second;
  } else if (accurate && bf16 != per_dtype_.end()) {
    l.table = &bf16->second; // element counts, no byte scaling
    l.model = "gemm-table/bf16-fallback";
  } else if (bf16_fallback_) {
    l.point = {q.dims.b, q.dims.m * s, q.dims.k * s, q.dims.n * s};
    l.table = &*bf16_fallback_;
    l.context = Context(512, 8192);
    l.model = "gemm-table/bf16-byte-normalised-fallback";
  }
  return l;
}

Result<double> MatmulInterpolator::RateOf(const Lookup &l,
                                          std::vector<Neighbour> *used) const {
  if (kind_ == GemmTableKind::kUserProfiles) {
    const auto &[point, rate] =
        nearest_.points()[nearest_.NearestIndex(l.point)];
    if (rate <= 0)
      return MakeError("gemm table entry has a non-positive FLOP rate");
    if (used)
      used->push_back({ToVector(point), double(rate), 1});
    return double(rate);
  }
  Result<double> rate =
      mode_ == EstimateMode::kAccurate
          ? AccurateFlopRate(*l.table, l.point, l.context, used)
          : WeightedRate(*l.table, l.point, used);
  if (!rate)
    return MakeError("gemm '" + l.key + "': " + rate.error().message);
  return rate;
}

Result<double> AccurateFlopRate(const WeightedAverageInterpolator<4> &table,
                                const GridPoint<4> &point,
                                const GridContext<4> &ctx,
                                std::vector<Neighbour> *used) {
  std::array<int64_t, 4> lo, hi;
  std::array<double, 4> t;
  for (size_t d = 0; d < 4; ++d) {
    const int64_t x = std::clamp(point[d], ctx.min[d], ctx.max[d]);
    lo[d] = std::clamp(PrevPowerOfTwo(x), ctx.min[d], ctx.max[d]);
    hi[d] = std::clamp(NextPowerOfTwo(x), ctx.min[d], ctx.max[d]);
    t[d] = hi[d] == lo[d] ? 0.0
                          : std::log2(double(x) / double(lo[d])) /
                                std::log2(double(hi[d]) / double(lo[d]));
  }
  double log_rate = 0;
  for (int mask = 0; mask < 16; ++mask) {
    GridPoint<4> c;
    double w = 1;
    for (size_t d = 0; d < 4; ++d) {
      const bool up = (mask >> d) & 1;
      c[d] = up ? hi[d] : lo[d];
      w *= up ? t[d] : 1 - t[d];
    }
    if (w == 0)
      continue;
    const double *value = table.Find(c);
    if (!value || *value <= 0)
      return MakeError("table has no entry at grid corner " +
                       PointToString<4>(c) + " (a full grid is required)");
    log_rate += w * std::log(*value);
    if (used)
      used->push_back({ToVector(c), *value, w});
  }
  return std::exp(log_rate);
}

} // namespace shardlab::cost
