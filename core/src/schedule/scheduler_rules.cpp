// The ready-set comparator (XLA's ReadySetLt), the overlap-limit check and
// the memory-pressure tracker of the list scheduler.
#include "scheduler_state.h"

#include <algorithm>
#include <cmath>

namespace shardlab::schedule::detail {

std::vector<int> resourcesOf(const Node &node) {
  if (node.kind != NodeKind::AsyncStart && node.kind != NodeKind::AsyncDone)
    return {};
  return {int(node.collective) - 1, kNumCollectiveKinds - 1 + node.stream};
}

int numResources(const Graph &graph) {
  int streams = 1;
  for (int64_t i = 0; i < graph.size(); ++i)
    streams = std::max(streams, graph.node(i).stream + 1);
  return kNumCollectiveKinds - 1 + streams;
}

bool occupiesResource(const Node &node) {
  return node.kind == NodeKind::AsyncDone;
}

bool releasesResource(const Node &node) {
  return node.kind == NodeKind::AsyncStart;
}

namespace {

bool isConstrained(const State &s, Candidate &c) {
  if (!c.constrained) {
    c.constrained = false;
    for (int r : resourcesOf(s.graph.node(c.node)))
      if (s.max_concurrent[size_t(r)] == 0 && s.users_in_queue[size_t(r)] > 0)
        c.constrained = true;
  }
  return *c.constrained;
}

std::pair<int64_t, int64_t> memoryChange(const State &s, Candidate &c) {
  if (!c.memory) {
    const auto [alloc, freed] = s.memory.difference(c.node);
    c.memory = std::make_pair(alloc - freed, alloc);
  }
  return *c.memory;
}

bool hasDoneOperand(const Graph &g, int64_t node) {
  for (int64_t e : g.predecessors(node)) {
    const Edge &edge = g.edges()[size_t(e)];
    if (edge.data && g.node(edge.from).kind == NodeKind::AsyncDone)
      return true;
  }
  return false;
}

int readyIfScheduled(const State &s, int64_t node) {
  int count = 0;
  for (int64_t e : s.graph.predecessors(node))
    if (s.nodes[size_t(s.graph.edges()[size_t(e)].from)].outdegree == 1)
      ++count;
  return count;
}

// One rule: decisive when exactly one side satisfies it.
struct Rules {
  const char **reason;
  int verdict = 0; // 1: a, -1: b, 0: undecided
  bool operator()(bool a, bool b, const char *name) {
    if (a == b)
      return false;
    verdict = a ? 1 : -1;
    *reason = name;
    return true;
  }
};

bool memoryRules(State &s, Candidate &a, Candidate &b, Rules &rule) {
  if (!s.config.memory_limit_bytes ||
      s.memory.usage() <= *s.config.memory_limit_bytes / 2)
    return false;
  s.memory_computed = true;
  const int64_t limit = *s.config.memory_limit_bytes, usage = s.memory.usage();
  const auto ma = memoryChange(s, a), mb = memoryChange(s, b);
  if (usage >= limit && rule(ma.first < mb.first, mb.first < ma.first,
                             "kDecreaseMemoryOverLimit"))
    return true;
  return rule(ma.second + usage <= limit, mb.second + usage <= limit,
              "kMemoryPeakOverLimit");
}

bool zeroDepthStart(State &s, Candidate &c) {
  const Node &n = s.graph.node(c.node);
  return releasesResource(n) && s.nodes[size_t(c.node)].async_depth == 0 &&
         !isConstrained(s, c);
}

bool aggressiveRules(State &s, Candidate &a, Candidate &b, Rules &rule) {
  const NodeState &na = s.nodes[size_t(a.node)], &nb = s.nodes[size_t(b.node)];
  if (rule(na.async_depth > nb.async_depth, nb.async_depth > na.async_depth,
           "kAsyncDepth"))
    return true;
  if (s.next_ready.empty())
    return false;
  const double gap = s.next_ready.top().first - s.current_time;
  const double da = std::abs(gap - s.graph.node(a.node).cost_us);
  const double db = std::abs(gap - s.graph.node(b.node).cost_us);
  return rule(da < db, db < da, "kAvoidWaste");
}

bool lateRules(State &s, Candidate &a, Candidate &b, Rules &rule) {
  if (rule(hasDoneOperand(s.graph, a.node), hasDoneOperand(s.graph, b.node),
           "kUnlockDone"))
    return true;
  if (s.config.aggressive) {
    const int ra = readyIfScheduled(s, a.node),
              rb = readyIfScheduled(s, b.node);
    if (rule(ra > rb, rb > ra, "kCreatesMoreReadyNodes"))
      return true;
  }
  if (s.memory_computed) {
    const auto ma = memoryChange(s, a), mb = memoryChange(s, b);
    if (rule(ma.first < mb.first, mb.first < ma.first, "kDecreaseMemory"))
      return true;
  }
  return false;
}

bool decide(State &s, Candidate &a, Candidate &b, Rules &rule) {
  const Node &na = s.graph.node(a.node), &nb = s.graph.node(b.node);
  if (rule(!na.force_delay, !nb.force_delay, "kForceDelay") ||
      memoryRules(s, a, b, rule) ||
      rule(occupiesResource(na), occupiesResource(nb), "kScheduleDone"))
    return true;
  const double sa =
      std::max(s.nodes[size_t(a.node)].ready_time - s.current_time, 0.0);
  const double sb =
      std::max(s.nodes[size_t(b.node)].ready_time - s.current_time, 0.0);
  if (rule(sa < sb, sb < sa, "kLessStall"))
    return true;
  if (s.config.aggressive &&
      rule(!zeroDepthStart(s, a), !zeroDepthStart(s, b), "kStartAtZeroDepth"))
    return true;
  if (rule(releasesResource(na) && isConstrained(s, a),
           releasesResource(nb) && isConstrained(s, b),
           "kFreeBackedupResource"))
    return true;
  if (s.config.aggressive && aggressiveRules(s, a, b, rule))
    return true;
  return lateRules(s, a, b, rule);
}

} // namespace

bool crossesOverlapLimit(const State &s, int64_t node) {
  const Node &n = s.graph.node(node);
  if (!occupiesResource(n))
    return false;
  for (int r : resourcesOf(n))
    if (s.in_flight[size_t(r)] > 0 && s.max_concurrent[size_t(r)] < 1)
      return true;
  if (!s.config.gpu_no_shared_device_overlap)
    return false;
  for (int64_t other : s.dones_in_flight)
    if (s.shared_devices(n, s.graph.node(other)))
      return true;
  return false;
}

bool isBetter(State &s, Candidate &a, Candidate &b, const char **reason) {
  Rules rule{reason};
  if (decide(s, a, b, rule))
    return rule.verdict > 0;
  *reason = "kOriginalOrder";
  return a.node > b.node;
}

// ---------------------------------------------------------------- memory

MemoryTracker::MemoryTracker(const Graph &graph)
    : graph_(graph), live_(size_t(graph.size()), 0),
      stamp_(size_t(graph.size()), -1) {}

template <typename Fn>
void MemoryTracker::forEachNewOperand(int64_t node, Fn fn) const {
  ++stamp_counter_;
  for (int64_t e : graph_.predecessors(node)) {
    const Edge &edge = graph_.edges()[size_t(e)];
    if (!edge.data)
      continue;
    const int64_t buffer = graph_.bufferOf(edge.from);
    if (live_[size_t(buffer)] || graph_.node(buffer).is_parameter ||
        stamp_[size_t(buffer)] == stamp_counter_)
      continue;
    stamp_[size_t(buffer)] = stamp_counter_;
    fn(buffer);
  }
}

std::pair<int64_t, int64_t> MemoryTracker::difference(int64_t node) const {
  int64_t alloc = 0;
  forEachNewOperand(node,
                    [&](int64_t b) { alloc += graph_.node(b).output_bytes; });
  const bool frees = graph_.bufferOf(node) == node && live_[size_t(node)];
  return {alloc, frees ? graph_.node(node).output_bytes : 0};
}

int64_t MemoryTracker::apply(int64_t node) {
  const auto [alloc, freed] = difference(node);
  const int64_t during = usage_ + alloc;
  forEachNewOperand(node, [&](int64_t b) { live_[size_t(b)] = 1; });
  if (freed > 0 || (graph_.bufferOf(node) == node && live_[size_t(node)]))
    live_[size_t(node)] = 0;
  usage_ += alloc - freed;
  return during;
}

std::vector<int64_t> MemoryTracker::liveDuring(int64_t node) const {
  std::vector<int64_t> out;
  for (size_t b = 0; b < live_.size(); ++b)
    if (live_[b])
      out.push_back(int64_t(b));
  forEachNewOperand(node, [&](int64_t b) { out.push_back(b); });
  return out;
}

} // namespace shardlab::schedule::detail
