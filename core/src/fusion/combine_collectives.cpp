// Groups a block's collectives as XLA's combiners do and orders the block
// so each group is one step (see combine_collectives.h).
#include "shardlab/fusion/combine_collectives.h"
#include "ir/op_properties.h"

#include <algorithm>
#include <map>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace shardlab::fusion {
namespace {

struct Group {
  std::string key;
  std::vector<size_t> members; // op indices
  int64_t bytes = 0;
  bool open = true;
};

// The ops of this block each op reads (its nested regions' reads included:
// a while body may use a value of the enclosing block), as one flat list:
// op i's are list[begin[i]] up to list[begin[i + 1]].
struct Predecessors {
  std::vector<uint32_t> begin, list;
  size_t size(size_t i) const { return begin[i + 1] - begin[i]; }
  const uint32_t *of(size_t i) const { return list.data() + begin[i]; }
};

Predecessors
blockPredecessors(const std::vector<Operation *> &ops,
                  const std::unordered_map<const Operation *, size_t> &index) {
  Predecessors preds;
  preds.begin.reserve(ops.size() + 1);
  preds.list.reserve(2 * ops.size());
  auto add = [&](size_t i, const Operation &user) {
    for (size_t k = 0; k < user.numOperands(); ++k) {
      const Operation *def = user.operand(k)->defining_op;
      if (!def)
        continue;
      const auto it = index.find(def);
      if (it != index.end() && it->second != i)
        preds.list.push_back(uint32_t(it->second));
    }
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    preds.begin.push_back(uint32_t(preds.list.size()));
    add(i, *ops[i]);
    if (ops[i]->numRegions())
      walk(*ops[i], [&](Operation &nested) { add(i, nested); });
    const auto first = preds.list.begin() + preds.begin.back();
    std::sort(first, preds.list.end());
    preds.list.erase(std::unique(first, preds.list.end()), preds.list.end());
  }
  preds.begin.push_back(uint32_t(preds.list.size()));
  return preds;
}

// One open group and the ops that depend on one of its members (or are
// one), a bit per op of the block.
struct OpenGroup {
  size_t group;
  std::vector<uint64_t> tainted;
  bool test(size_t i) const { return tainted[i / 64] >> (i % 64) & 1; }
  void set(size_t i) { tainted[i / 64] |= uint64_t{1} << (i % 64); }
};

// The greedy grouping, in program order.
std::vector<Group>
formGroups(const std::vector<Operation *> &ops, const Predecessors &preds,
           const CombineOptions &options,
           const std::vector<std::optional<CombineCandidate>> &candidates) {
  std::vector<Group> groups;
  std::map<std::string, OpenGroup> open; // by key
  const size_t words = (ops.size() + 63) / 64;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (auto &[key, g] : open)
      for (size_t k = 0; k < preds.size(i); ++k)
        if (g.test(preds.of(i)[k])) {
          g.set(i);
          break;
        }
    const std::optional<CombineCandidate> &c = candidates[i];
    if (!c)
      continue;
    auto it = open.find(c->key);
    if (it != open.end()) {
      Group &g = groups[it->second.group];
      if (!it->second.test(i) &&
          g.bytes + c->bytes <= options.threshold_bytes &&
          g.members.size() < options.max_members) {
        g.members.push_back(i);
        g.bytes += c->bytes;
        it->second.set(i);
        continue;
      }
      g.open = false;
      open.erase(it);
    }
    OpenGroup fresh{groups.size(), std::vector<uint64_t>(words, 0)};
    fresh.set(i);
    open.emplace(c->key, std::move(fresh));
    groups.push_back({c->key, {i}, c->bytes, true});
  }
  return groups;
}

