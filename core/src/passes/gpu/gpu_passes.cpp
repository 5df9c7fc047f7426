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
      {"shardlab-all-reduce-reassociate",
       "gpu",
       "The sum of two all-reduced values is the all-reduce of their sum",
       "On the per-device program, as XLA's GPU compiler "
       "(AllReduceReassociate): an add of two all_reduces that sum over the "
       "same groups, each read by nothing else, is one all_reduce of the "
       "add of their operands; a chain folds into one. Runs before "
       "-shardlab-reduce-scatter-creator, which then makes a reduce-scatter "
       "of the one all-reduce when its reader keeps a part. The rule, with "
       "a worked example, heads all_reduce_reassociate.cpp.",
       {},
       allReduceReassociatePass});
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
       "group's members listed in the order of their parts); several such "
       "slices keeping the same part count as one, as XLA's common-"
       "subexpression elimination leaves them. The rule, "
       "with a worked example, heads reduce_scatter_creator.cpp.",
       {},
       reduceScatterCreatorPass});
}

} // namespace shardlab
