// The scheduler's view of a per-device program: a DAG of nodes (compute ops,
// async collective start/done pairs, zero-cost nops) with busy costs, edge
// latencies (an async pair's edge carries the collective's time), the stream
// each collective runs on, its device groups (for GPU's rule against
// overlapping collectives that share devices) and the buffer bytes each node
// defines (for memory-pressure tracking). Built from a module by
// buildProgram (program.h) or directly by tests and benchmarks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::schedule {

enum class NodeKind { Compute, AsyncStart, AsyncDone, Nop };

enum class CollectiveKind {
  None,
  AllGather,
  AllReduce,
  ReduceScatter,
  AllToAll,
  CollectivePermute,
};
inline constexpr int kNumCollectiveKinds = 6;
std::string_view toString(CollectiveKind kind);
std::string_view toString(NodeKind kind);

/// The device groups of a collective, shared by every node and report entry
/// that stands for it (1,024-device groups, once per loop iteration, were a
/// large share of a schedule's allocations).
using SharedDeviceGroups =
    std::shared_ptr<const std::vector<std::vector<int64_t>>>;

/// A compute node that stands for a kernel fusing several ops: its kind
/// ("loop fusion", "gemm", ...), its ops (`stablehlo.add@12`, root last)
/// and the members besides the root whose results it also writes. One per
/// kernel, shared by every iteration of a loop that runs it.
struct FusionInfo {
  std::string kind;
  std::vector<std::string> members;
  std::vector<std::string> second_outputs;
};

/// One instruction of the per-device program.
struct Node {
  std::string name;
  /// Line of the op it stands for in the module's text (0: none).
  int64_t line = 0;
  NodeKind kind = NodeKind::Compute;
  double cost_us = 0; ///< busy time on the compute stream
  CollectiveKind collective = CollectiveKind::None;
  int64_t partner = -1; ///< start <-> done of an async pair
  int stream = 0;       ///< collective stream (start/done only)
  /// Device groups of the collective (start/done only).
  /// Shared: a loop body's collective is the same call every iteration.
  SharedDeviceGroups device_groups;
  /// Bytes of the buffer this node defines. A done defines none: its users
  /// read the buffer its start allocated.
  int64_t output_bytes = 0;
  bool is_parameter = false; ///< entry parameter: never counted as live
  /// The node whose buffer this one writes its result into, in place (XLA's
  /// in-place input/output pairs: a dynamic_update_slice or scatter whose
  /// target nothing else reads); it then defines no buffer. -1: its own.
  int64_t in_place_of = -1;
  bool force_delay = false;
  std::string explanation; ///< how the cost was estimated
  /// The kernel this compute node stands for, when it fuses several ops
  /// (null otherwise), and the bytes it reads and writes at its boundary.
  std::shared_ptr<const FusionInfo> fusion;
  int64_t bytes_read = 0, bytes_written = 0;
  /// Times the program runs this node. A loop whose iterations are
  /// extrapolated (ProgramOptions::extrapolate_loops) emits one steady
  /// iteration standing for those between its first and its last three:
  /// its nodes carry the count, and the schedule's totals add the copies
  /// not emitted.
  int64_t repeat = 1;
};

/// `from` must finish `latency_us` before `to` starts. A data edge means
/// `to` reads `from`'s buffer.
struct Edge {
  int64_t from = 0;
  int64_t to = 0;
  double latency_us = 0;
  bool data = true;
};

/// Nodes in original (program) order plus edges; adjacency is built lazily.
class Graph {
public:
  int64_t addNode(Node node);
  void addEdge(int64_t from, int64_t to, double latency_us, bool data = true);
  /// Adds an async pair: start -> done with the collective's time.
  void linkAsyncPair(int64_t start, int64_t done, double latency_us);

  int64_t size() const { return int64_t(nodes_.size()); }
  const Node &node(int64_t i) const { return nodes_[size_t(i)]; }
  Node &node(int64_t i) { return nodes_[size_t(i)]; }
  const std::vector<Edge> &edges() const { return edges_; }
  /// Edge indices leaving / entering node i, in the order the edges were
  /// added (valid until the next add).
  std::span<const int64_t> successors(int64_t i) const;
  std::span<const int64_t> predecessors(int64_t i) const;
  /// Node whose buffer a data edge from `i` carries (the start for a done,
  /// the target's owner for an in-place update).
  int64_t bufferOf(int64_t i) const;
  /// Nodes in a topological order; empty when the graph has a cycle.
  std::vector<int64_t> topologicalOrder() const;

private:
  void buildAdjacency() const;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  mutable bool adjacency_valid_ = false;
  /// Edges by node, compressed: node i's are edges[offsets[i]] up to
  /// edges[offsets[i + 1]] (a few arrays for graphs of 10^4-10^5 nodes,
  /// where a vector per node cost a fifth of a schedule's allocations).
  struct Adjacency {
    std::vector<int64_t> offsets, edges;
    std::span<const int64_t> of(int64_t i) const {
      const size_t from = size_t(offsets[size_t(i)]);
      return {edges.data() + from, size_t(offsets[size_t(i) + 1]) - from};
    }
  };
  mutable Adjacency succ_, pred_;
};

} // namespace shardlab::schedule
