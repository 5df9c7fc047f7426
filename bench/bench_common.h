// Measuring helpers the benchmarks share: wall and CPU time, heap in use
// (glibc's mallinfo2) and the op count of a module.
#pragma once

#include "shardlab/ir/ir.h"

#include <malloc.h>
#include <time.h>

#include <chrono>
#include <cstddef>

namespace shardlab::bench {

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// CPU seconds of this process (all threads).
inline double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Bytes malloc has handed out and not taken back.
inline size_t heapInUse() { return mallinfo2().uordblks; }

/// Ops nested under `root`.
inline size_t countOps(Operation &root) {
  size_t count = 0;
  walk(root, [&](Operation &) { ++count; });
  return count;
}

} // namespace shardlab::bench
