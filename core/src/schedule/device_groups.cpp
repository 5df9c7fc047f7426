// Device groups and permutation pairs of sdy collectives, as the
// partitioner computes them (sharding/device_layout.h).
#include "shardlab/schedule/program.h"

#include "sharding/device_layout.h"

namespace shardlab::schedule {

std::vector<std::vector<int64_t>>
deviceGroups(const Mesh &mesh, const std::vector<AxisRef> &axes) {
  return shardlab::deviceGroups(mesh, axes);
}

std::vector<std::pair<int64_t, int64_t>>
permutePairs(const Mesh &mesh, const TensorSharding &from,
             const TensorSharding &to) {
  std::vector<std::pair<int64_t, int64_t>> moves;
  for (const auto &pair : permutationPairs(mesh, from, mesh, to))
    if (pair.first != pair.second)
      moves.push_back(pair);
  return moves;
}

} // namespace shardlab::schedule
