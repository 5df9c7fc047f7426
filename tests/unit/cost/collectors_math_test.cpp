// Collectors: statistics, nccl-tests counts and bandwidths, data patterns.
#include "shardlab/collectors/bandwidth.h"
#include "shardlab/collectors/pattern.h"
#include "shardlab/collectors/stats.h"

#include <doctest/doctest.h>

#include <vector>

using namespace shardlab::collectors;

TEST_CASE("collectors: percentiles interpolate like numpy") {
  const std::vector<double> s = {1, 2, 3, 4};
  CHECK(percentileSorted(s, 0.5) == doctest::Approx(2.5));
  CHECK(percentileSorted(s, 0.0) == 1);
  CHECK(percentileSorted(s, 1.0) == 4);
  CHECK(percentileSorted(s, 0.99) == doctest::Approx(3.97));
  CHECK(median({5, 1, 3}) == 3);
  CHECK(median({7}) == 7);
}

TEST_CASE("collectors: summary of a sample") {
  shardlab::cost::TimeStats t = summarize({4, 2, 8, 6});
  CHECK(t.median_us == doctest::Approx(5));
  CHECK(*t.min_us == 2);
  CHECK(*t.max_us == 8);
  CHECK(*t.mean_us == doctest::Approx(5));
  CHECK(*t.stddev_us == doctest::Approx(2.5819889)); // sample stddev
  CHECK(t.samples == 4);
  CHECK(spread(t) == doctest::Approx(2.5819889 / 5));
  CHECK(*summarize({3}).stddev_us == 0);
}

TEST_CASE("collectors: per-rank counts round like nccl-tests") {
  // 1000 f32 elements over 3 ranks: 333 per rank, rounded down to 16 B.
  RankCounts ag = collCounts(CollOp::AllGather, 4000, 4, 3);
  CHECK(ag.send_count == 332);
  CHECK(ag.recv_count == 996);
  CHECK(ag.bytes == 996 * 4); // AG: output bytes
  RankCounts rs = collCounts(CollOp::ReduceScatter, 4000, 4, 3);
  CHECK(rs.send_count == 996);
  CHECK(rs.recv_count == 332);
  CHECK(rs.bytes == 996 * 4); // RS: input bytes
  RankCounts ar = collCounts(CollOp::AllReduce, 4000, 4, 3);
  CHECK(ar.send_count == 1000);
  CHECK(ar.bytes == 4000);
  RankCounts a2a = collCounts(CollOp::AllToAll, 4000, 4, 3);
  CHECK(a2a.chunk == 333);
  CHECK(a2a.bytes == 3996);
  CHECK(collCounts(CollOp::AllGather, 32, 2, 8).bytes == 0);
  CHECK(collCounts(CollOp::AllGather, 1024, 4, 8).bytes == 1024);
}

TEST_CASE("collectors: algbw and busbw factors") {
  CHECK(busBwFactor(CollOp::AllReduce, 8) == doctest::Approx(1.75));
  CHECK(busBwFactor(CollOp::AllGather, 8) == doctest::Approx(0.875));
  CHECK(busBwFactor(CollOp::ReduceScatter, 4) == doctest::Approx(0.75));
  CHECK(busBwFactor(CollOp::AllToAll, 2) == doctest::Approx(0.5));
  CHECK(busBwFactor(CollOp::CollectivePermute, 8) == 1);
  CHECK(busBwFactor(CollOp::AllReduce, 1) == 0);
  Bandwidth b = computeBandwidth(CollOp::AllReduce, 1 << 30, 8, 0.01);
  CHECK(b.algbw_gb_per_s == doctest::Approx(107.3741824));
  CHECK(b.busbw_gb_per_s == doctest::Approx(107.3741824 * 1.75));
  CHECK(gemmFlops(2, 3, 4, 5) == 240);
}

namespace {

// Runs one collective on the host over the patterns and counts outputs
// that differ from ExpectedValue.
int64_t HostRun(PatternKind kind, int64_t n, int64_t chunk) {
  const int64_t in_count = kind == PatternKind::AllGather   ? chunk
                           : kind == PatternKind::AllReduce ? chunk
                                                            : chunk * n;
  std::vector<std::vector<int64_t>> in(n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < in_count; ++i)
      in[r].push_back(inputValue({kind, r, n, chunk, -1}, i));
  int64_t wrong = 0;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<int64_t> out;
    if (kind == PatternKind::AllReduce || kind == PatternKind::ReduceScatter)
      for (int64_t j = 0; j < chunk; ++j) {
        int64_t sum = 0;
        for (int64_t q = 0; q < n; ++q)
          sum += in[q][(kind == PatternKind::AllReduce ? 0 : r * chunk) + j];
        out.push_back(sum);
      }
    if (kind == PatternKind::AllGather)
      for (int64_t q = 0; q < n; ++q)
        out.insert(out.end(), in[q].begin(), in[q].end());
    if (kind == PatternKind::AllToAll)
      for (int64_t q = 0; q < n; ++q)
        out.insert(out.end(), in[q].begin() + r * chunk,
                   in[q].begin() + (r + 1) * chunk);
    for (size_t i = 0; i < out.size(); ++i)
      wrong += out[i] !=
               expectedValue({kind, r, n, chunk, -1}, static_cast<int64_t>(i));
  }
  return wrong;
}

} // namespace

TEST_CASE("collectors: patterns predict every collective's output") {
  for (int64_t n : {2, 3, 8})
    for (PatternKind k : {PatternKind::AllReduce, PatternKind::AllGather,
                          PatternKind::ReduceScatter, PatternKind::AllToAll})
      CHECK(HostRun(k, n, 37) == 0);
  // Permute: a rank receiving from `source` expects the source's input.
  PatternSpec src{PatternKind::Permute, 3, 4, 10, -1};
  PatternSpec dst{PatternKind::Permute, 0, 4, 10, 3};
  for (int64_t i = 0; i < 10; ++i)
    CHECK(expectedValue(dst, i) == inputValue(src, i));
  CHECK(expectedValue({PatternKind::Permute, 1, 4, 10, -1}, 0) == -1);
}

TEST_CASE("collectors: patterns catch misplaced data and stay exact") {
  // All-gather output with two chunks swapped is detected.
  const int64_t n = 4, chunk = 5;
  int64_t detected = 0;
  for (int64_t i = 0; i < chunk; ++i)
    detected += tagValue(1, 0, i) !=
                expectedValue({PatternKind::AllGather, 0, n, chunk, -1}, i);
  CHECK(detected > 0);
  // Sums stay small: exact in bf16 (8-bit mantissa) up to 254 ranks.
  CHECK(expectedValue({PatternKind::AllReduce, 0, 254, 1, -1}, 2) == 256);
}
