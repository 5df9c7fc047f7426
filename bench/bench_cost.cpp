// Lookup speed of the cost model: collective and GEMM estimates per second
// in compatible and accurate modes over a performance table (default: the
// bundled examples/tables/h100_analytical.shardlab.json), one thread. Also
// counts heap allocations per estimate (global operator new is replaced in
// this benchmark only). Usage: bench_cost [TABLE] [--seconds S]
#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/perf_table.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

// Heap allocations made by this process (benchmark-only instrumentation).
size_t g_allocations = 0;

} // namespace

void *operator new(size_t size) {
  ++g_allocations;
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

namespace {

struct Row {
  std::string what, mode;
  double per_s = 0, per_cpu_s = 0, ns = 0, allocs = 0;
  size_t errors = 0;
};

/// This thread's CPU time in seconds (excludes time other processes on the
/// shared machine take from it).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// Runs `estimate(i)` over the query set until `seconds` have passed.
template <class F>
Row measure(size_t n, double seconds, F estimate, std::string what,
            std::string mode) {
  Row row{std::move(what), std::move(mode)};
  size_t done = 0, errors = 0;
  double sink = 0;
  const size_t allocs_before = g_allocations;
  const double cpu_start = ThreadCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (size_t i = 0; i < 4096; ++i, ++done) {
      const double t = estimate(done % n);
      errors += t < 0;
      sink += t;
    }
    elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  row.per_s = double(done) / elapsed;
  row.per_cpu_s = double(done) / (ThreadCpuSeconds() - cpu_start);
  row.ns = 1e9 * elapsed / double(done);
  row.allocs = double(g_allocations - allocs_before) / double(done);
  row.errors = errors + (sink < 0);
  return row;
}

std::vector<CollectiveQuery> CollectiveQueries(size_t n) {
  const char *groups[] = {"[4,2]<=[8]", "[2,4]<=[8]", "[1,8]<=[8]",
                          "{{0,1,2},{3,4,5}}"};
  const CollectiveOp ops[] = {CollectiveOp::AllReduce, CollectiveOp::AllGather,
                              CollectiveOp::ReduceScatter,
                              CollectiveOp::AllToAll};
  std::mt19937_64 rng(42);
  std::vector<CollectiveQuery> queries;
  for (size_t i = 0; i < n; ++i) {
    CollectiveQuery q;
    q.op = ops[rng() % 4];
    q.dtype = "f32";
    q.bytes = int64_t(1) << (10 + rng() % 21);
    q.bytes += int64_t(rng() % uint64_t(q.bytes));
    q.groups = *parseReplicaGroups(groups[rng() % 4]);
    queries.push_back(q);
  }
  return queries;
}

std::vector<GemmQuery> GemmQueries(size_t n) {
  std::mt19937_64 rng(7);
  std::vector<GemmQuery> queries;
  for (size_t i = 0; i < n; ++i) {
    GemmQuery q;
    q.dims = {int64_t(1 + rng() % 4), int64_t(128 + rng() % 8000),
              int64_t(128 + rng() % 8000), int64_t(128 + rng() % 8000)};
    q.lhs_dtype = q.rhs_dtype = q.out_dtype = rng() % 2 ? "bf16" : "f32";
    queries.push_back(q);
  }
  return queries;
}

std::string ModeName(EstimateMode mode) {
  return mode == EstimateMode::Accurate ? "accurate" : "compatible";
}

CollectiveInterpolator MakeCollective(const PerfTable &table, EstimateMode mode,
                                      TableInterpolation interp) {
  CollectiveInterpolatorOptions options;
  options.mode = mode;
  options.interpolation = interp;
  auto ci = CollectiveInterpolator::create(table, options);
  if (!ci) {
    std::fprintf(stderr, "bench_cost: %s\n", ci.error().message.c_str());
    std::exit(1);
  }
  return std::move(*ci);
}

/// estimateTime (explained) and TimeUs over queries resolved once each.
void BenchCollective(const PerfTable &table, EstimateMode mode,
                     TableInterpolation interp, double seconds,
                     std::vector<Row> *rows) {
  const CollectiveInterpolator ci = MakeCollective(table, mode, interp);
  const auto queries = CollectiveQueries(4096);
  const std::string name = interp == TableInterpolation::GridSnap
                               ? "collective, grid-snap"
                               : "collective, nearest";
  rows->push_back(measure(
      queries.size(), seconds,
      [&](size_t i) {
        auto e = ci.estimateTime(queries[i]);
        return e ? e->time_us : -1.0;
      },
      name + ": estimateTime (explained)", ModeName(mode)));
  std::vector<CollectiveInterpolator::Resolved> resolved;
  for (const CollectiveQuery &q : queries)
    resolved.push_back(*ci.resolve(q));
  rows->push_back(measure(
      queries.size(), seconds,
      [&](size_t i) {
        auto t = ci.timeUs(resolved[i], queries[i].bytes);
        return t ? *t : -1.0;
      },
      name + ": timeUs (resolved)", ModeName(mode)));
}

void BenchGemm(const PerfTable &table, EstimateMode mode, GemmTableKind kind,
               double seconds, std::vector<Row> *rows) {
  auto mi = MatmulInterpolator::create(table, kind, mode);
  if (!mi) {
    std::fprintf(stderr, "bench_cost: %s\n", mi.error().message.c_str());
    std::exit(1);
  }
  const auto queries = GemmQueries(4096);
  const std::string name = kind == GemmTableKind::Default
                               ? "gemm, weighted-average"
                               : "gemm, nearest (user table)";
  rows->push_back(measure(
      queries.size(), seconds,
      [&](size_t i) {
        auto e = mi->estimateTime(queries[i]);
        return e ? e->time_us : -1.0;
      },
      name + ": estimateTime (explained)", ModeName(mode)));
  rows->push_back(measure(
      queries.size(), seconds,
      [&](size_t i) {
        auto t = mi->timeUs(queries[i]);
        return t ? *t : -1.0;
      },
      name + ": TimeUs", ModeName(mode)));
}

void Print(const std::vector<Row> &rows) {
  std::printf("| estimate | mode | estimates/s (wall) | estimates/CPU-s | "
              "ns/estimate (wall) | allocations/estimate | errors |\n"
              "|---|---|---|---|---|---|---|\n");
  for (const Row &r : rows)
    std::printf("| %s | %s | %.0f | %.0f | %.0f | %.1f | %zu |\n",
                r.what.c_str(), r.mode.c_str(), r.per_s, r.per_cpu_s, r.ns,
                r.allocs, r.errors);
}

} // namespace

int main(int argc, char **argv) {
  std::string path = "examples/tables/h100_analytical.shardlab.json";
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else
      path = arg;
  }
  auto table = loadPerfTable(path);
  if (!table) {
    std::fprintf(stderr, "bench_cost: %s\n", table.error().message.c_str());
    return 1;
  }
  std::printf("table %s: %zu collectives, %zu gemms\n\n", path.c_str(),
              table->collectives.size(), table->gemms.size());
  std::vector<Row> rows;
  for (EstimateMode mode : {EstimateMode::Compatible, EstimateMode::Accurate})
    for (TableInterpolation interp :
         {TableInterpolation::GridSnap, TableInterpolation::Nearest})
      BenchCollective(*table, mode, interp, seconds, &rows);
  for (EstimateMode mode : {EstimateMode::Compatible, EstimateMode::Accurate})
    for (GemmTableKind kind :
         {GemmTableKind::Default, GemmTableKind::UserProfiles})
      BenchGemm(*table, mode, kind, seconds, &rows);
  Print(rows);
  return 0;
}
