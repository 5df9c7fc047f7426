// Scheduling time of the latency-hiding scheduler on synthetic transformer-
// like graphs (layers of GEMMs and elementwise ops with an all-gather per
// layer and an all-reduce per two layers), 10k and 100k nodes.
#include "shardlab/schedule/scheduler.h"

#include <chrono>
#include <cstdio>
#include <random>

using namespace shardlab::schedule;
using shardlab::makeError;
using shardlab::Result;

namespace {

int64_t addOp(Graph &g, double cost, std::vector<int64_t> operands) {
  Node n;
  n.kind = operands.empty() ? NodeKind::Nop : NodeKind::Compute;
  n.is_parameter = operands.empty();
  n.name = "op";
  n.cost_us = cost;
  n.output_bytes = 1 << 20;
  const int64_t id = g.addNode(n);
  for (int64_t o : operands)
    g.addEdge(o, id, 0);
  return id;
}

int64_t addPair(Graph &g, CollectiveKind kind, int64_t operand) {
  Node s;
  s.name = "collective";
  s.kind = NodeKind::AsyncStart;
  s.collective = kind;
  s.device_groups = std::make_shared<const std::vector<std::vector<int64_t>>>(
      std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 4, 5, 6, 7}});
  s.output_bytes = 4 << 20;
  Node d = s;
  d.kind = NodeKind::AsyncDone;
  const int64_t a = g.addNode(s), b = g.addNode(d);
  g.addEdge(operand, a, 0);
  g.linkAsyncPair(a, b, 200);
  return b;
}

Graph makeGraph(int64_t target_nodes) {
  Graph g;
  std::mt19937 rng(7);
  int64_t x = addOp(g, 1, {});
  for (int64_t layer = 0; g.size() < target_nodes; ++layer) {
    const int64_t w =
        addPair(g, CollectiveKind::AllGather, addOp(g, 0, {})); // weights
    int64_t h = addOp(g, 100 + double(rng() % 50), {x, w});
    for (int i = 0; i < 6; ++i)
      h = addOp(g, 5 + double(rng() % 10), {h});
    x = addOp(g, 100, {h, x});
    if (layer % 2 == 1)
      x = addPair(g, CollectiveKind::AllReduce, x);
  }
  return g;
}

double timeMs(const Graph &g, const SchedulerConfig &c, Result<Schedule> &r) {
  const auto t0 = std::chrono::steady_clock::now();
  r = scheduleGraph(g, c);
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

} // namespace

int main() {
  for (int64_t n : {10000, 100000}) {
    Graph g = makeGraph(n);
    Result<Schedule> r = makeError("not run");
    const double ms = timeMs(g, {}, r);
    if (!r) {
      std::printf("nodes %lld: failed: %s\n", (long long)g.size(),
                  r.error().message.c_str());
      return 1;
    }
    std::printf("nodes %lld: schedule %.1f ms, step %.0f us, exposed %.0f us\n",
                (long long)g.size(), ms, r->step_time_us, r->exposed_comm_us);
    // The memory rerun loop: a limit below the unconstrained peak, so
    // the memory rules run and one rerun follows.
    SchedulerConfig limited;
    limited.memory_limit_bytes =
        (r->peak_memory_bytes - r->parameter_bytes) / 2;
    limited.reruns = 1;
    const double limited_ms = timeMs(g, limited, r);
    if (!r)
      return 1;
    std::printf("nodes %lld, memory limit %lld B, %d rerun(s): schedule "
                "%.1f ms, peak live %lld B\n",
                (long long)g.size(), (long long)*limited.memory_limit_bytes,
                r->reruns, limited_ms,
                (long long)(r->peak_memory_bytes - r->parameter_bytes));
  }
  return 0;
}
