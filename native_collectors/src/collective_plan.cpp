// Enumerating the collective sweep: group sets, sizes and points.
#include "shardlab/collectors/collective_plan.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace shardlab::collectors {
namespace {

using Lists = std::vector<std::vector<int64_t>>;

// "[G,S]<=" + rest, built by appending (g++ 12 warns falsely on the
// equivalent chain of operator+ temporaries).
std::string iota(int64_t groups, int64_t size, const std::string &rest) {
  std::string text = "[";
  text.append(std::to_string(groups)).append(",");
  text.append(std::to_string(size)).append("]<=").append(rest);
  return text;
}

Result<bool> checkLists(const Lists &lists, int64_t world,
                        const std::string &spec) {
  std::set<int64_t> seen;
  for (const auto &g : lists) {
    if (g.size() != lists[0].size() || g.size() < 2)
      return makeError("groups '" + spec +
                       "': expected equal groups of at least 2 ranks");
    for (int64_t r : g)
      if (r < 0 || r >= world || !seen.insert(r).second)
        return makeError("groups '" + spec + "': rank " + std::to_string(r) +
                         (r >= world ? " is outside the job's " +
                                           std::to_string(world) + " ranks"
                                     : " appears twice"));
  }
  return true;
}

Lists canonical(Lists lists) {
  for (auto &g : lists)
    std::sort(g.begin(), g.end());
  std::sort(lists.begin(), lists.end());
  return lists;
}

std::vector<CollectivePoint> pointsFor(const CollectiveOptions &o,
                                       const CollectivePlan &plan, size_t gs,
                                       CollOp op,
                                       std::vector<std::string> *notes);

} // namespace

int64_t collectiveDtypeBytes(std::string_view dtype) {
  if (dtype == "f32" || dtype == "s32")
    return 4;
  if (dtype == "bf16" || dtype == "f16")
    return 2;
  return 0;
}

std::vector<std::string> defaultGroupSpecs(const Topology &topo,
                                           const std::vector<int64_t> &sizes) {
  std::vector<std::string> specs;
  std::string world = "[";
  world.append(std::to_string(topo.world)).append("]");
  for (int64_t s : sizes)
    if (s >= 2 && s <= topo.ranks_per_node && topo.world % s == 0)
      specs.push_back(iota(topo.world / s, s, world));
  const int64_t nodes = topo.world / std::max<int64_t>(1, topo.ranks_per_node);
  if (nodes > 1) {
    specs.push_back(iota(1, topo.world, world));
    std::string dims = "[";
    dims.append(std::to_string(nodes)).append(",");
    dims.append(std::to_string(topo.ranks_per_node)).append("]T(1,0)");
    specs.push_back(iota(topo.ranks_per_node, nodes, dims));
  }
  return specs;
}

Result<std::vector<GroupSet>>
parseGroupSets(const Topology &topo, const std::vector<std::string> &specs) {
  std::vector<GroupSet> sets;
  std::set<Lists> seen;
  for (const std::string &spec : specs) {
    Result<cost::ReplicaGroups> g = cost::parseReplicaGroups(spec);
    if (!g)
      return makeError("groups '" + spec + "': " + g.error().message);
    Result<Lists> lists = cost::expand(*g);
    if (!lists)
      return makeError("groups '" + spec + "': " + lists.error().message);
    if (lists->empty())
      return makeError("groups '" + spec + "': no groups");
    Result<bool> ok = checkLists(*lists, topo.world, spec);
    if (!ok)
      return ok.error();
    if (!seen.insert(canonical(*lists)).second)
      continue;
    GroupSet set;
    set.group_size = static_cast<int64_t>((*lists)[0].size());
    set.groups = *g;
    set.lists = *lists;
    set.text = cost::toText(*g);
    sets.push_back(std::move(set));
  }
  return sets;
}

