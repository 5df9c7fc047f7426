// The NCCL collective sweep (shardlab-collect-collectives): sets up the
// processes and communicators, measures every planned point and (on rank 0)
// writes the table. Throws CollectorError on fatal errors.
#pragma once

#include "shardlab/collectors/collective_plan.h"

#include <string>
#include <vector>

namespace shardlab::collectors {

/// Runs the sweep; returns the exit code (1 if a point failed its check).
int runCollectiveSweep(const CollectiveOptions &opts,
                       const std::vector<std::string> &args, int *argc,
                       char ***argv);

} // namespace shardlab::collectors
