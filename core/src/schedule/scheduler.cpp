// The bottom-up list-scheduling loop (XLA's DefaultSchedulerCore).
#include "scheduler_state.h"

#include <algorithm>

namespace shardlab::schedule {
namespace detail {

State::State(const Graph &g, const SchedulerConfig &c)
    : graph(g), config(c), nodes(size_t(g.size())), reasons(size_t(g.size())),
      memory(g), live_bytes(size_t(g.size()), 0) {
  const int resources = numResources(g);
  max_concurrent.assign(size_t(resources), c.overlap_limit);
  for (int k = 0; k + 1 < kNumCollectiveKinds; ++k)
    max_concurrent[size_t(k)] = kindLimit(c, CollectiveKind(k + 1));
  in_flight.assign(size_t(resources), 0);
  users_in_queue.assign(size_t(resources), 0);
}

namespace {

// XLA's InitializeGraphAnalysis: async latency accumulated from the top.
void computeAsyncDepth(State &s, const std::vector<int64_t> &topo) {
  for (int64_t n : topo) {
    const bool done = s.graph.node(n).kind == NodeKind::AsyncDone;
    double depth = 0;
    for (int64_t e : s.graph.predecessors(n)) {
      const Edge &edge = s.graph.edges()[size_t(e)];
      const double from = s.nodes[size_t(edge.from)].async_depth;
      depth = std::max(depth, done ? from + edge.latency_us : from);
    }
    s.nodes[size_t(n)].async_depth = depth;
  }
}

double earliestAfterSuccessors(const State &s, int64_t n) {
  double t = s.current_time;
  for (int64_t e : s.graph.successors(n)) {
    const Edge &edge = s.graph.edges()[size_t(e)];
    t = std::max(t, s.nodes[size_t(edge.to)].ready_time + edge.latency_us);
  }
  return t;
}

void makeReady(State &s, int64_t n) {
  NodeState &ns = s.nodes[size_t(n)];
  ns.ready_time = earliestAfterSuccessors(s, n);
  const Node &node = s.graph.node(n);
  if (occupiesResource(node))
    for (int r : resourcesOf(node))
      ++s.users_in_queue[size_t(r)];
  (node.kind == NodeKind::Nop ? s.nops : s.ready).push_back(n);
  if (ns.ready_time > s.current_time)
    s.next_ready.push({ns.ready_time, n});
}

void updateResources(State &s, int64_t n) {
  const Node &node = s.graph.node(n);
  for (int r : resourcesOf(node)) {
    if (releasesResource(node)) {
      ++s.max_concurrent[size_t(r)];
      --s.in_flight[size_t(r)];
    } else {
      --s.max_concurrent[size_t(r)];
      --s.users_in_queue[size_t(r)];
      ++s.in_flight[size_t(r)];
    }
  }
  if (occupiesResource(node))
    s.dones_in_flight.push_back(n);
  if (releasesResource(node))
    s.dones_in_flight.erase(std::remove(s.dones_in_flight.begin(),
                                        s.dones_in_flight.end(), node.partner),
                            s.dones_in_flight.end());
}

void scheduleNode(State &s, int64_t n) {
  s.reversed.push_back(n);
  s.nodes[size_t(n)].scheduled = true;
  updateResources(s, n);
  const double at = earliestAfterSuccessors(s, n);
  s.nodes[size_t(n)].ready_time = at;
  s.current_time = at + s.graph.node(n).cost_us;
  while (!s.next_ready.empty() &&
         (s.next_ready.top().first < s.current_time ||
          s.nodes[size_t(s.next_ready.top().second)].scheduled))
    s.next_ready.pop();
  s.live_bytes[size_t(n)] = s.memory.apply(n);
  for (int64_t e : s.graph.predecessors(n)) {
    const int64_t p = s.graph.edges()[size_t(e)].from;
    if (--s.nodes[size_t(p)].outdegree == 0)
      makeReady(s, p);
  }
}

// Scans the ready set as FindAndExtractBestNodeAvailable does; when every
// node crosses a limit, takes the best one anyway and counts an override.
int64_t extractBest(State &s) {
  if (!s.nops.empty()) {
    const int64_t n = s.nops.back();
    s.nops.pop_back();
    s.reasons[size_t(n)] = "kIsNop";
    return n;
  }
  size_t chosen = s.ready.size();
  const char *reason = "kOnlyCandidate";
  for (int pass = 0; pass < 2 && chosen == s.ready.size(); ++pass) {
    Candidate best;
    for (size_t i = 0; i < s.ready.size(); ++i) {
      if (pass == 0 && crossesOverlapLimit(s, s.ready[i]))
        continue;
      Candidate c{s.ready[i], {}, {}};
      if (best.node < 0 || isBetter(s, c, best, &reason)) {
        best = c;
        chosen = i;
      }
    }
    if (pass == 1)
      ++s.limit_overrides;
  }
  const int64_t n = s.ready[chosen];
  std::swap(s.ready[chosen], s.ready.back());
  s.ready.pop_back();
  s.reasons[size_t(n)] = reason;
  return n;
}

} // namespace

void runScheduler(State &s, const std::vector<int64_t> &topo) {
  computeAsyncDepth(s, topo);
  for (int64_t i = 0; i < s.graph.size(); ++i)
    s.nodes[size_t(i)].outdegree = int64_t(s.graph.successors(i).size());
  for (int64_t i = s.graph.size() - 1; i >= 0; --i)
    if (s.nodes[size_t(i)].outdegree == 0)
      makeReady(s, i);
  while (!s.ready.empty() || !s.nops.empty())
    scheduleNode(s, extractBest(s));
}

} // namespace detail

int kindLimit(const SchedulerConfig &config, CollectiveKind kind) {
  const int own = config.kind_limits[size_t(kind)];
  return own > 0 ? own : config.per_kind_limit;
}

int64_t gpuMemoryLimitBytes(int64_t device_memory_bytes,
                            int64_t parameter_bytes, double slop) {
  const double base = 0.8 * double(device_memory_bytes);
  return int64_t((base - double(parameter_bytes)) * slop);
}

} // namespace shardlab::schedule
