// Propagation benchmark: the default propagation stack (op priorities over
// aggressive over the basic driver) on the modules given on the command line
// (made by bench/gen_module.py; bench/run_propagation_bench.sh makes 1k, 10k
// and 100k ops). Prints time, ops/s, heap bytes per op, and the growth
// exponent of time between consecutive modules.
//
// Heap: mallinfo2 (bytes in use) after parsing and after propagation, and
// the peak of live C++ allocations during propagation (this executable
// counts operator new/delete), each divided by the op count.
//
// Usage: bench_propagation [--repeats N] [--layer user|op|aggressive|basic]
//                          MODULE.mlir...
#include "bench_common.h"
#include "propagation/propagate.h"
#include "shardlab/support/file_io.h"
#include "shardlab/text/text.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

using namespace shardlab;
using namespace shardlab::bench;

// ---- live/peak accounting of C++ heap allocations

// Counting is switched on only for the memory run, so the timed runs pay
// one branch per allocation.
namespace {
bool g_counting = false;
std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};

void *countedAlloc(size_t size) {
  void *p = std::malloc(size ? size : 1);
  if (!p)
    throw std::bad_alloc();
  if (g_counting) {
    size_t live = g_live += malloc_usable_size(p);
    size_t peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
    }
  }
  return p;
}

void countedFree(void *p) {
  if (!p)
    return;
  if (g_counting)
    g_live -= std::min(g_live.load(), malloc_usable_size(p));
  std::free(p);
}
} // namespace

void *operator new(size_t size) { return countedAlloc(size); }
void *operator new[](size_t size) { return countedAlloc(size); }
void operator delete(void *p) noexcept { countedFree(p); }
void operator delete[](void *p) noexcept { countedFree(p); }
void operator delete(void *p, size_t) noexcept { countedFree(p); }
void operator delete[](void *p, size_t) noexcept { countedFree(p); }

namespace {

struct Measurement {
  std::string name;
  size_t ops = 0;
  double seconds = 1e9;
  double cpu_seconds = 1e9;
  size_t module_heap = 0; ///< mallinfo2 growth from parsing
  size_t after_heap = 0;  ///< mallinfo2 growth from parsing + propagating
  size_t peak_extra = 0;  ///< peak live C++ bytes above the parsed module
};

bool measure(const std::string &path, const PropagationOptions &options,
             int repeats, Measurement &result) {
  std::string text;
  if (!readFile(path, text)) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  result.name = path.substr(path.find_last_of('/') + 1);
  // Runs 0..repeats-1 are timed; the last one (counting on) measures memory.
  for (int i = 0; i <= repeats; ++i) {
    bool memory_run = i == repeats;
    g_counting = memory_run;
    g_live = 0;
    DiagnosticEngine diags;
    size_t heap_before = heapInUse();
    auto module = parseModule(text, diags);
    if (!module) {
      std::fprintf(stderr, "parse failed: %s\n", path.c_str());
      return false;
    }
    size_t heap_parsed = heapInUse();
    size_t live_parsed = g_live.load();
    g_peak = live_parsed;
    auto start = std::chrono::steady_clock::now();
    double cpu_start = cpuSeconds();
    bool ok = propagateShardings(*module, options, diags);
    double seconds = secondsSince(start);
    double cpu = cpuSeconds() - cpu_start;
    if (!ok) {
      std::fprintf(stderr, "propagation failed: %s\n", path.c_str());
      return false;
    }
    if (!memory_run) {
      result.seconds = std::min(result.seconds, seconds);
      result.cpu_seconds = std::min(result.cpu_seconds, cpu);
      continue;
    }
    g_counting = false;
    result.module_heap = heap_parsed - heap_before;
    result.after_heap = heapInUse() - heap_before;
    result.peak_extra = g_peak.load() - live_parsed;
    result.ops = countOps(module->op());
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int repeats = 3;
  PropagationOptions options;
  options.layer = PropagationLayer::OpPriority;
  std::string layer_name = "op";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--layer" && i + 1 < argc) {
      layer_name = argv[++i];
      if (layer_name == "user")
        options.layer = PropagationLayer::UserPriority;
      else if (layer_name == "op")
        options.layer = PropagationLayer::OpPriority;
      else if (layer_name == "aggressive")
        options.layer = PropagationLayer::Aggressive;
      else if (layer_name == "basic")
        options.layer = PropagationLayer::Basic;
      else {
        std::fprintf(stderr, "unknown layer %s\n", layer_name.c_str());
        return 2;
      }
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: bench_propagation [--repeats N] [--layer "
                  "user|op|aggressive|basic] MODULE.mlir...\n");
      return 0;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: bench_propagation [--repeats N] [--layer "
                         "user|op|aggressive|basic] MODULE.mlir...\n");
    return 2;
  }
  std::vector<Measurement> results;
  for (const std::string &file : files) {
    Measurement result;
    if (!measure(file, options, repeats, result))
      return 1;
    results.push_back(result);
  }
  std::printf("propagation layer: %s (best of %d)\n\n", layer_name.c_str(),
              repeats);
  std::printf("| module | ops | time (s) | cpu (s) | ops/s (cpu) | module "
              "heap B/op | heap after B/op | peak extra B/op | growth "
              "(time, cpu) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  auto exponent = [](double t1, double t0, double n1, double n0) {
    return std::log(t1 / t0) / std::log(n1 / n0);
  };
  for (size_t i = 0; i < results.size(); ++i) {
    const Measurement &r = results[i];
    double ops = static_cast<double>(r.ops);
    std::string growth = "";
    if (i > 0 && results[i - 1].ops > 0 && r.ops != results[i - 1].ops) {
      double n0 = static_cast<double>(results[i - 1].ops);
      char buf[64];
      std::snprintf(
          buf, sizeof buf, "n^%.2f, n^%.2f",
          exponent(r.seconds, results[i - 1].seconds, ops, n0),
          exponent(r.cpu_seconds, results[i - 1].cpu_seconds, ops, n0));
      growth = buf;
    }
    std::printf("| %s | %zu | %.4f | %.4f | %.0f | %.0f | %.0f | %.0f | %s "
                "|\n",
                r.name.c_str(), r.ops, r.seconds, r.cpu_seconds,
                ops / r.cpu_seconds, static_cast<double>(r.module_heap) / ops,
                static_cast<double>(r.after_heap) / ops,
                static_cast<double>(r.peak_extra) / ops, growth.c_str());
  }
  return 0;
}
