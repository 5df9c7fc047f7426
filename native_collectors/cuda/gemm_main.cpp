// shardlab-collect-gemm: cuBLASLt GEMM sweep -> shardlab GEMM table.
#include "gemm_runner.h"
#include "progress.h"
#include "shardlab/collectors/metadata.h"

#include <cstdio>

using namespace shardlab::collectors;

int main(int argc, char **argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  Result<GemmOptions> opts = parseGemmOptions(args);
  if (!opts) {
    std::fprintf(stderr, "error: %s\n", opts.error().message.c_str());
    return 2;
  }
  if (opts->help || opts->version) {
    std::printf("%s", opts->help ? gemmHelp().c_str() : "");
    if (opts->version)
      std::printf("shardlab-collect-gemm %s\n", kCollectorVersion);
    return 0;
  }
  if (opts->dry_run) {
    Result<GemmPlan> plan = planGemms(*opts, 0);
    if (!plan) {
      std::fprintf(stderr, "error: %s\n", plan.error().message.c_str());
      return 2;
    }
    std::printf("%s", formatGemmPlan(*plan, *opts).c_str());
    return 0;
  }
  try {
    return runGemmSweep(*opts, args);
  } catch (const CollectorError &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
