// FLOP rates from measured GEMM points that need not form a full grid: the
// accurate mode of the matmul interpolator, and the compatible mode's answer
// where XLA's weighted average would need a bracket corner the table lacks.
//
// Rules, in log2 space of (b, m, k, n) and natural log of the rate:
//  1. the query is clamped to the table's range per dimension (the rate
//     saturates at the edges, as XLA's does; time still uses the real FLOPs);
//  2. a measured point is answered with its measured rate;
//  3. when the 16 corners of the query's bracket (the nearest measured
//     coordinates below and above, per dimension) are all measured, the
//     rate is multilinear in log space between them (continuous, exact at
//     the points);
//  4. otherwise a local quadratic (linear, square and cross terms of the
//     dimensions that vary) is fitted to the points within one octave per
//     dimension (widened until there are 1.5 points per term), weighted by
//     1 / (distance + 0.5)^2 and made robust with three Huber steps; the
//     result stays within a factor 2 of the points it used.
// Worked example: XLA's H100 bf16 table holds b in {1,2,4} and m, k, n in
// {256..4096}; a query (1, 3000, 1024, 1024) takes rule 3 between m = 2048
// and 4096; with (1, 2048, 1024, 1024) removed from the table, the same
// point takes rule 4 over its 80 neighbours (leave-one-out error 1.8% median
// over that table, bench/RESULTS.md).
#pragma once

#include "shardlab/cost/estimate.h"
#include "shardlab/cost/interpolator.h"
#include "shardlab/support/result.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace shardlab::cost {

/// The measured points of one dtype key, indexed for the rules above.
class ScatteredRates {
public:
  explicit ScatteredRates(const std::map<GridPoint<4>, double> &values);

  /// FLOP/s at `query` (b, m, k, n); `used` gets the points that contributed
  /// (each once) and `how` says which rule answered.
  Result<double> rate(const GridPoint<4> &query, std::vector<Neighbour> *used,
                      std::string *how) const;
  /// The query clamped to the measured range of each dimension.
  GridPoint<4> clamp(const GridPoint<4> &query) const;

private:
  struct Point {
    GridPoint<4> at;
    std::array<double, 4> log2_at;
    double log_rate;
  };
  const Point *find(const GridPoint<4> &p) const;
  bool multilinear(const GridPoint<4> &q, std::vector<Neighbour> *used,
                   double *rate) const;
  Result<double> localFit(const GridPoint<4> &q,
                          std::vector<Neighbour> *used) const;

  std::vector<Point> points_;                  // sorted by `at`
  std::array<std::vector<int64_t>, 4> coords_; // distinct, ascending
};

} // namespace shardlab::cost