std::vector<int64_t> sizeSweep(int64_t min_bytes, int64_t max_bytes,
                               double factor) {
  std::vector<int64_t> sizes;
  if (min_bytes < 1 || max_bytes < min_bytes || !(factor > 1))
    return sizes;
  for (double s = static_cast<double>(min_bytes);
       s <= static_cast<double>(max_bytes) * (1 + 1e-12); s *= factor) {
    const int64_t v = std::llround(s);
    if (sizes.empty() || v > sizes.back())
      sizes.push_back(std::min(v, max_bytes));
  }
  return sizes;
}

cost::SourceTargetPairs permutePairs(PermutePattern p, int64_t s) {
  cost::SourceTargetPairs pairs;
  for (int64_t i = 0; i < s; ++i) {
    if (p == PermutePattern::OneWay && i < s / 2)
      pairs.push_back({i, i + s / 2});
    if (p == PermutePattern::Ring)
      pairs.push_back({i, (i + 1) % s});
    if (p == PermutePattern::Mutual && (i ^ 1) < s)
      pairs.push_back({i, i ^ 1});
  }
  return pairs;
}

cost::CollectiveEntry entryFor(const CollectivePlan &plan,
                               const CollectivePoint &p) {
  const GroupSet &gs = plan.group_sets[p.group_set];
  cost::CollectiveEntry e;
  e.op = std::string(opName(p.op));
  e.comm_type = p.comm_type;
  e.permute_type = p.permute_type;
  e.dtype = p.dtype;
  e.bytes = p.counts.bytes;
  e.devices_per_group = gs.group_size;
  e.num_groups = static_cast<int64_t>(gs.lists.size());
  e.nodes = std::max<int64_t>(
      1, plan.topo.world / std::max<int64_t>(1, plan.topo.ranks_per_node));
  e.replica_groups = gs.groups;
  return e;
}

std::string collectiveEntryKey(const cost::CollectiveEntry &e) {
  std::string key = e.op + "|" + e.dtype + "|" + std::to_string(e.bytes) + "|" +
                    std::to_string(e.devices_per_group) + "|";
  if (e.comm_type)
    key += std::string(cost::toText(*e.comm_type));
  if (e.permute_type)
    key += std::string(cost::toText(*e.permute_type));
  key += "|";
  if (e.replica_groups)
    key += cost::toText(*e.replica_groups);
  return key;
}

Result<CollectivePlan> planCollectives(const CollectiveOptions &opts,
                                       const Topology &topo) {
  if (topo.world < 1 || topo.ranks_per_node < 1 || topo.partition_size < 1)
    return makeError("invalid job topology");
  CollectivePlan plan;
  plan.topo = topo;
  const std::vector<std::string> specs =
      opts.groups.empty() ? defaultGroupSpecs(topo, opts.group_sizes)
                          : opts.groups;
  Result<std::vector<GroupSet>> sets = parseGroupSets(topo, specs);
  if (!sets)
    return sets.error();
  plan.group_sets = *sets;
  if (plan.group_sets.empty())
    return makeError("no device groups fit a job of " +
                     std::to_string(topo.world) +
                     " GPU(s); collectives need groups of at least 2 ranks "
                     "(see --group-sizes, --groups)");
  std::set<std::string> keys;
  for (size_t gs = 0; gs < plan.group_sets.size(); ++gs)
    for (CollOp op : opts.ops)
      for (CollectivePoint &p : pointsFor(opts, plan, gs, op, &plan.notes))
        if (keys.insert(p.key).second)
          plan.points.push_back(std::move(p));
  return plan;
}

