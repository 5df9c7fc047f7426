// The gpu stage's passes: what XLA's GPU compiler does to the per-device
// program (after sdy-convert-global-to-local) that changes which
// collectives run. The scheduler runs them on every program it estimates
// (schedule/program.cpp, toPerDevice), as XLA runs them on every program
// it compiles.
#include "gpu_passes.h"
#include "../stages.h"

namespace shardlab {

void addGpuPasses(std::vector<PassInfo> &passes) {
  passes.push_back(
      {"shardlab-reduce-scatter-creator",
       "gpu",
       "An all-reduce whose reader keeps one device's part is a "
       "reduce-scatter",
       "On the per-device program, as XLA's GPU compiler "
       "(ReduceScatterCreator): an all_reduce read only by a dynamic_slice "
       "that keeps 1/n of one dimension, at an offset looked up by "
       "partition_id in a constant table that gives the n members of every "
       "group the n parts, is a reduce_scatter along that dimension (each "
       "group's members listed in the order of their parts). The rule, "
       "with a worked example, heads reduce_scatter_creator.cpp.",
       {},
       reduceScatterCreatorPass});
}

} // namespace shardlab
