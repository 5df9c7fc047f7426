// scheduleGraph: validation, the scheduling run, and what is derived from
// the final order (timeline, XLA's forward statistics, totals, bounds).
#include "scheduler_state.h"

#include <algorithm>

namespace shardlab::schedule {
namespace detail {
void runScheduler(State &s, const std::vector<int64_t> &topo);
}

namespace {

double asyncLatency(const Graph &g, int64_t start) {
  for (int64_t e : g.successors(start)) {
    const Edge &edge = g.edges()[size_t(e)];
    if (edge.to == g.node(start).partner)
      return edge.latency_us;
  }
  return 0;
}

// Forward time = total − (ready_time + cost), as ComputationScheduleToProto.
void fillTimeline(const detail::State &s, Schedule &out) {
  const Graph &g = s.graph;
  out.step_time_us = s.current_time;
  out.order.assign(s.reversed.rbegin(), s.reversed.rend());
  out.timing.assign(size_t(g.size()), {});
  for (int64_t n = 0; n < g.size(); ++n) {
    NodeTiming &t = out.timing[size_t(n)];
    t.end_us = s.current_time - s.nodes[size_t(n)].ready_time;
    t.start_us = t.end_us - g.node(n).cost_us;
    t.live_bytes = s.live_bytes[size_t(n)];
    t.reason = s.reasons[size_t(n)];
  }
  for (int64_t n = 0; n < g.size(); ++n)
    if (g.node(n).kind == NodeKind::AsyncStart) {
      NodeTiming &t = out.timing[size_t(n)];
      t.transfer_start_us = t.end_us;
      t.transfer_end_us = t.end_us + asyncLatency(g, n);
    }
}

// Per node, whether a kernel (a compute node that costs anything) reads
// what it gives, directly or through other nodes; `order` is topological.
std::vector<bool> feedsKernel(const Graph &g,
                              const std::vector<int64_t> &order) {
  std::vector<bool> feeds(size_t(g.size()), false);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int64_t e : g.successors(*it)) {
      const int64_t to = g.edges()[size_t(e)].to;
      const Node &user = g.node(to);
      if ((user.kind == NodeKind::Compute && user.cost_us > 0) ||
          feeds[size_t(to)]) {
        feeds[size_t(*it)] = true;
        break;
      }
    }
  return feeds;
}

// A done's collective in the totals, each of its copies: its transfer's
// time `comm`, the part the compute stream waited for, the rest hidden.
void addDone(const Graph &g, int64_t done, double comm, double wasted,
             bool feeds_kernel, Schedule &out) {
  const Node &node = g.node(done);
  const double copies = double(node.repeat);
  out.timing[size_t(done)].exposed_us = wasted;
  KindTotals &k = out.per_kind[size_t(node.collective)];
  k.count += node.repeat;
  k.bytes += node.repeat * g.node(node.partner).output_bytes;
  k.comm_us += copies * comm;
  k.exposed_us += copies * wasted;
  k.hidden_us += copies * (comm - wasted);
  out.comm_us += copies * comm;
  out.exposed_comm_us += copies * wasted;
  if (!feeds_kernel)
    out.results_only_comm_us += copies * wasted;
}

// XLA's LatencyHidingStatistics: one compute stream, collectives progress
// in the background, a done waits for whatever is left of its transfer.
// A node run `repeat` times counts that often, each copy busy and waiting
// as the one scheduled: the copies not emitted add their time to the step
// (`extra_us`), as the iterations of a loop add up.
void forwardStatistics(const Graph &g, Schedule &out, double &extra_us) {
  std::vector<double> started(size_t(g.size()), 0);
  const std::vector<bool> feeds = feedsKernel(g, out.order);
  double now = 0;
  extra_us = 0;
  out.results_only_comm_us = 0;
  for (int64_t n : out.order) {
    const Node &node = g.node(n);
    const double copies = double(node.repeat);
    now += node.cost_us;
    extra_us += (copies - 1) * node.cost_us;
    if (node.kind == NodeKind::AsyncStart)
      started[size_t(n)] = now;
    if (node.kind != NodeKind::AsyncDone || node.partner < 0)
      continue;
    const double latency = asyncLatency(g, node.partner);
    const double wasted =
        std::max(0.0, latency - (now - started[size_t(node.partner)]));
    addDone(g, n, latency, wasted, feeds[size_t(n)], out);
    now += wasted;
    extra_us += (copies - 1) * wasted;
  }
  out.forward_sim_us = now + extra_us;
}

// The final order run forward with kernels and transfers slowing each other
// (OverlapSlowdown): one compute stream; transfers progress in the
// background, at 1/comm of their speed while a kernel runs, and kernels at
// 1/compute of theirs while a transfer is in flight. Rewrites the timeline
// and the totals forwardStatistics gave; a node run `repeat` times adds its
// copies as forwardStatistics does.
class ContendedRun {
public:
  ContendedRun(const Graph &g, Schedule &out)
      : g_(g), out_(out), slow_(out.config.overlap_slowdown),
        left_(size_t(g.size()), 0) {}

