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
void makeMonotone(std::vector<SlicePoint> *slice) {
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

// log(throughput) of one device-count slice at `bytes` (log_bytes = its log).
double evalSlice(const AccurateThroughputIndex::Slice &s, int64_t bytes,
                 double log_bytes) {
  if (bytes <= s.bytes.front()) // constant time below the smallest size
    return s.log_tp.front() + log_bytes - s.log_bytes.front();
  if (bytes >= s.bytes.back()) // saturated throughput above the largest
    return s.log_tp.back();
  const size_t hi =
      size_t(std::lower_bound(s.bytes.begin(), s.bytes.end(), bytes) -
             s.bytes.begin());
  const double x0 = s.log_bytes[hi - 1], x1 = s.log_bytes[hi];
  const double t = (log_bytes - x0) / (x1 - x0);
  return s.log_tp[hi - 1] + t * (s.log_tp[hi] - s.log_tp[hi - 1]);
}

} // namespace

AccurateThroughputIndex AccurateThroughputIndex::build(
    const std::vector<std::pair<GridPoint<2>, double>> &points) {
  std::map<int64_t, std::map<int64_t, std::pair<double, int>>> grouped;
  for (const auto &[p, tp] : points) {
    if (!(tp > 0) || p[0] <= 0 || p[1] <= 0)
      continue;
    auto &cell = grouped[p[1]][p[0]];
    cell.first += std::log(tp);
    cell.second += 1;
  }
  AccurateThroughputIndex index;
  for (const auto &[devices, by_bytes] : grouped) {
    std::vector<SlicePoint> points_of_slice;
    for (const auto &[bytes, acc] : by_bytes)
      points_of_slice.push_back({bytes, acc.first / acc.second});
    makeMonotone(&points_of_slice);
    Slice slice;
    slice.devices = devices;
    slice.log_devices = std::log(double(devices));
    for (const SlicePoint &sp : points_of_slice) {
      slice.bytes.push_back(sp.bytes);
      slice.log_bytes.push_back(std::log(double(sp.bytes)));
      slice.log_tp.push_back(sp.log_tp);
    }
    index.slices_.push_back(std::move(slice));
  }
  return index;
}

double AccurateThroughputIndex::throughput(int64_t bytes, int64_t devices,
                                           std::vector<Neighbour> *used) const {
  if (slices_.empty() || bytes <= 0)
    return 0;
  auto hi =
      std::lower_bound(slices_.begin(), slices_.end(), devices,
                       [](const Slice &s, int64_t d) { return s.devices < d; });
  if (hi == slices_.end())
    --hi;
  auto lo = hi;
  if (hi->devices > devices && hi != slices_.begin())
    --lo;
  const double log_bytes = std::log(double(bytes));
  const double lo_tp = evalSlice(*lo, bytes, log_bytes);
  const double hi_tp = evalSlice(*hi, bytes, log_bytes);
  double t = 0;
  if (lo->devices != hi->devices && devices > lo->devices)
    t = (std::log(double(devices)) - lo->log_devices) /
        (hi->log_devices - lo->log_devices);
  if (used) {
    used->push_back({{bytes, lo->devices}, std::exp(lo_tp), 1 - t});
    if (hi->devices != lo->devices)
      used->push_back({{bytes, hi->devices}, std::exp(hi_tp), t});
  }
  return std::exp(lo_tp + t * (hi_tp - lo_tp));
}

double
accurateThroughput(const std::vector<std::pair<GridPoint<2>, double>> &points,
                   int64_t bytes, int64_t devices,
                   std::vector<Neighbour> *used) {
  return AccurateThroughputIndex::build(points).throughput(bytes, devices,
                                                           used);
}

} // namespace shardlab::cost
