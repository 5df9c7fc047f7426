// GEMM cost from performance tables (XLA's MatmulInterpolator): dims
// (b, m, k, n) from a dot's shapes and dimension numbers; default tables use
// per-dtype weighted averages with a byte-normalised bf16 fallback, user
// tables use nearest neighbour on byte-normalised dims; time = FLOPs /
// interpolated FLOP/s. An opt-in accurate mode interpolates in log space.
#pragma once

#include "shardlab/cost/estimate.h"
#include "shardlab/cost/interpolator.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/cost/result.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardlab::cost {

/// b = batch, m = lhs free dims, k = contracting, n = rhs free dims.
struct GemmDims {
  int64_t b = 1, m = 1, k = 1, n = 1;
};

/// Dims of a dot from operand shapes and dimension numbers.
Result<GemmDims> ExtractGemmDims(const std::vector<int64_t> &lhs_shape,
                                 const std::vector<int64_t> &rhs_shape,
                                 const std::vector<int64_t> &lhs_batch,
                                 const std::vector<int64_t> &lhs_contracting,
                                 const std::vector<int64_t> &rhs_batch,
                                 const std::vector<int64_t> &rhs_contracting);

struct GemmQuery {
  GemmDims dims;
  std::string lhs_dtype, rhs_dtype, out_dtype;
};

enum class GemmTableKind {
  kDefault,      // XLA's embedded tables: weighted average per dtype
  kUserProfiles, // user-supplied profiles: nearest neighbour
};

/// XLA's profile clock encoding (float32 arithmetic, int64 truncation).
int64_t RuntimeNsFromClockCycles(int64_t clock_cycles, float clock_ghz);
int64_t ClockCyclesFromRuntimeNs(int64_t runtime_ns, float clock_ghz);

class MatmulInterpolator {
public:
  static Result<MatmulInterpolator>
  Create(const PerfTable &table, GemmTableKind kind, EstimateMode mode);
  Result<Estimate> EstimateTime(const GemmQuery &query) const;
  /// EstimateTime's time_us without the explanation: no allocation for the
  /// common dtype keys (up to 15 characters), except for error messages.
  Result<double> TimeUs(const GemmQuery &query) const;

private:
  /// Which table a query reads, at which point, under which model name.
  struct Lookup {
    const WeightedAverageInterpolator<4> *table = nullptr;
    GridPoint<4> point{};
    GridContext<4> context{};
    const char *model = "";
    std::string key; // dtype key (default tables)
  };
  MatmulInterpolator(GemmTableKind kind, EstimateMode mode);
  Result<bool> CheckQuery(const GemmQuery &q) const;
  Lookup Select(const GemmQuery &q) const;
  /// CheckQuery, then Select; an error when a default table has nothing
  /// for the query's dtypes (and no bf16 fallback).
  Result<Lookup> SelectChecked(const GemmQuery &q) const;
  Result<double> RateOf(const Lookup &l, std::vector<Neighbour> *used) const;

  GemmTableKind kind_;
  EstimateMode mode_;
  std::map<std::string, WeightedAverageInterpolator<4>> per_dtype_;
  std::optional<WeightedAverageInterpolator<4>> bf16_fallback_;
  NearestNeighbourInterpolator<int64_t, 4> nearest_;
};

/// Accurate mode: multilinear interpolation of log(FLOP/s) in log2(dims)
/// over the clamped power-of-two bracket; the table must hold its corners.
Result<double> AccurateFlopRate(const WeightedAverageInterpolator<4> &table,
                                const GridPoint<4> &point,
                                const GridContext<4> &context,
                                std::vector<Neighbour> *used);

} // namespace shardlab::cost
