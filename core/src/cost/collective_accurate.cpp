// Accurate-mode collective interpolation: log-space, monotone, saturating.
#include "shardlab/cost/collective_model.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace shardlab::cost {
namespace {

struct SlicePoint {
  int64_t bytes;
  double log_tp; // log(throughput)
};

// Pool-adjacent-violators: the closest non-decreasing sequence (in
// least squares) to the log-throughputs, so noisy tables stay monotone.
void MakeMonotone(std::vector<SlicePoint> *slice) {
  std::vector<std::pair<double, int>> blocks; // (mean, count)
  for (const SlicePoint &p : *slice) {
    blocks.push_back({p.log_tp, 1});
    while (blocks.size() > 1 &&
           blocks[blocks.size() - 2].first > blocks.back().first) {
      auto last = blocks.back();
      blocks.pop_back();
      auto &prev = blocks.back();
      prev.first = (prev.first * prev.second + last.first * last.second) /
                   (prev.second + last.second);
      prev.second += last.second;
    }
  }
  size_t i = 0;
  for (const auto &[mean, count] : blocks)
    for (int c = 0; c < count; ++c)
      (*slice)[i++].log_tp = mean;
}

// log(throughput) of one device-count slice at `bytes`.
double EvalSlice(const std::vector<SlicePoint> &s, int64_t bytes) {
  const double x = std::log(double(bytes));
  if (bytes <= s.front().bytes) // constant time below the smallest size
    return s.front().log_tp + x - std::log(double(s.front().bytes));
  if (bytes >= s.back().bytes) // saturated throughput above the largest
    return s.back().log_tp;
  size_t hi = 1;
  while (s[hi].bytes < bytes)
    ++hi;
  const double x0 = std::log(double(s[hi - 1].bytes));
  const double x1 = std::log(double(s[hi].bytes));
  const double t = (x - x0) / (x1 - x0);
  return s[hi - 1].log_tp + t * (s[hi].log_tp - s[hi - 1].log_tp);
}

std::map<int64_t, std::vector<SlicePoint>>
BuildSlices(const std::vector<std::pair<GridPoint<2>, double>> &points) {
  std::map<int64_t, std::map<int64_t, std::pair<double, int>>> grouped;
  for (const auto &[p, tp] : points) {
    auto &cell = grouped[p[1]][p[0]];
    cell.first += std::log(tp);
    cell.second += 1;
  }
  std::map<int64_t, std::vector<SlicePoint>> slices;
  for (const auto &[devices, by_bytes] : grouped) {
    std::vector<SlicePoint> &s = slices[devices];
    for (const auto &[bytes, acc] : by_bytes)
      s.push_back({bytes, acc.first / acc.second});
    MakeMonotone(&s);
  }
  return slices;
}

} // namespace

double
AccurateThroughput(const std::vector<std::pair<GridPoint<2>, double>> &points,
                   int64_t bytes, int64_t devices,
                   std::vector<Neighbour> *used) {
  if (points.empty() || bytes <= 0)
    return 0;
  const auto slices = BuildSlices(points);
  auto hi = slices.lower_bound(devices);
  if (hi == slices.end())
    --hi;
  auto lo = hi;
  if (hi->first > devices && hi != slices.begin())
    --lo;
  const double lo_tp = EvalSlice(lo->second, bytes);
  const double hi_tp = EvalSlice(hi->second, bytes);
  double t = 0;
  if (lo->first != hi->first && devices > lo->first)
    t = (std::log(double(devices)) - std::log(double(lo->first))) /
        (std::log(double(hi->first)) - std::log(double(lo->first)));
  if (used) {
    used->push_back({{bytes, lo->first}, std::exp(lo_tp), 1 - t});
    if (hi->first != lo->first)
      used->push_back({{bytes, hi->first}, std::exp(hi_tp), t});
  }
  return std::exp(lo_tp + t * (hi_tp - lo_tp));
}

} // namespace shardlab::cost
