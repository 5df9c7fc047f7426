// The native half of bench/wasm_bench.mjs: times one JSON API entry point
// (the functions the WebAssembly bindings call, wasm/src/bindings.cpp) on a
// module, in-process, best of N, so the WASM / native ratio compares the
// same code on the same input without process start-up or file I/O.
//
// Usage: bench_api [--repeats N] MODULE.mlir check|run|schedule|playground
//                  [ARG_JSON]
// ARG_JSON is run's flag array (e.g. '["-sdy-propagation-pipeline"]') or
// schedule's / playground's options object. Prints one JSON line:
// {"call", "ms" (best wall), "cpu_ms" (best process CPU), "ok",
// "reply_bytes"}.
#include "shardlab/api/api.h"
#include "shardlab/api/playground_api.h"
#include "shardlab/api/strategy_api.h"
#include "shardlab/support/file_io.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string callApi(const std::string &call, const std::string &text,
                    const std::string &arg) {
  using namespace shardlab::api;
  if (call == "check")
    return checkJson(text);
  if (call == "run")
    return runJson(text, arg.empty() ? "[]" : arg);
  if (call == "schedule")
    return scheduleJson(text, arg.empty() ? "{}" : arg);
  if (call == "compareStrategies")
    return compareStrategiesJson(text, arg.empty() ? "{}" : arg);
  if (call == "execute")
    return executeJson(text, arg.empty() ? "{}" : arg);
  return playgroundJson(text, arg.empty() ? "{}" : arg);
}

// CPU time of this process: on a shared machine it leaves out the time the
// scheduler gave others (wasm_bench.mjs reads Node's the same way).
double cpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) +
         1e-6 * static_cast<double>(ts.tv_nsec);
}

} // namespace

int main(int argc, char **argv) {
  int repeats = 3;
  int i = 1;
  if (i + 1 < argc && std::string(argv[i]) == "--repeats") {
    repeats = std::max(1, std::atoi(argv[i + 1]));
    i += 2;
  }
  if (argc - i < 2) {
    std::fprintf(stderr, "usage: bench_api [--repeats N] MODULE.mlir "
                         "check|run|schedule|playground|compareStrategies|"
                         "execute "
                         "[ARG_JSON]\n");
    return 2;
  }
  std::string text, call = argv[i + 1];
  std::string arg = argc - i > 2 ? argv[i + 2] : "";
  if (call != "check" && call != "run" && call != "schedule" &&
      call != "playground" && call != "compareStrategies" &&
      call != "execute") {
    std::fprintf(stderr, "bench_api: unknown call %s\n", call.c_str());
    return 2;
  }
  if (!shardlab::readFile(argv[i], text)) {
    std::fprintf(stderr, "bench_api: cannot read %s\n", argv[i]);
    return 1;
  }
  double best = 1e300, best_cpu = 1e300;
  std::string reply;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    double cpu_start = cpuMs();
    reply = callApi(call, text, arg);
    best_cpu = std::min(best_cpu, cpuMs() - cpu_start);
    best = std::min(best, std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  // Not parsed: reading a reply of megabytes would be most of what is
  // timed and counted. Inside the reply's strings a quote is escaped, so
  // this key can only be the top-level one.
  bool ok = reply.find("\"ok\":true") != std::string::npos;
  std::printf("{\"call\":\"%s\",\"ms\":%.3f,\"cpu_ms\":%.3f,\"ok\":%s,"
              "\"reply_bytes\":%zu}\n",
              call.c_str(), best, best_cpu, ok ? "true" : "false",
              reply.size());
  return 0;
}