// A topological order of the ops with each group of two or more as one
// node, program order wherever dataflow allows (a group sits at its last
// member). Empty when the groups wait on each other in a cycle.
std::vector<std::vector<Operation *>>
orderSteps(const std::vector<Operation *> &ops, const Predecessors &preds,
           const std::vector<Group> &groups) {
  std::vector<size_t> node_of(ops.size());
  std::vector<std::vector<size_t>> members; // node -> op indices
  std::vector<size_t> group_node(groups.size(), SIZE_MAX);
  std::vector<long> group_of(ops.size(), -1);
  for (size_t g = 0; g < groups.size(); ++g)
    if (groups[g].members.size() > 1)
      for (size_t m : groups[g].members)
        group_of[m] = long(g);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (group_of[i] < 0) {
      node_of[i] = members.size();
      members.push_back({i});
      continue;
    }
    const size_t g = size_t(group_of[i]);
    if (group_node[g] == SIZE_MAX) {
      group_node[g] = members.size();
      members.push_back(groups[g].members);
    }
    node_of[i] = group_node[g];
  }
  const size_t n = members.size();
  std::vector<std::vector<size_t>> succs(n);
  std::vector<size_t> waiting(n, 0);
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t k = 0; k < preds.size(i); ++k)
      if (const size_t p = preds.of(i)[k]; node_of[p] != node_of[i]) {
        succs[node_of[p]].push_back(node_of[i]);
        ++waiting[node_of[i]];
      }
  // Priority: the node's last op in program order.
  using Entry = std::pair<size_t, size_t>; // (position, node)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t v = 0; v < n; ++v)
    if (waiting[v] == 0)
      ready.push({members[v].back(), v});
  std::vector<std::vector<Operation *>> steps;
  while (!ready.empty()) {
    const size_t v = ready.top().second;
    ready.pop();
    std::vector<Operation *> step;
    for (size_t m : members[v])
      step.push_back(ops[m]);
    steps.push_back(std::move(step));
    for (size_t s : succs[v])
      if (--waiting[s] == 0)
        ready.push({members[s].back(), s});
  }
  if (steps.size() != n)
    return {};
  return steps;
}

// Whether two candidates share a key: else nothing can combine, and the
// block keeps its order without the dependence analysis.
bool twoOfOneKey(
    const std::vector<std::optional<CombineCandidate>> &candidates) {
  std::unordered_set<std::string_view> keys;
  for (const std::optional<CombineCandidate> &c : candidates)
    if (c && !keys.insert(c->key).second)
      return true;
  return false;
}

} // namespace

std::vector<std::vector<Operation *>> orderWithCombinedCollectives(
    Block &block, const CombineOptions &options,
    const std::function<std::optional<CombineCandidate>(Operation &)>
        &candidate) {
  std::vector<Operation *> ops;
  Operation *terminator = nullptr;
  for (Operation &op : block) {
    if (isBlockReturn(op) && !op.nextInBlock())
      terminator = &op;
    else
      ops.push_back(&op);
  }
  std::vector<std::vector<Operation *>> steps;
  auto programOrder = [&] {
    steps.clear();
    for (Operation *op : ops)
      steps.push_back({op});
  };
  bool any_group = false;
  std::vector<std::optional<CombineCandidate>> candidates;
  if (options.enabled) {
    candidates.reserve(ops.size());
    for (Operation *op : ops)
      candidates.push_back(candidate(*op));
  }
  if (options.enabled && twoOfOneKey(candidates)) {
    std::unordered_map<const Operation *, size_t> index;
    for (size_t i = 0; i < ops.size(); ++i)
      index[ops[i]] = i;
    const Predecessors preds = blockPredecessors(ops, index);
    const std::vector<Group> groups =
        formGroups(ops, preds, options, candidates);
    for (const Group &g : groups)
      any_group = any_group || g.members.size() > 1;
    if (any_group)
      steps = orderSteps(ops, preds, groups);
  }
  if (!any_group || steps.empty())
    programOrder();
  if (terminator)
    steps.push_back({terminator});
  return steps;
}

} // namespace shardlab::fusion