  void run() {
    const std::vector<bool> feeds = feedsKernel(g_, out_.order);
    double extra = 0;
    resetTotals();
    for (int64_t n : out_.order) {
      const Node &node = g_.node(n);
      NodeTiming &t = out_.timing[size_t(n)];
      const double began = now_, lost_before = out_.contention_us;
      advance(node.cost_us, node.kind == NodeKind::Compute);
      // A done runs under the end of its transfer, as in XLA's statistics,
      // and ends once the transfer has (the stall before it).
      const bool done = node.kind == NodeKind::AsyncDone && node.partner >= 0;
      if (done)
        account(n, waitFor(node.partner), feeds[size_t(n)]);
      t.end_us = now_;
      t.start_us = done ? now_ - node.cost_us : began;
      if (node.kind == NodeKind::AsyncStart) {
        t.transfer_start_us = now_;
        left_[size_t(n)] = asyncLatency(g_, n);
        active_.push_back(n);
        retire(); // a transfer of no time is over at once
      }
      const double copies = double(node.repeat) - 1;
      extra += copies * (now_ - began);
      out_.contention_us += copies * (out_.contention_us - lost_before);
    }
    out_.step_time_us = out_.forward_sim_us = now_ + extra;
  }

private:
  void resetTotals() {
    out_.comm_us = out_.exposed_comm_us = out_.results_only_comm_us = 0;
    out_.contention_us = 0;
    for (KindTotals &k : out_.per_kind)
      k = KindTotals{};
  }

  // Runs `work` us of the compute stream; a kernel slows and is slowed.
  void advance(double work, bool kernel) {
    while (work > 0) {
      const bool contended = kernel && !active_.empty();
      const double kc = contended ? slow_.compute : 1.0,
                   km = contended ? slow_.comm : 1.0;
      double dt = work * kc;
      int64_t first = -1;
      for (int64_t a : active_)
        if (left_[size_t(a)] * km < dt) {
          dt = left_[size_t(a)] * km;
          first = a;
        }
      work = first < 0 ? 0 : work - dt / kc;
      if (contended)
        out_.contention_us += dt - dt / kc;
      progress(dt, km, first);
    }
  }

  // Waits with the compute stream idle until `start`'s transfer is over.
  double waitFor(int64_t start) {
    if (std::find(active_.begin(), active_.end(), start) == active_.end())
      return 0;
    const double wait = left_[size_t(start)];
    progress(wait, 1.0, start);
    return wait;
  }

  // Every active transfer moves on by dt of wall time at 1/km of its
  // speed; `ends` (when set) is the one whose end dt reaches.
  void progress(double dt, double km, int64_t ends) {
    now_ += dt;
    for (int64_t a : active_)
      left_[size_t(a)] = a == ends ? 0 : left_[size_t(a)] - dt / km;
    retire();
  }

  void retire() {
    for (int64_t a : active_)
      if (left_[size_t(a)] <= 0)
        out_.timing[size_t(a)].transfer_end_us = now_;
    active_.erase(
        std::remove_if(active_.begin(), active_.end(),
                       [&](int64_t a) { return left_[size_t(a)] <= 0; }),
        active_.end());
  }

  // A done's totals: its transfer's time, slowed where it overlapped a
  // kernel.
  void account(int64_t done, double wasted, bool feeds_kernel) {
    const NodeTiming &start = out_.timing[size_t(g_.node(done).partner)];
    addDone(g_, done, start.transfer_end_us - start.transfer_start_us, wasted,
            feeds_kernel, out_);
  }

