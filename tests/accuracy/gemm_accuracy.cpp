// shardlab-gemm-accuracy: the GEMM cost model against XLA's measured table
// (../shared/data/xla-perf-tables/matmul_perf_table.txtpb: H100 and B200,
// bf16 and f32, 375 points each). Independent truth, not the model's own
// output:
//  - in sample: every measured point, queried back, gives its measured time
//    (compatible and accurate modes);
//  - leave one out: each point is predicted from all the others; the
//    accurate mode must stay within the goal (median <= 5%,
//    p90 <= 15% relative time error) for every device and dtype;
//  - the rates built into the h100 and b200 presets equal the table's.
// Prints one row per device, dtype and mode (--markdown: the table of
// bench/RESULTS.md) with the worst shapes. Exit 0 when every check holds, 1
// when one fails, 2 on bad input, 77 when the table is missing and a person
// allowed that (SHARDLAB_ALLOW_MISSING_DATA=1, never under CI).
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/hardware.h"
#include "shardlab/cost/xla_import.h"
#include "shardlab/support/file_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

constexpr double kGoalMedian = 0.05;
constexpr double kGoalP90 = 0.15;
constexpr double kInSampleTolerance = 1e-9;

bool MissingDataAllowed() {
  const char *ci = std::getenv("CI");
  const char *allow = std::getenv("SHARDLAB_ALLOW_MISSING_DATA");
  const bool under_ci =
      ci && (std::string(ci) == "true" || std::string(ci) == "1");
  return !under_ci && allow && std::string(allow) == "1";
}

std::string DefaultTablePath() {
  if (const char *shared = std::getenv("SHARDLAB_SHARED"))
    return std::string(shared) +
           "/data/xla-perf-tables/matmul_perf_table.txtpb";
  return SHARDLAB_DEFAULT_XLA_GEMM_TABLE;
}

struct Error {
  double relative;
  GemmEntry at;
};

struct Row {
  std::string device, dtype, mode;
  size_t points = 0, answered = 0;
  double median = 0, p90 = 0, max = 0;
  std::vector<Error> worst; // largest first
};

double TrueTimeUs(const GemmEntry &g) {
  return 1e6 * 2.0 * double(g.b) * double(g.m) * double(g.n) * double(g.k) /
         g.flop_per_s;
}

GemmQuery QueryOf(const GemmEntry &g) {
  return {{g.b, g.m, g.k, g.n}, g.lhs_dtype, g.rhs_dtype, g.out_dtype};
}

Row Summarise(Row row, std::vector<Error> errors) {
  std::sort(errors.begin(), errors.end(), [](const Error &a, const Error &b) {
    return a.relative > b.relative;
  });
  row.answered = errors.size();
  if (errors.empty())
    return row;
  std::vector<double> e;
  for (const Error &x : errors)
    e.push_back(x.relative);
  std::sort(e.begin(), e.end());
  row.median = e[e.size() / 2];
  row.p90 = e[std::min(e.size() - 1, e.size() * 9 / 10)];
  row.max = e.back();
  errors.resize(std::min<size_t>(3, errors.size()));
  row.worst = errors;
  return row;
}

/// Relative time errors of `mode` when each point is predicted by a table
/// holding all the others (`leave_out`) or all of them.
std::vector<Error> Errors(const std::vector<GemmEntry> &points,
                          const MatmulOptions &options, bool leave_out) {
  std::vector<Error> errors;
  PerfTable full;
  full.gemms = points;
  Result<MatmulInterpolator> all = MatmulInterpolator::create(full, options);
  for (size_t i = 0; i < points.size(); ++i) {
    PerfTable rest;
    if (leave_out) {
      rest.gemms = points;
      rest.gemms.erase(rest.gemms.begin() + long(i));
    }
    Result<MatmulInterpolator> mi =
        leave_out ? MatmulInterpolator::create(rest, options) : all;
    if (!mi)
      continue;
    Result<double> t = mi->timeUs(QueryOf(points[i]));
    if (!t)
      continue;
    const double truth = TrueTimeUs(points[i]);
    errors.push_back({std::fabs(*t - truth) / truth, points[i]});
  }
  return errors;
}

std::string Shape(const GemmEntry &g) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%lldx%lldx%lldx%lld", (long long)g.b,
                (long long)g.m, (long long)g.n, (long long)g.k);
  return buf;
}

void Print(const Row &r, bool markdown) {
  char line[512];
  std::string worst;
  for (const Error &e : r.worst) {
    char w[64];
    std::snprintf(w, sizeof w, "%s%s %.0f%%", worst.empty() ? "" : ", ",
                  Shape(e.at).c_str(), 100 * e.relative);
    worst += w;
  }
  if (markdown)
    std::snprintf(line, sizeof line,
                  "| %s | %s | %s | %zu/%zu | %.1f%% | %.1f%% | %.1f%% | %s |",
                  r.device.c_str(), r.dtype.c_str(), r.mode.c_str(), r.answered,
                  r.points, 100 * r.median, 100 * r.p90, 100 * r.max,
                  worst.c_str());
  else
    std::snprintf(line, sizeof line,
                  "%-7s %-16s %-26s %3zu/%-3zu median %5.1f%%  p90 %5.1f%%  "
                  "max %6.1f%%  worst: %s",
                  r.device.c_str(), r.dtype.c_str(), r.mode.c_str(), r.answered,
                  r.points, 100 * r.median, 100 * r.p90, 100 * r.max,
                  worst.c_str());
  std::cout << line << "\n";
}

} // namespace

