// The GEMM sweep: options, dtype configurations (with the compute mode of
// f32 recorded) and the ordered list of (b, m, n, k, dtype) points. Pure.
#pragma once

#include "shardlab/collectors/flags.h"
#include "shardlab/cost/perf_table.h"

#include <string>
#include <vector>

namespace shardlab::collectors {

/// How an "f32" GEMM may compute: TF32 tensor cores or strict FP32.
enum class F32Compute { Tf32, Strict };

struct GemmOptions {
  std::vector<int64_t> batch = {1, 2, 4};
  std::vector<int64_t> m = {256, 512, 1024, 2048, 4096};
  std::vector<int64_t> n = m, k = m;
  std::vector<std::string> dtypes = {"bf16", "f32"};
  F32Compute f32_compute = F32Compute::Tf32;
  int64_t iters = 20;
  int64_t warmup = 5;
  int64_t algos = 1; // heuristic candidates timed; 1 = top heuristic only
  int64_t device = 0;
  int64_t rotate_bytes = 0; // 0 = auto (2 x L2, at least 128 MiB)
  int64_t workspace_bytes = int64_t{32} << 20;
  std::string out = "gemm.shardlab.json";
  bool overwrite = false, dry_run = false, help = false, quiet = false;
  bool version = false;
};

Result<GemmOptions> parseGemmOptions(const std::vector<std::string> &args);
std::string gemmHelp();

/// One dtype configuration (table dtypes + what cuBLASLt runs).
struct GemmDtype {
  std::string name;          // as given: bf16, f16, f32, fp8
  std::string lhs, rhs, out; // table dtypes (XLA names)
  std::string compute;       // e.g. CUBLAS_COMPUTE_32F_FAST_TF32
  int64_t min_sm = 0;        // minimum SM (major*10+minor), 0 = any
};
/// bf16, f16, f32 (with the compute mode), fp8 / f8e4m3fn.
Result<GemmDtype> resolveGemmDtype(std::string_view name, F32Compute mode);

struct GemmPoint {
  int64_t b = 1, m = 0, n = 0, k = 0;
  size_t dtype = 0; // index into GemmPlan::dtypes
  std::string key;
};

struct GemmPlan {
  std::vector<GemmDtype> dtypes;
  std::vector<GemmPoint> points;
  std::vector<std::string> notes;
};

/// Cartesian product dtype x b x m x n x k, skipping dtypes the device's
/// SM (`sm`, major*10+minor; 0 = unknown, keep all) cannot run.
Result<GemmPlan> planGemms(const GemmOptions &opts, int64_t sm);
/// Identity of an entry (dims + dtypes); equal for a point and its entry.
std::string gemmEntryKey(const cost::GemmEntry &e);
cost::GemmEntry entryFor(const GemmPlan &plan, const GemmPoint &p);
std::string formatGemmPlan(const GemmPlan &plan, const GemmOptions &opts);
/// Bytes of A, B and D of one point (what one rotating buffer set holds).
int64_t gemmFootprintBytes(const GemmPlan &plan, const GemmPoint &p);
/// Buffer sets to rotate through so that `target` bytes are touched.
int64_t rotatingSets(int64_t footprint, int64_t target, int64_t max_sets);
/// Launches per timed sample so one sample lasts about `target_us`.
int64_t launchesPerSample(double estimate_us, double target_us,
                          int64_t max_launches);

} // namespace shardlab::collectors
