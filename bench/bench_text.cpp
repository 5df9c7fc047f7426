// Text throughput benchmark: parse, verify and print throughput (MB/s and
// ops/s) and heap bytes per op for the modules given on the command line
// (made by bench/gen_module.py; bench/run_text_bench.sh makes 10k and 100k).
#include "bench_common.h"
#include "shardlab/support/file_io.h"
#include "shardlab/text/text.h"
#include "verify/verifier.h"

#include <chrono>
#include <cstdio>
#include <string>

using namespace shardlab;
using namespace shardlab::bench;

namespace {

struct Measurement {
  double parse_s = 1e9, verify_s = 1e9, print_s = 1e9;
  size_t ops = 0, bytes = 0, printed = 0, heap = 0;
};

bool measure(const std::string &text, int repeats, Measurement &result) {
  result.bytes = text.size();
  for (int i = 0; i < repeats; ++i) {
    DiagnosticEngine diags;
    size_t heap_before = heapInUse();
    auto start = std::chrono::steady_clock::now();
    auto module = parseModule(text, diags);
    result.parse_s = std::min(result.parse_s, secondsSince(start));
    if (!module) {
      std::fprintf(stderr, "parse failed: %s\n",
                   diags.diagnostics().empty()
                       ? "?"
                       : diags.diagnostics()[0].message.c_str());
      return false;
    }
    result.heap = heapInUse() - heap_before;
    start = std::chrono::steady_clock::now();
    verifyModule(*module, diags);
    result.verify_s = std::min(result.verify_s, secondsSince(start));
    start = std::chrono::steady_clock::now();
    std::string printed = printModule(*module);
    result.print_s = std::min(result.print_s, secondsSince(start));
    result.printed = printed.size();
    result.ops = countOps(module->op());
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_text MODULE.mlir...\n");
    return 2;
  }
  std::printf("%-28s %9s %8s %12s %12s %12s %12s %10s\n", "module", "ops", "MB",
              "parse+verify", "parse+verify", "print", "print", "heap/op");
  std::printf("%-28s %9s %8s %12s %12s %12s %12s %10s\n", "", "", "", "MB/s",
              "kops/s", "MB/s", "kops/s", "bytes");
  for (int i = 1; i < argc; ++i) {
    std::string text;
    if (!shardlab::readFile(argv[i], text)) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 1;
    }
    Measurement r;
    if (!measure(text, 3, r))
      return 1;
    double pv = r.parse_s + r.verify_s;
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    std::printf("%-28s %9zu %8.2f %12.1f %12.1f %12.1f %12.1f %10.0f\n",
                name.c_str(), r.ops, r.bytes / 1e6, r.bytes / 1e6 / pv,
                r.ops / 1e3 / pv, r.printed / 1e6 / r.print_s,
                r.ops / 1e3 / r.print_s, double(r.heap) / double(r.ops));
  }
  return 0;
}