namespace {

// Classifies the point against the partition size (comm or permute type).
Result<bool> classify(const CollectivePlan &plan, CollectivePoint *p) {
  const GroupSet &gs = plan.group_sets[p->group_set];
  if (!p->permute) {
    Result<cost::CommType> t =
        cost::classifyCommType(gs.groups, plan.topo.partition_size);
    if (!t)
      return t.error();
    p->comm_type = *t;
    return true;
  }
  cost::SourceTargetPairs global;
  for (const auto &g : gs.lists)
    for (const auto &[s, t] : p->pairs)
      global.push_back({g[s], g[t]});
  Result<cost::PermuteType> t =
      cost::classifyPermute(global, plan.topo.partition_size);
  if (!t)
    return t.error();
  p->permute_type = *t;
  return true;
}

std::vector<CollectivePoint> pointsFor(const CollectiveOptions &o,
                                       const CollectivePlan &plan, size_t gs,
                                       CollOp op,
                                       std::vector<std::string> *notes) {
  std::vector<CollectivePoint> out;
  const int64_t n = plan.group_sets[gs].group_size;
  std::vector<std::optional<PermutePattern>> patterns = {std::nullopt};
  if (op == CollOp::CollectivePermute)
    patterns.assign(o.permutes.begin(), o.permutes.end());
  for (const auto &pattern : patterns)
    for (const std::string &dtype : o.dtypes)
      for (int64_t size : sizeSweep(o.min_bytes, o.max_bytes, o.step_factor)) {
        CollectivePoint p;
        p.op = op, p.dtype = dtype, p.requested_bytes = size;
        p.counts = collCounts(op, size, collectiveDtypeBytes(dtype), n);
        p.group_set = gs, p.permute = pattern;
        if (pattern)
          p.pairs = permutePairs(*pattern, n);
        const std::string what = std::string(opName(op)) + " " + dtype + " " +
                                 formatBytes(size) + " on " +
                                 plan.group_sets[gs].text + ": skipped (";
        if (p.counts.bytes == 0) {
          notes->push_back(what + "rounds to 0 bytes per rank)");
          continue;
        }
        if (Result<bool> c = classify(plan, &p); !c) {
          notes->push_back(what + c.error().message + ")");
          continue;
        }
        p.key = collectiveEntryKey(entryFor(plan, p));
        out.push_back(std::move(p));
      }
  return out;
}

std::string kindText(const CollectivePoint &p) {
  if (p.comm_type)
    return std::string(cost::toText(*p.comm_type));
  return p.permute_type ? std::string(cost::toText(*p.permute_type)) : "";
}

} // namespace

std::pair<int64_t, int64_t> maxBufferBytes(const CollectivePlan &plan) {
  int64_t send = 0, recv = 0;
  for (const CollectivePoint &p : plan.points) {
    const int64_t eb = collectiveDtypeBytes(p.dtype);
    send = std::max(send, p.counts.send_count * eb);
    recv = std::max(recv, p.counts.recv_count * eb);
  }
  return {send, recv};
}

std::string formatCollectivePlan(const CollectivePlan &plan,
                                 const CollectiveOptions &opts) {
  std::ostringstream os;
  const Topology &t = plan.topo;
  os << "# shardlab-collect-collectives plan: " << t.world << " rank(s), "
     << t.ranks_per_node << " per node, partition size " << t.partition_size
     << "\n# sizes " << formatBytes(opts.min_bytes) << " .. "
     << formatBytes(opts.max_bytes) << " x" << opts.step_factor << ", "
     << opts.warmup << " warm-up + " << opts.iters
     << " timed iterations per point, check " << opts.check << "\n";
  for (const GroupSet &gs : plan.group_sets)
    os << "# groups " << gs.text << ": " << gs.lists.size() << " x "
       << gs.group_size << " ranks\n";
  os << "# op dtype bytes groups kind\n";
  for (const CollectivePoint &p : plan.points)
    os << opName(p.op) << " " << p.dtype << " " << p.counts.bytes << " "
       << plan.group_sets[p.group_set].text << " " << kindText(p) << "\n";
  for (const std::string &n : plan.notes)
    os << "# note: " << n << "\n";
  const auto [send, recv] = maxBufferBytes(plan);
  os << "# " << plan.points.size() << " points; per-GPU buffers "
     << formatBytes(send) << " send + " << formatBytes(recv) << " receive\n";
  return os.str();
}

} // namespace shardlab::collectors
