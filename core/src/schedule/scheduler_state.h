// Internal state of the bottom-up list scheduler (scheduler*.cpp only).
#pragma once

#include "schedule/shared_devices.h"
#include "shardlab/schedule/scheduler.h"

#include <functional>
#include <queue>
#include <utility>

namespace shardlab::schedule::detail {

/// Live temporaries, bottom-up: scheduling a node makes its operand buffers
/// live and releases the buffer it defines. Parameters never count.
class MemoryTracker {
public:
  explicit MemoryTracker(const Graph &graph);
  /// Bytes `node` would allocate and release if scheduled now.
  std::pair<int64_t, int64_t> difference(int64_t node) const;
  /// Applies `node`; returns the bytes live while it runs.
  int64_t apply(int64_t node);
  int64_t usage() const { return usage_; }
  /// The buffers live while `node` runs, were it applied now: those live
  /// and the operand buffers it would make live.
  std::vector<int64_t> liveDuring(int64_t node) const;

private:
  template <typename Fn> void forEachNewOperand(int64_t node, Fn fn) const;
  const Graph &graph_;
  std::vector<char> live_;
  mutable std::vector<int64_t> stamp_;
  mutable int64_t stamp_counter_ = 0;
  int64_t usage_ = 0;
};

struct NodeState {
  double ready_time = 0;
  double async_depth = 0;
  int64_t outdegree = 0;
  bool scheduled = false;
};

/// Per-candidate cached values used by the ready-set comparator.
struct Candidate {
  int64_t node = -1;
  std::optional<bool> constrained;
  std::optional<std::pair<int64_t, int64_t>> memory; // (increase, peak)
};

using ReadyHeap = std::priority_queue<std::pair<double, int64_t>,
                                      std::vector<std::pair<double, int64_t>>,
                                      std::greater<std::pair<double, int64_t>>>;

struct State {
  State(const Graph &g, const SchedulerConfig &c);
  const Graph &graph;
  SchedulerConfig config;
  std::vector<NodeState> nodes;
  std::vector<int64_t> ready, nops, reversed;
  std::vector<std::string> reasons; // by node
  std::vector<int> max_concurrent, in_flight, users_in_queue;
  std::vector<int64_t> dones_in_flight;
  ReadyHeap next_ready;
  double current_time = 0;
  bool memory_computed = false;
  MemoryTracker memory;
  std::vector<int64_t> live_bytes; // by node
  int64_t limit_overrides = 0;
  SharedDeviceRule shared_devices;
};

/// Resource ids a start releases / a done occupies: its kind and stream.
std::vector<int> resourcesOf(const Node &node);
int numResources(const Graph &graph);
bool occupiesResource(const Node &node);
bool releasesResource(const Node &node);

/// Whether scheduling `node` now would exceed a limit (XLA's
/// crosses-overlap-limit check plus GPU's shared-device rule).
bool crossesOverlapLimit(const State &state, int64_t node);
/// XLA's ReadySetLt: whether `a` is better than `b`; sets `reason`.
bool isBetter(State &state, Candidate &a, Candidate &b, const char **reason);

} // namespace shardlab::schedule::detail
