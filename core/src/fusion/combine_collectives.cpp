// Groups a block's collectives as XLA's combiners do and orders the block
// so each group is one step (see combine_collectives.h).
#include "shardlab/fusion/combine_collectives.h"

#include <algorithm>
#include <map>
#include <queue>
#include <unordered_map>

namespace shardlab::fusion {
namespace {

struct Group {
  std::string key;
  std::vector<size_t> members; // op indices
  int64_t bytes = 0;
  bool open = true;
};

// Indices of the ops of this block that op `i` reads, its nested regions'
// reads included (a while body may use a value of the enclosing block).
std::vector<std::vector<size_t>>
blockPredecessors(const std::vector<Operation *> &ops,
                  const std::unordered_map<const Operation *, size_t> &index) {
  std::vector<std::vector<size_t>> preds(ops.size());
  auto add = [&](size_t i, const Operation &user) {
    for (size_t k = 0; k < user.numOperands(); ++k) {
      const Operation *def = user.operand(k)->defining_op;
      if (!def)
        continue;
      const auto it = index.find(def);
      if (it != index.end() && it->second != i)
        preds[i].push_back(it->second);
    }
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    add(i, *ops[i]);
    if (ops[i]->numRegions())
      walk(*ops[i], [&](Operation &nested) { add(i, nested); });
    std::sort(preds[i].begin(), preds[i].end());
    preds[i].erase(std::unique(preds[i].begin(), preds[i].end()),
                   preds[i].end());
  }
  return preds;
}

// The greedy grouping, in program order. `taint[i]` lists the open groups
// op i depends on (or belongs to).
std::vector<Group>
formGroups(const std::vector<Operation *> &ops,
           const std::vector<std::vector<size_t>> &preds,
           const CombineOptions &options,
           const std::function<std::optional<CombineCandidate>(Operation &)>
               &candidate) {
  std::vector<Group> groups;
  std::map<std::string, size_t> open_group_of_key;
  std::vector<std::vector<size_t>> taint(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    std::vector<size_t> &mine = taint[i];
    for (size_t p : preds[i])
      for (size_t g : taint[p])
        if (groups[g].open)
          mine.push_back(g);
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    const std::optional<CombineCandidate> c = candidate(*ops[i]);
    if (!c)
      continue;
    auto it = open_group_of_key.find(c->key);
    if (it != open_group_of_key.end()) {
      Group &g = groups[it->second];
      const bool depends =
          std::binary_search(mine.begin(), mine.end(), it->second);
      if (!depends && g.bytes + c->bytes <= options.threshold_bytes &&
          g.members.size() < options.max_members) {
        g.members.push_back(i);
        g.bytes += c->bytes;
        mine.push_back(it->second);
        std::sort(mine.begin(), mine.end());
        continue;
      }
      g.open = false;
      open_group_of_key.erase(it);
    }
    open_group_of_key[c->key] = groups.size();
    groups.push_back({c->key, {i}, c->bytes, true});
    mine.push_back(groups.size() - 1);
    std::sort(mine.begin(), mine.end());
  }
  return groups;
}

// A topological order of the ops with each group of two or more as one
// node, program order wherever dataflow allows (a group sits at its last
// member). Empty when the groups wait on each other in a cycle.
std::vector<std::vector<Operation *>>
orderSteps(const std::vector<Operation *> &ops,
           const std::vector<std::vector<size_t>> &preds,
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
    for (size_t p : preds[i])
      if (node_of[p] != node_of[i]) {
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

bool isTerminator(const Operation &op) {
  return op.is("func.return") || op.is("stablehlo.return") ||
         op.is("sdy.return");
}

} // namespace

std::vector<std::vector<Operation *>> orderWithCombinedCollectives(
    Block &block, const CombineOptions &options,
    const std::function<std::optional<CombineCandidate>(Operation &)>
        &candidate) {
  std::vector<Operation *> ops;
  Operation *terminator = nullptr;
  for (Operation &op : block) {
    if (isTerminator(op) && !op.nextInBlock())
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
  if (options.enabled) {
    std::unordered_map<const Operation *, size_t> index;
    for (size_t i = 0; i < ops.size(); ++i)
      index[ops[i]] = i;
    const std::vector<std::vector<size_t>> preds =
        blockPredecessors(ops, index);
    const std::vector<Group> groups =
        formGroups(ops, preds, options, candidate);
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