int main(int argc, char **argv) {
  std::string path = DefaultTablePath();
  bool markdown = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--markdown")
      markdown = true;
    else if (!arg.empty() && arg[0] != '-')
      path = arg;
    else {
      std::cerr << "usage: shardlab-gemm-accuracy [matmul_perf_table.txtpb] "
                   "[--markdown]\n";
      return 2;
    }
  }
  std::string text;
  if (!shardlab::readFile(path, text)) {
    if (MissingDataAllowed()) {
      std::cout << "NOT RUN: " << path << " not found\n";
      return 77;
    }
    std::cerr << "shardlab-gemm-accuracy: " << path
              << " not found (XLA's measured GEMM table, in the shared data "
                 "folder: ../shared/data/xla-perf-tables or "
                 "$SHARDLAB_SHARED/data/xla-perf-tables)\n";
    return 2;
  }
  Result<std::vector<std::string>> devices = listXlaDeviceKeys(text);
  if (!devices || devices->empty()) {
    std::cerr << path << ": no device in the table\n";
    return 2;
  }
  if (markdown)
    std::cout << "| device | dtype | mode | answered | median | p90 | max | "
                 "worst shapes (b x m x n x k) "
                 "|\n|---|---|---|---|---|---|---|---|\n";
  int passed = 0, failed = 0;
  auto check = [&](bool ok, const std::string &what) {
    (ok ? passed : failed) += 1;
    if (!ok)
      std::cout << "FAIL: " << what << "\n";
  };
  for (const std::string &device : *devices) {
    Result<PerfTable> table = importXlaGemmTable(text, device);
    if (!table) {
      std::cerr << path << ": " << table.error().message << "\n";
      return 2;
    }
    std::vector<std::string> keys;
    for (const GemmEntry &g : table->gemms)
      if (std::find(keys.begin(), keys.end(), gemmDtypeKey(g)) == keys.end())
        keys.push_back(gemmDtypeKey(g));
    for (const std::string &key : keys) {
      std::vector<GemmEntry> points;
      for (const GemmEntry &g : table->gemms)
        if (gemmDtypeKey(g) == key)
          points.push_back(g);
      for (EstimateMode mode :
           {EstimateMode::Compatible, EstimateMode::Accurate}) {
        MatmulOptions options;
        options.mode = mode;
        const std::string name =
            mode == EstimateMode::Accurate ? "accurate" : "compatible";
        Row in = Summarise({device, key, name + ", in sample", points.size()},
                           Errors(points, options, false));
        Print(in, markdown);
        check(in.answered == in.points && in.max <= kInSampleTolerance,
              device + " " + key + " " + name +
                  ": a measured point is not "
                  "given back exactly");
        Row loo =
            Summarise({device, key, name + ", leave one out", points.size()},
                      Errors(points, options, true));
        Print(loo, markdown);
        check(loo.answered == loo.points, device + " " + key + " " + name +
                                              ": a left-out point was not "
                                              "answered");
        if (mode == EstimateMode::Accurate)
          check(loo.median <= kGoalMedian && loo.p90 <= kGoalP90,
                device + " " + key + " accurate leave-one-out above the goal");
      }
      // XLA's user-profile path (nearest neighbour), for reference only.
      MatmulOptions nearest;
      nearest.kind = GemmTableKind::UserProfiles;
      Print(Summarise({device, key, "nearest (XLA user path), leave one out",
                       points.size()},
                      Errors(points, nearest, true)),
            markdown);
    }
  }
  // The presets' built-in copy (core/src/cost/xla_gemm_presets.inc) must be
  // this table, point for point.
  for (const std::string &name : hardwarePresetNames()) {
    Result<HardwarePreset> hw = findHardwarePreset(name);
    if (!hw || hw->gemm_table_device.empty())
      continue;
    Result<PerfTable> table = importXlaGemmTable(text, hw->gemm_table_device);
    const PerfTable preset = presetTable(*hw);
    bool same = table && table->gemms.size() == preset.gemms.size();
    for (size_t i = 0; same && i < preset.gemms.size(); ++i) {
      const GemmEntry &a = table->gemms[i], &b = preset.gemms[i];
      same = a.b == b.b && a.m == b.m && a.n == b.n && a.k == b.k &&
             gemmDtypeKey(a) == gemmDtypeKey(b) && a.flop_per_s == b.flop_per_s;
    }
    check(same, "preset " + name + ": its built-in GEMM rates differ from " +
                    hw->gemm_table_device + " in " + path +
                    " (regenerate: python3 scripts/gen_xla_gemm_presets.py)");
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}
