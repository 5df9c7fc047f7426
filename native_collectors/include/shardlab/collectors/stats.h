// Statistics over repeated timings (microseconds): percentiles with linear
// interpolation between order statistics (numpy's default), and the summary
// stored in a table entry's time_us object.
#pragma once

#include "shardlab/cost/perf_table.h"

#include <vector>

namespace shardlab::collectors {

/// q in [0, 1] of an ascending-sorted, non-empty sample.
double percentileSorted(const std::vector<double> &sorted, double q);
/// Median of any non-empty sample.
double median(std::vector<double> samples);
/// Median, min, max, mean, sample standard deviation and count. Requires a
/// non-empty sample of positive values.
cost::TimeStats summarize(std::vector<double> samples_us);
/// Coefficient of variation (stddev / mean) of a summary; 0 when unknown.
double spread(const cost::TimeStats &stats);

} // namespace shardlab::collectors
