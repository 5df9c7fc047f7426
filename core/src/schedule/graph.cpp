// Graph construction and the small queries the scheduler needs.
#include "shardlab/schedule/graph.h"

namespace shardlab::schedule {

std::string_view toString(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return "all-gather";
  case CollectiveKind::AllReduce:
    return "all-reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce-scatter";
  case CollectiveKind::AllToAll:
    return "all-to-all";
  case CollectiveKind::CollectivePermute:
    return "collective-permute";
  case CollectiveKind::None:
    break;
  }
  return "none";
}

std::string_view toString(NodeKind kind) {
  switch (kind) {
  case NodeKind::AsyncStart:
    return "async-start";
  case NodeKind::AsyncDone:
    return "async-done";
  case NodeKind::Nop:
    return "nop";
  case NodeKind::Compute:
    break;
  }
  return "compute";
}

int64_t Graph::addNode(Node node) {
  nodes_.push_back(std::move(node));
  adjacency_valid_ = false;
  return size() - 1;
}

void Graph::addEdge(int64_t from, int64_t to, double latency_us, bool data) {
  edges_.push_back({from, to, latency_us, data});
  adjacency_valid_ = false;
}

void Graph::linkAsyncPair(int64_t start, int64_t done, double latency_us) {
  node(start).partner = done;
  node(done).partner = start;
  addEdge(start, done, latency_us, true);
}

namespace {

// `adjacency` of `nodes` nodes: the edge indices `endOf(edge)` names, by
// node, in edge order (a counting sort).
template <typename EndOf>
void fill(std::vector<int64_t> &offsets, std::vector<int64_t> &by_node,
          size_t nodes, size_t edges, EndOf endOf) {
  offsets.assign(nodes + 1, 0);
  for (size_t e = 0; e < edges; ++e)
    ++offsets[size_t(endOf(e)) + 1];
  for (size_t i = 0; i < nodes; ++i)
    offsets[i + 1] += offsets[i];
  by_node.resize(edges);
  std::vector<int64_t> next(offsets.begin(), offsets.end() - 1);
  for (size_t e = 0; e < edges; ++e)
    by_node[size_t(next[size_t(endOf(e))]++)] = int64_t(e);
}

} // namespace

void Graph::buildAdjacency() const {
  fill(succ_.offsets, succ_.edges, nodes_.size(), edges_.size(),
       [&](size_t e) { return edges_[e].from; });
  fill(pred_.offsets, pred_.edges, nodes_.size(), edges_.size(),
       [&](size_t e) { return edges_[e].to; });
  adjacency_valid_ = true;
}

std::span<const int64_t> Graph::successors(int64_t i) const {
  if (!adjacency_valid_)
    buildAdjacency();
  return succ_.of(i);
}

std::span<const int64_t> Graph::predecessors(int64_t i) const {
  if (!adjacency_valid_)
    buildAdjacency();
  return pred_.of(i);
}

int64_t Graph::bufferOf(int64_t i) const {
  const Node &n = node(i);
  if (n.in_place_of >= 0)
    return n.in_place_of;
  return n.kind == NodeKind::AsyncDone && n.partner >= 0 ? n.partner : i;
}

std::vector<int64_t> Graph::topologicalOrder() const {
  std::vector<int64_t> indegree(nodes_.size(), 0), order, stack;
  for (const Edge &e : edges_)
    ++indegree[size_t(e.to)];
  for (int64_t i = size() - 1; i >= 0; --i)
    if (indegree[size_t(i)] == 0)
      stack.push_back(i);
  while (!stack.empty()) {
    const int64_t n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (int64_t e : successors(n))
      if (--indegree[size_t(edges_[size_t(e)].to)] == 0)
        stack.push_back(edges_[size_t(e)].to);
  }
  if (order.size() != nodes_.size())
    order.clear();
  return order;
}

} // namespace shardlab::schedule
