// Percentiles and the time_us summary of repeated measurements.
#include "shardlab/collectors/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace shardlab::collectors {

double percentileSorted(const std::vector<double> &sorted, double q) {
  if (sorted.empty())
    return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return percentileSorted(samples, 0.5);
}

cost::TimeStats summarize(std::vector<double> samples_us) {
  cost::TimeStats s;
  if (samples_us.empty())
    return s;
  std::sort(samples_us.begin(), samples_us.end());
  const double n = static_cast<double>(samples_us.size());
  const double mean =
      std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / n;
  double ss = 0;
  for (double v : samples_us)
    ss += (v - mean) * (v - mean);
  s.median_us = percentileSorted(samples_us, 0.5);
  s.min_us = samples_us.front();
  s.max_us = samples_us.back();
  s.mean_us = mean;
  s.stddev_us = samples_us.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  s.samples = static_cast<int64_t>(samples_us.size());
  return s;
}

double spread(const cost::TimeStats &stats) {
  if (!stats.mean_us || !stats.stddev_us || *stats.mean_us <= 0)
    return 0;
  return *stats.stddev_us / *stats.mean_us;
}

} // namespace shardlab::collectors
