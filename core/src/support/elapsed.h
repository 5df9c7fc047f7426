// Milliseconds since a steady-clock instant, for the timings replies and
// comparisons report.
#pragma once

#include <chrono>

namespace shardlab {

inline double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace shardlab
