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
/// (Emscripten's dlmalloc has only the older, int-sized mallinfo: enough
/// for a 2 GB memory.)
inline size_t heapInUse() {
#if defined(__EMSCRIPTEN__)
  return static_cast<size_t>(mallinfo().uordblks);
#else
  return mallinfo2().uordblks;
#endif
}

/// Ops nested under `root`.
inline size_t countOps(Operation &root) {
  size_t count = 0;
  walk(root, [&](Operation &) { ++count; });
  return count;
}

} // namespace shardlab::bench
