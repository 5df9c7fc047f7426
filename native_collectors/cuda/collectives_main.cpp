// shardlab-collect-collectives: NCCL collective sweep -> collective table.
#include "collectives_runner.h"
#include "progress.h"
#include "shardlab/collectors/metadata.h"

#include <cstdio>

using namespace shardlab::collectors;

namespace {

// --dry-run: the plan for --nodes x -g GPUs (8 per node unless given).
int dryRun(const CollectiveOptions &o) {
  Topology t;
  t.ranks_per_node = o.ngpus > 0 ? o.ngpus : 8;
  t.world = t.ranks_per_node * o.nodes;
  t.partition_size = o.partition_size > 0 ? o.partition_size : t.ranks_per_node;
  Result<CollectivePlan> plan = planCollectives(o, t);
  if (!plan) {
    std::fprintf(stderr, "error: %s\n", plan.error().message.c_str());
    return 2;
  }
  std::printf("%s", formatCollectivePlan(*plan, o).c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  Result<CollectiveOptions> opts = parseCollectiveOptions(args);
  if (!opts) {
    std::fprintf(stderr, "error: %s\n", opts.error().message.c_str());
    return 2;
  }
  if (opts->help || opts->version) {
    std::printf("%s", opts->help ? collectiveHelp().c_str() : "");
    if (opts->version)
      std::printf("shardlab-collect-collectives %s\n", kCollectorVersion);
    return 0;
  }
  if (opts->dry_run)
    return dryRun(*opts);
  try {
    return runCollectiveSweep(*opts, args, &argc, &argv);
  } catch (const CollectorError &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