  const Graph &g_;
  Schedule &out_;
  const OverlapSlowdown slow_;
  std::vector<double> left_;    // per start: transfer work left, at speed 1
  std::vector<int64_t> active_; // starts whose transfer is in flight
  double now_ = 0;
};

// EF(n) ≥ EF(p) + max(latency, cost(n)): the constraint the scheduler's
// ready times impose, so the longest path bounds every schedule.
double criticalPath(const Graph &g, const std::vector<int64_t> &topo) {
  std::vector<double> finish(size_t(g.size()), 0);
  double longest = 0;
  for (int64_t n : topo) {
    const double cost = g.node(n).cost_us;
    double f = cost;
    for (int64_t e : g.predecessors(n)) {
      const Edge &edge = g.edges()[size_t(e)];
      f = std::max(f,
                   finish[size_t(edge.from)] + std::max(edge.latency_us, cost));
    }
    finish[size_t(n)] = f;
    longest = std::max(longest, f);
  }
  return longest;
}

void fillTotals(const detail::State &s, const std::vector<int64_t> &topo,
                Schedule &out) {
  const Graph &g = s.graph;
  int64_t peak_live = 0;
  for (int64_t n = 0; n < g.size(); ++n) {
    const Node &node = g.node(n);
    out.compute_us += double(node.repeat) * node.cost_us;
    if (node.is_parameter)
      out.parameter_bytes += node.output_bytes;
    peak_live = std::max(peak_live, s.live_bytes[size_t(n)]);
  }
  out.serial_us = out.compute_us + out.comm_us;
  out.critical_path_us = criticalPath(g, topo);
  out.lower_bound_us = std::max(out.critical_path_us, out.compute_us);
  out.peak_memory_bytes = out.parameter_bytes + peak_live;
  out.memory_over_limit =
      s.config.memory_limit_bytes && peak_live > *s.config.memory_limit_bytes;
  out.limit_overrides = s.limit_overrides;
}

// Empty when the limits are valid: each at least 1, no per-kind limit
// above the stream limit (XLA's CHECK in jax#25404).
std::string checkLimits(const SchedulerConfig &config) {
  if (config.overlap_limit < 1 || config.per_kind_limit < 1 ||
      config.reruns < 0 || config.rerun_factor <= 0 || config.rerun_factor >= 1)
    return "overlap limits must be at least 1, reruns at least 0 and the "
           "rerun factor in (0, 1)";
  const OverlapSlowdown &slow = config.overlap_slowdown;
  if (!(slow.compute >= 1 && slow.compute <= 100 && slow.comm >= 1 &&
        slow.comm <= 100))
    return "overlap slowdowns must be between 1 and 100 (1: none)";
  for (int k = 1; k < kNumCollectiveKinds; ++k) {
    const int limit = kindLimit(config, CollectiveKind(k));
    if (config.kind_limits[size_t(k)] < 0)
      return "per-kind collective limits must be at least 1";
    if (limit > config.overlap_limit)
      return std::string(toString(CollectiveKind(k))) + " limit (" +
             std::to_string(limit) +
             ") exceeds the parallel collective overlap limit (" +
             std::to_string(config.overlap_limit) + ")";
  }
  return "";
}

Schedule scheduleOnce(const Graph &graph, const SchedulerConfig &config,
                      const std::vector<int64_t> &topo) {
  detail::State state(graph, config);
  detail::runScheduler(state, topo);
  Schedule out;
  out.config = config;
  fillTimeline(state, out);
  double repeated_us = 0;
  forwardStatistics(graph, out, repeated_us);
  out.step_time_us += repeated_us;
  if (!config.overlap_slowdown.none())
    ContendedRun(graph, out).run();
  fillTotals(state, topo, out);
  return out;
}

// What is live at the peak: the bottom-up run replayed over the final
// order up to the first node (in program order) whose live bytes are the
// peak, so the account is the scheduler's own.
void explainPeak(const Graph &graph, Schedule &out) {
  const int64_t peak_live = out.peak_memory_bytes - out.parameter_bytes;
  const auto at_peak =
      std::find_if(out.order.begin(), out.order.end(), [&](int64_t n) {
        return out.timing[size_t(n)].live_bytes == peak_live;
      });
  if (peak_live <= 0 || at_peak == out.order.end())
    return;
  const int64_t peak = *at_peak;
  detail::MemoryTracker tracker(graph);
  for (auto it = out.order.rbegin(); *it != peak; ++it)
    tracker.apply(*it);
  out.peak_node = peak;
  for (int64_t b : tracker.liveDuring(peak))
    out.peak_live.push_back({b, graph.node(b).output_bytes});
  std::stable_sort(out.peak_live.begin(), out.peak_live.end(),
                   [](const LiveBuffer &a, const LiveBuffer &b) {
                     return a.bytes > b.bytes;
                   });
}

MemoryAttempt attemptOf(const Schedule &s) {
  return {s.config.memory_limit_bytes.value_or(0),
          s.peak_memory_bytes - s.parameter_bytes, s.step_time_us};
}

// XLA's RunImpl: reschedule under a lower limit while the peak stays above
// the initial one; the last schedule is kept.
void rerunUnderLimit(const Graph &graph, const SchedulerConfig &config,
                     const std::vector<int64_t> &topo, Schedule &out) {
  const int64_t initial = *config.memory_limit_bytes;
  std::vector<MemoryAttempt> attempts{attemptOf(out)};
  SchedulerConfig next = config;
  int reruns = 0;
  while (reruns < config.reruns && attempts.back().peak_live_bytes > initial) {
    next.memory_limit_bytes =
        int64_t(double(*next.memory_limit_bytes) * config.rerun_factor);
    out = scheduleOnce(graph, next, topo);
    attempts.push_back(attemptOf(out));
    ++reruns;
  }
  out.memory_over_limit = attempts.back().peak_live_bytes > initial;
  out.memory_attempts = std::move(attempts);
  out.reruns = reruns;
}

} // namespace

Result<Schedule> scheduleGraph(const Graph &graph,
                               const SchedulerConfig &config) {
  const std::string error = checkLimits(config);
  if (!error.empty())
    return makeError(error);
  const std::vector<int64_t> topo = graph.topologicalOrder();
  if (topo.size() != size_t(graph.size()))
    return makeError("the dependency graph has a cycle");
  Schedule out = scheduleOnce(graph, config, topo);
  if (config.memory_limit_bytes)
    rerunUnderLimit(graph, config, topo, out);
  explainPeak(graph, out);
  return out;
}

} // namespace shardlab::schedule
