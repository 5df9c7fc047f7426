// XLA's collective interpolator over performance tables.
#include "shardlab/cost/collective_model.h"

namespace shardlab::cost {
namespace {

constexpr int64_t kMinDefaultBytes = int64_t{1} << 10;
constexpr int64_t kMaxDefaultBytes = int64_t{1} << 30;
constexpr int64_t kMinDefaultDevices = 2;
constexpr int64_t kMaxDefaultDevices = 8;

std::string PermuteKey(PermuteType t) {
  std::string key = "collective-permute|";
  key += ToString(t);
  return key;
}

std::string GroupsKey(CollectiveOp op, const std::string &groups,
                      const std::string *dtype) {
  std::string key(ToString(op));
  key += '|';
  key += groups;
  if (dtype) {
    key += '|';
    key += *dtype;
  }
  return key;
}

std::string FallbackKey(CollectiveOp op, CommType comm) {
  std::string key(ToString(AsyncToSync(op)));
  key += '|';
  key += ToString(comm);
  return key;
}

Estimate TimeFromThroughput(int64_t bytes, double throughput, std::string model,
                            std::string key) {
  Estimate e;
  e.time_us = 1e6 * (1.0 * bytes / throughput);
  e.explanation.model = std::move(model);
  e.explanation.key = std::move(key);
  e.explanation.terms = {{"bytes", double(bytes), "bytes"},
                         {"throughput", throughput, "bytes/s"}};
  e.explanation.note = "time = bytes / throughput";
  return e;
}

} // namespace

CollectiveInterpolator::Exact CollectiveInterpolator::NewExact() const {
  Exact e;
  if (options_.interpolation == TableInterpolation::kNearest) {
    e.nearest.emplace();
    return e;
  }
  GridContext<1> ctx;
  ctx.next_step = {-1};
  ctx.next_pow2 = {1};
  ctx.min = {kMinDefaultBytes};
  ctx.max = {kMaxDefaultBytes};
  e.snap.emplace(ctx, options_.snap_rule);
  return e;
}

CollectiveInterpolator::Fallback CollectiveInterpolator::NewFallback() const {
  Fallback f;
  if (options_.interpolation == TableInterpolation::kNearest) {
    f.nearest.emplace();
    return f;
  }
  GridContext<2> ctx;
  ctx.next_step = {-1, -1};
  ctx.next_pow2 = {1, 1};
  ctx.min = {kMinDefaultBytes, kMinDefaultDevices};
  ctx.max = {kMaxDefaultBytes, kMaxDefaultDevices};
  f.snap.emplace(ctx, options_.snap_rule);
  return f;
}

void CollectiveInterpolator::AddEntry(const CollectiveEntry &e, CollectiveOp op,
                                      const std::string *exact_key) {
  const int64_t tp = SaturatingInt64(e.throughput_bytes_per_s);
  if (exact_key) {
    auto it = exact_.find(*exact_key);
    if (it == exact_.end())
      it = exact_.emplace(*exact_key, NewExact()).first;
    if (it->second.nearest)
      it->second.nearest->Add({e.bytes}, tp);
    else
      it->second.snap->Add({e.bytes}, tp);
  }
  if (!e.comm_type)
    return;
  const std::string key = FallbackKey(op, *e.comm_type);
  auto it = fallback_.find(key);
  if (it == fallback_.end())
    it = fallback_.emplace(key, NewFallback()).first;
  const GridPoint<2> p = {e.bytes, e.devices_per_group};
  if (it->second.nearest)
    it->second.nearest->Add(p, tp);
  else
    it->second.snap->Add(p, tp);
  it->second.points.push_back({p, e.throughput_bytes_per_s});
}

Result<CollectiveInterpolator>
CollectiveInterpolator::Create(const PerfTable &table,
                               const CollectiveInterpolatorOptions &opts) {
  if (opts.devices_per_partition <= 0)
    return MakeError("devices_per_partition must be positive");
  CollectiveInterpolator ci(opts);
  // XLA's user-table path keys every exact entry on its dtype; the default
  // path only for accumulating ops (queries always follow the latter rule).
  const bool always_dtype = opts.interpolation == TableInterpolation::kNearest;
  for (size_t i = 0; i < table.collectives.size(); ++i) {
    const CollectiveEntry &e = table.collectives[i];
    Result<CollectiveOp> op = ParseCollectiveOp(e.op);
    if (!op)
      return MakeError("collectives[" + std::to_string(i) +
                       "]: " + op.error().message);
    std::optional<std::string> key;
    if (e.permute_type) {
      key = PermuteKey(*e.permute_type);
    } else if (e.replica_groups) {
      Result<std::string> groups = CanonicalKey(*e.replica_groups);
      if (!groups)
        return MakeError("collectives[" + std::to_string(i) +
                         "].replica_groups: " + groups.error().message);
      const bool with_dtype = always_dtype || RequiresAccumulation(*op);
      key = GroupsKey(*op, *groups, with_dtype ? &e.dtype : nullptr);
    }
    ci.AddEntry(e, *op, key ? &*key : nullptr);
  }
  for (auto &[key, fallback] : ci.fallback_) {
    if (opts.mode == EstimateMode::kAccurate)
      fallback.accurate = AccurateThroughputIndex::Build(fallback.points);
    fallback.points.clear();
    fallback.points.shrink_to_fit();
  }
  return ci;
}

Result<std::string>
CollectiveInterpolator::QueryExactKey(const CollectiveQuery &q) const {
  if (IsPermute(q.op)) {
    Result<PermuteType> t =
        ClassifyPermute(q.pairs, options_.devices_per_partition);
    if (!t)
      return t.error();
    return PermuteKey(*t);
  }
  Result<std::string> groups = CanonicalKey(q.groups);
  if (!groups)
    return groups.error();
  return GroupsKey(q.op, *groups,
                   RequiresAccumulation(q.op) ? &q.dtype : nullptr);
}

Result<CollectiveInterpolator::Resolved>
CollectiveInterpolator::Resolve(const CollectiveQuery &q) const {
  Result<std::string> key = QueryExactKey(q);
  if (!key)
    return key.error();
  Resolved r;
  auto it = exact_.find(*key);
  if (it != exact_.end() &&
      (options_.mode == EstimateMode::kCompatible || IsPermute(q.op))) {
    r.exact = &it->second;
    r.key = std::move(*key);
    return r;
  }
  if (IsPermute(q.op))
    return MakeError("Cannot find key for collective-permute: no table "
                     "entries for '" +
                     *key + "'");
  Result<CommType> comm =
      ClassifyCommType(q.groups, options_.devices_per_partition);
  if (!comm)
    return comm.error();
  r.key = FallbackKey(q.op, *comm);
  auto fit = fallback_.find(r.key);
  if (fit == fallback_.end())
    return MakeError("Cannot find key for " + std::string(ToString(q.op)) +
                     ": no table entries for '" + r.key + "'");
  r.fallback = &fit->second;
  r.devices = q.groups.group_size();
  return r;
}

Result<double>
CollectiveInterpolator::ThroughputOf(const Resolved &r, int64_t bytes,
                                     std::vector<Neighbour> *used) const {
  double tp = 0;
  if (r.exact) {
    std::optional<std::pair<GridPoint<1>, int64_t>> hit;
    if (r.exact->nearest && !r.exact->nearest->empty())
      hit = r.exact->nearest->points()[r.exact->nearest->NearestIndex({bytes})];
    if (r.exact->snap)
      hit = r.exact->snap->Lookup({bytes});
    tp = hit ? double(hit->second) : 0;
    if (used && hit)
      used->push_back({{hit->first[0]}, tp, 1});
  } else if (r.fallback && options_.mode == EstimateMode::kAccurate) {
    tp = r.fallback->accurate.Throughput(bytes, r.devices, used);
  } else if (r.fallback) {
    const Fallback &f = *r.fallback;
    const GridPoint<2> p = {bytes, r.devices};
    std::optional<std::pair<GridPoint<2>, int64_t>> hit;
    if (f.nearest && !f.nearest->empty())
      hit = f.nearest->points()[f.nearest->NearestIndex(p)];
    if (f.snap)
      hit = f.snap->Lookup(p);
    tp = hit ? double(hit->second) : 0;
    if (used && hit)
      used->push_back({{hit->first[0], hit->first[1]}, tp, 1});
  }
  if (!(tp > 0))
    return MakeError("table key '" + r.key + "' has no usable entry");
  return tp;
}

Result<double> CollectiveInterpolator::TimeUs(const Resolved &r,
                                              int64_t bytes) const {
  if (bytes <= 0)
    return MakeError("collective query: bytes must be positive");
  Result<double> tp = ThroughputOf(r, bytes, nullptr);
  if (!tp)
    return tp.error();
  return 1e6 * (1.0 * bytes / *tp);
}

Result<Estimate>
CollectiveInterpolator::EstimateTime(const CollectiveQuery &q) const {
  if (q.bytes <= 0)
    return MakeError("collective query: bytes must be positive");
  Result<Resolved> r = Resolve(q);
  if (!r)
    return r.error();
  std::vector<Neighbour> used;
  Result<double> tp = ThroughputOf(*r, q.bytes, &used);
  if (!tp)
    return tp.error();
  const char *model = r->exact ? "collective-table/exact"
                      : options_.mode == EstimateMode::kAccurate
                          ? "collective-table/accurate"
                          : "collective-table/fallback";
  Estimate e = TimeFromThroughput(q.bytes, *tp, model, std::move(r->key));
  e.explanation.neighbours = std::move(used);
  return e;
}

} // namespace shardlab::cost
