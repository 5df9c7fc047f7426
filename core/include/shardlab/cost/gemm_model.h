// GEMM cost from performance tables (XLA's MatmulInterpolator): dims
// (b, m, k, n) from a dot's shapes and dimension numbers; default tables use
// per-dtype weighted averages (with XLA's byte-normalised bf16 fallback only
// when asked for), XLA's user-profile path nearest neighbour on
// byte-normalised dims; time = FLOPs / interpolated FLOP/s. The accurate
// mode, and the compatible mode where a bracket corner is missing, use
// ScatteredRates (gemm_scattered.h): any set of measured points works.
#pragma once

#include "shardlab/cost/estimate.h"
#include "shardlab/cost/gemm_scattered.h"
#include "shardlab/cost/interpolator.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/support/result.h"

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
Result<GemmDims> extractGemmDims(const std::vector<int64_t> &lhs_shape,
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
  Default,      // per dtype key (XLA's default tables, and any table loaded)
  UserProfiles, // XLA's user-profile path: nearest neighbour, byte-scaled
};

struct MatmulOptions {
  GemmTableKind kind = GemmTableKind::Default;
  EstimateMode mode = EstimateMode::Compatible;
  /// XLA's rule for a dtype key the default table lacks: read the bf16
  /// entries at byte-normalised dims. Off, such a query is an error naming
  /// the dtype keys the table has.
  bool dtype_fallback = false;
  /// No estimate is below this (the kernel-launch floor every op pays, from
  /// the hardware preset); 0: no floor (XLA's own numbers).
  double min_time_us = 0;
};

/// XLA's profile clock encoding (float32 arithmetic, int64 truncation).
int64_t runtimeNsFromClockCycles(int64_t clock_cycles, float clock_ghz);
int64_t clockCyclesFromRuntimeNs(int64_t runtime_ns, float clock_ghz);

class MatmulInterpolator {
public:
  static Result<MatmulInterpolator> create(const PerfTable &table,
                                           const MatmulOptions &options);
  /// XLA's semantics exactly: the bf16 dtype fallback on, no time floor.
  static Result<MatmulInterpolator>
  create(const PerfTable &table, GemmTableKind kind, EstimateMode mode);
  Result<Estimate> estimateTime(const GemmQuery &query) const;
  /// EstimateTime's time_us without the explanation: no allocation for the
  /// common dtype keys (up to 15 characters) in compatible mode, except for
  /// error messages.
  Result<double> timeUs(const GemmQuery &query) const;

private:
  /// Which table a query reads, at which point, under which model name.
  struct Lookup {
    const WeightedAverageInterpolator<4> *table = nullptr;
    const ScatteredRates *scattered = nullptr;
    GridPoint<4> point{};
    GridContext<4> context{};
    const char *model = "";
    std::string key; // dtype key (default tables)
  };
  explicit MatmulInterpolator(const MatmulOptions &options);
  Result<bool> checkQuery(const GemmQuery &q) const;
  Lookup select(const GemmQuery &q) const;
  /// CheckQuery, then Select; an error when a default table has nothing
  /// for the query's dtypes (naming the keys it has).
  Result<Lookup> selectChecked(const GemmQuery &q) const;
  /// The rate at the lookup's point; `how` (when given) gets a note on the
  /// rule used where it is not XLA's plain one.
  Result<double> rateOf(const Lookup &l, std::vector<Neighbour> *used,
                        std::string *how) const;
  std::string dtypeKeys() const;

  MatmulOptions options_;
  std::map<std::string, WeightedAverageInterpolator<4>> per_dtype_;
  std::map<std::string, ScatteredRates> scattered_; // same keys
  std::optional<WeightedAverageInterpolator<4>> bf16_fallback_;
  std::optional<ScatteredRates> bf16_fallback_scattered_;
  NearestNeighbourInterpolator<int64_t, 4> nearest_;
};

} // namespace shardlab::cost
