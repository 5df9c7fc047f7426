// The cuBLASLt GEMM sweep (shardlab-collect-gemm): measures every planned
// point on one GPU and writes the table; throws CollectorError on fatal
// errors (no GPU, unwritable output, CUDA failures).
#pragma once

#include "shardlab/collectors/gemm_plan.h"

#include <string>
#include <vector>

namespace shardlab::collectors {

/// Runs the sweep; `args` are recorded in the table. Returns the exit code.
int runGemmSweep(const GemmOptions &opts, const std::vector<std::string> &args);

} // namespace shardlab::collectors
