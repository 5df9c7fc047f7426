// XLA's collective interpolator over performance tables.
#include "shardlab/cost/collective_model.h"

namespace shardlab::cost {
namespace {

constexpr int64_t kMinDefaultBytes = int64_t{1} << 10;
constexpr int64_t kMaxDefaultBytes = int64_t{1} << 30;
constexpr int64_t kMinDefaultDevices = 2;
constexpr int64_t kMaxDefaultDevices = 8;

std::string permuteKey(PermuteType t) {
  std::string key = "collective-permute|";
  key += toText(t);
  return key;
}

std::string groupsKey(CollectiveOp op, const std::string &groups,
                      const std::string *dtype) {
  std::string key(toText(op));
  key += '|';
  key += groups;
  if (dtype) {
    key += '|';
    key += *dtype;
  }
  return key;
}

std::string fallbackKey(CollectiveOp op, CommType comm) {
  std::string key(toText(asyncToSync(op)));
  key += '|';
  key += toText(comm);
  return key;
}

Estimate timeFromThroughput(int64_t bytes, double throughput, std::string model,
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

CollectiveInterpolator::Exact CollectiveInterpolator::newExact() const {
  Exact e;
  if (options_.interpolation == TableInterpolation::Nearest) {
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

CollectiveInterpolator::Fallback CollectiveInterpolator::newFallback() const {
  Fallback f;
  if (options_.interpolation == TableInterpolation::Nearest) {
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

void CollectiveInterpolator::addEntry(const CollectiveEntry &e, CollectiveOp op,
                                      const std::string *exact_key) {
  const int64_t tp = saturatingInt64(e.throughput_bytes_per_s);
  if (exact_key) {
    auto it = exact_.find(*exact_key);
    if (it == exact_.end())
      it = exact_.emplace(*exact_key, newExact()).first;
    if (it->second.nearest)
      it->second.nearest->add({e.bytes}, tp);
    else
      it->second.snap->add({e.bytes}, tp);
    it->second.max_bytes = std::max(it->second.max_bytes, e.bytes);
  }
  if (!e.comm_type)
    return;
  const std::string key = fallbackKey(op, *e.comm_type);
  auto it = fallback_.find(key);
  if (it == fallback_.end())
    it = fallback_.emplace(key, newFallback()).first;
  const GridPoint<2> p = {e.bytes, e.devices_per_group};
  if (it->second.nearest)
    it->second.nearest->add(p, tp);
  else
    it->second.snap->add(p, tp);
  it->second.points.push_back({p, e.throughput_bytes_per_s});
  it->second.max_bytes = std::max(it->second.max_bytes, e.bytes);
}

Result<CollectiveInterpolator>
CollectiveInterpolator::create(const PerfTable &table,
                               const CollectiveInterpolatorOptions &opts) {
  if (opts.devices_per_partition <= 0)
    return makeError("devices_per_partition must be positive");
  CollectiveInterpolator ci(opts);
  // XLA's user-table path keys every exact entry on its dtype; the default
  // path only for accumulating ops (queries always follow the latter rule).
  const bool always_dtype = opts.interpolation == TableInterpolation::Nearest;
  for (size_t i = 0; i < table.collectives.size(); ++i) {
    const CollectiveEntry &e = table.collectives[i];
    Result<CollectiveOp> op = parseCollectiveOp(e.op);
    if (!op)
      return makeError("collectives[" + std::to_string(i) +
                       "]: " + op.error().message);
    std::optional<std::string> key;
    if (e.permute_type) {
      key = permuteKey(*e.permute_type);
    } else if (e.replica_groups) {
      Result<std::string> groups = canonicalKey(*e.replica_groups);
      if (!groups)
        return makeError("collectives[" + std::to_string(i) +
                         "].replica_groups: " + groups.error().message);
      const bool with_dtype = always_dtype || requiresAccumulation(*op);
      key = groupsKey(*op, *groups, with_dtype ? &e.dtype : nullptr);
    }
    ci.addEntry(e, *op, key ? &*key : nullptr);
  }
  for (auto &[key, fallback] : ci.fallback_) {
    if (opts.mode == EstimateMode::Accurate)
      fallback.accurate = AccurateThroughputIndex::build(fallback.points);
    fallback.points.clear();
    fallback.points.shrink_to_fit();
  }
  return ci;
}

Result<std::string>
CollectiveInterpolator::queryExactKey(const CollectiveQuery &q) const {
  if (isPermute(q.op)) {
    Result<PermuteType> t =
        classifyPermute(q.pairs, options_.devices_per_partition);
    if (!t)
      return t.error();
    return permuteKey(*t);
  }
  Result<std::string> groups = canonicalKey(q.groups);
  if (!groups)
    return groups.error();
  return groupsKey(q.op, *groups,
                   requiresAccumulation(q.op) ? &q.dtype : nullptr);
}

Result<CollectiveInterpolator::Resolved>
CollectiveInterpolator::resolve(const CollectiveQuery &q) const {
  Result<std::string> key = queryExactKey(q);
  if (!key)
    return key.error();
  Resolved r;
  auto it = exact_.find(*key);
  if (it != exact_.end() &&
      (options_.mode == EstimateMode::Compatible || isPermute(q.op))) {
    r.exact = &it->second;
    r.key = std::move(*key);
    return r;
  }
  if (isPermute(q.op))
    return makeError("Cannot find key for collective-permute: no table "
                     "entries for '" +
                     *key + "'");
  Result<CommType> comm =
      classifyCommType(q.groups, options_.devices_per_partition);
  if (!comm)
    return comm.error();
  r.key = fallbackKey(q.op, *comm);
  auto fit = fallback_.find(r.key);
  if (fit == fallback_.end())
    return makeError("Cannot find key for " + std::string(toText(q.op)) +
                     ": no table entries for '" + r.key + "'");
  r.fallback = &fit->second;
  r.devices = q.groups.group_size();
  return r;
}

Result<double>
CollectiveInterpolator::throughputOf(const Resolved &r, int64_t bytes,
                                     std::vector<Neighbour> *used) const {
  double tp = 0;
  if (r.exact) {
    std::optional<std::pair<GridPoint<1>, int64_t>> hit;
    if (r.exact->nearest && !r.exact->nearest->empty())
      hit = r.exact->nearest->points()[r.exact->nearest->nearestIndex(
          {std::min(bytes, r.exact->max_bytes)})];
    if (r.exact->snap)
      hit = r.exact->snap->lookup({bytes});
    tp = hit ? double(hit->second) : 0;
    if (used && hit)
      used->push_back({{hit->first[0]}, tp, 1});
  } else if (r.fallback && options_.mode == EstimateMode::Accurate) {
    tp = r.fallback->accurate.throughput(bytes, r.devices, used);
  } else if (r.fallback) {
    const Fallback &f = *r.fallback;
    const GridPoint<2> p = {bytes, r.devices};
    std::optional<std::pair<GridPoint<2>, int64_t>> hit;
    if (f.nearest && !f.nearest->empty())
      hit = f.nearest->points()[f.nearest->nearestIndex(
          {std::min(bytes, f.max_bytes), r.devices})];
    if (f.snap)
      hit = f.snap->lookup(p);
    tp = hit ? double(hit->second) : 0;
    if (used && hit)
      used->push_back({{hit->first[0], hit->first[1]}, tp, 1});
  }
  if (!(tp > 0))
    return makeError("table key '" + r.key + "' has no usable entry");
  return tp;
}

Result<double> CollectiveInterpolator::timeUs(const Resolved &r,
                                              int64_t bytes) const {
  if (bytes <= 0)
    return makeError("collective query: bytes must be positive");
  Result<double> tp = throughputOf(r, bytes, nullptr);
  if (!tp)
    return tp.error();
  return 1e6 * (1.0 * bytes / *tp);
}

Result<Estimate>
CollectiveInterpolator::estimateTime(const CollectiveQuery &q) const {
  if (q.bytes <= 0)
    return makeError("collective query: bytes must be positive");
  Result<Resolved> r = resolve(q);
  if (!r)
    return r.error();
  std::vector<Neighbour> used;
  Result<double> tp = throughputOf(*r, q.bytes, &used);
  if (!tp)
    return tp.error();
  const char *model = r->exact ? "collective-table/exact"
                      : options_.mode == EstimateMode::Accurate
                          ? "collective-table/accurate"
                          : "collective-table/fallback";
  Estimate e = timeFromThroughput(q.bytes, *tp, model, std::move(r->key));
  e.explanation.neighbours = std::move(used);
  const int64_t largest = r->exact      ? r->exact->max_bytes
                          : r->fallback ? r->fallback->max_bytes
                                        : 0;
  if (largest > 0 && q.bytes > largest)
    e.explanation.extrapolated = std::to_string(q.bytes) + " B > " +
                                 std::to_string(largest) + " B, the largest";
  return e;
}

} // namespace shardlab::cost
