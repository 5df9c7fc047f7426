// Leave-one-out error of compatible vs accurate collective interpolation
// over the bundled analytical table: accurate mode must be lower.
#include "shardlab/cost/collective_model.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace shardlab::cost;

namespace {

struct Errors {
  double median = 0, p90 = 0;
};

Errors Summarise(std::vector<double> e) {
  std::sort(e.begin(), e.end());
  return {e[e.size() / 2], e[e.size() * 9 / 10]};
}

// Relative time error when each entry is predicted from all the others.
Errors LeaveOneOut(const PerfTable &table, EstimateMode mode) {
  std::vector<double> errors;
  for (size_t i = 0; i < table.collectives.size(); ++i) {
    PerfTable rest = table;
    rest.collectives.erase(rest.collectives.begin() + i);
    CollectiveInterpolatorOptions opts;
    opts.mode = mode;
    auto ci = CollectiveInterpolator::Create(rest, opts);
    const CollectiveEntry &e = table.collectives[i];
    CollectiveQuery q;
    q.op = *ParseCollectiveOp(e.op);
    q.dtype = e.dtype;
    q.bytes = e.bytes;
    q.groups = *e.replica_groups;
    Result<Estimate> est = ci->EstimateTime(q);
    REQUIRE(est);
    const double truth = 1e6 * e.bytes / e.throughput_bytes_per_s;
    errors.push_back(std::fabs(est->time_us - truth) / truth);
  }
  return Summarise(errors);
}

} // namespace

TEST_CASE("accurate mode beats compatible mode on leave-one-out error") {
  Result<PerfTable> t =
      LoadPerfTable(std::string(SHARDLAB_SOURCE_DIR) +
                    "/examples/tables/h100_analytical.shardlab.json");
  REQUIRE(t);
  const Errors compat = LeaveOneOut(*t, EstimateMode::kCompatible);
  const Errors accurate = LeaveOneOut(*t, EstimateMode::kAccurate);
  std::printf("leave-one-out relative time error (h100 analytical, %zu "
              "points): compatible median %.4f p90 %.4f; accurate median "
              "%.4f p90 %.4f\n",
              t->collectives.size(), compat.median, compat.p90, accurate.median,
              accurate.p90);
  CHECK(accurate.median < compat.median);
  CHECK(accurate.p90 < compat.p90);
}
