// Export benchmark: the full -sdy-propagation-pipeline, then
// -sdy-export-pipeline with explicit collectives, then the per-device steps
// (perDeviceSteps: resolve permutation factors, lower their reshards, pad,
// convert to local; the program the scheduler reads, the end of the
// "partition" pipeline), on the modules given on the command line (made by
// bench/gen_module.py; bench/run_export_bench.sh makes 10k and 100k ops). Prints time per stage, ops/s over both, and the
// heap in use (mallinfo2) per op after each stage, the larger one reported.
// With --timing first, also prints every pass's wall time per module.
#include "bench_common.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/support/file_io.h"
#include "shardlab/text/text.h"

#include <chrono>
#include <cstdio>
#include <string>

using namespace shardlab;
using namespace shardlab::bench;

namespace {

struct Measurement {
  double propagate_s = 0, export_s = 0, local_s = 0;
  double cpu_s = 0; // CPU time of all stages: less moved by other load
  size_t ops = 0, heap = 0;
};

bool runPass(Module &module, const char *flag, const char *options) {
  PassPipeline pipeline;
  DiagnosticEngine diags;
  return appendPass(pipeline, flag, options).ok() &&
         runPassPipeline(module, pipeline, diags);
}

bool measure(const std::string &text, Measurement &r, PassTiming *timing) {
  DiagnosticEngine diags;
  size_t heap_before = heapInUse();
  auto module = parseModule(text, diags);
  if (!module)
    return false;
  r.ops = countOps(module->op());
  module->timing = timing;
  double cpu_start = cpuSeconds();
  auto start = std::chrono::steady_clock::now();
  if (!runPass(*module, "sdy-propagation-pipeline", ""))
    return false;
  r.propagate_s = secondsSince(start);
  r.heap = heapInUse() - heap_before;
  start = std::chrono::steady_clock::now();
  if (!runPass(*module, "sdy-export-pipeline",
               "enable-insert-explicit-collectives=true"))
    return false;
  r.export_s = secondsSince(start);
  start = std::chrono::steady_clock::now();
  for (const auto &[flag, options] : perDeviceSteps())
    if (!runPass(*module, std::string(flag).c_str(),
                 std::string(options).c_str()))
      return false;
  r.local_s = secondsSince(start);
  r.cpu_s = cpuSeconds() - cpu_start;
  r.heap = std::max(r.heap, heapInUse() - heap_before);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  bool timing = argc > 1 && std::string(argv[1]) == "--timing";
  int first = timing ? 2 : 1;
  if (argc <= first) {
    std::fprintf(stderr, "usage: bench_export [--timing] MODULE.mlir...\n");
    return 2;
  }
  std::printf("%-28s %9s %12s %10s %10s %10s %10s %10s %9s\n", "module", "ops",
              "propagate s", "export s", "local s", "total s", "cpu s",
              "kops/s", "heap/op");
  for (int i = first; i < argc; ++i) {
    std::string text;
    if (!shardlab::readFile(argv[i], text)) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 1;
    }
    Measurement r;
    PassTiming passes;
    if (!measure(text, r, timing ? &passes : nullptr)) {
      std::fprintf(stderr, "%s: a pass failed\n", argv[i]);
      return 1;
    }
    double total = r.propagate_s + r.export_s + r.local_s;
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    std::printf("%-28s %9zu %12.3f %10.3f %10.3f %10.3f %10.3f %10.1f %9.0f\n",
                name.c_str(), r.ops, r.propagate_s, r.export_s, r.local_s,
                total, r.cpu_s, r.ops / 1e3 / total,
                double(r.heap) / double(r.ops));
    if (timing)
      std::printf("%s", formatPassTiming(passes).c_str());
  }
  return 0;
}
