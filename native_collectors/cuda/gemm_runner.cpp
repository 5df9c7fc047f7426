// cuBLASLt GEMM measurements: TN (k-major) operands, rotating operand sets
// so samples are not L2 hits, CUDA events around batches of launches, the
// top heuristic algorithm (or the best of --algos candidates), median kept.
#include "gemm_runner.h"

#include "device_info.h"
#include "kernels.h"
#include "progress.h"
#include "shardlab/collectors/bandwidth.h"
#include "shardlab/collectors/resume.h"
#include "shardlab/collectors/stats.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <ctime>
#include <memory>

namespace shardlab::collectors {
namespace {

void ltCheck(cublasStatus_t s, const std::string &what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CollectorError(what + ": cuBLASLt status " +
                         std::to_string(static_cast<int>(s)));
}

struct DeviceBuffer {
  void *ptr = nullptr;
  explicit DeviceBuffer(int64_t bytes) {
    cudaCheck(cudaMalloc(&ptr, static_cast<size_t>(bytes)),
              "cudaMalloc(" + std::to_string(bytes) + " bytes)");
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  char *bytes() const { return static_cast<char *>(ptr); }
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    cudaCheck(cudaEventCreate(&start), "cudaEventCreate");
    cudaCheck(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

cudaDataType_t cudaType(const std::string &dtype) {
  if (dtype == "bf16")
    return CUDA_R_16BF;
  if (dtype == "f16")
    return CUDA_R_16F;
  if (dtype == "f8e4m3fn")
    return CUDA_R_8F_E4M3;
  return CUDA_R_32F;
}

cublasComputeType_t computeType(const std::string &name) {
  return name == "CUBLAS_COMPUTE_32F_FAST_TF32" ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                : CUBLAS_COMPUTE_32F;
}

// Descriptors of one GEMM shape (owned, destroyed with the object).
struct Problem {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  ~Problem() {
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(d);
    cublasLtMatmulDescDestroy(op);
  }
};

cublasLtMatrixLayout_t layout(cudaDataType_t t, int64_t rows, int64_t cols,
                              int64_t batch) {
  cublasLtMatrixLayout_t l = nullptr;
  ltCheck(cublasLtMatrixLayoutCreate(&l, t, rows, cols, rows),
          "cublasLtMatrixLayoutCreate");
  const int32_t count = static_cast<int32_t>(batch);
  const int64_t stride = rows * cols;
  ltCheck(cublasLtMatrixLayoutSetAttribute(
              l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
          "batch count");
  ltCheck(cublasLtMatrixLayoutSetAttribute(
              l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
              sizeof stride),
          "batch stride");
  return l;
}

// D (m x n, column-major) = A^T B with A stored k x m and B stored k x n.
std::unique_ptr<Problem> makeProblem(const GemmDtype &dt, const GemmPoint &p) {
  auto pr = std::make_unique<Problem>();
  ltCheck(
      cublasLtMatmulDescCreate(&pr->op, computeType(dt.compute), CUDA_R_32F),
      "cublasLtMatmulDescCreate");
  const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
  ltCheck(cublasLtMatmulDescSetAttribute(pr->op, CUBLASLT_MATMUL_DESC_TRANSA,
                                         &t, sizeof t),
          "transa");
  ltCheck(cublasLtMatmulDescSetAttribute(pr->op, CUBLASLT_MATMUL_DESC_TRANSB,
                                         &n, sizeof n),
          "transb");
  pr->a = layout(cudaType(dt.lhs), p.k, p.m, p.b);
  pr->b = layout(cudaType(dt.rhs), p.k, p.n, p.b);
  pr->d = layout(cudaType(dt.out), p.m, p.n, p.b);
  return pr;
}

// Everything one point's launches need.
struct GemmRun {
  cublasLtHandle_t lt;
  cudaStream_t stream;
  void *workspace;
  int64_t workspace_bytes;
  const Problem *problem;
  char *a, *b, *d;
  int64_t a_bytes, b_bytes, d_bytes, sets;
};

void launch(const GemmRun &r, const cublasLtMatmulAlgo_t &algo, int64_t i) {
  const float alpha = 1.0f, beta = 0.0f;
  const int64_t s = i % r.sets;
  ltCheck(cublasLtMatmul(r.lt, r.problem->op, &alpha, r.a + s * r.a_bytes,
                         r.problem->a, r.b + s * r.b_bytes, r.problem->b, &beta,
                         r.d + s * r.d_bytes, r.problem->d, r.d + s * r.d_bytes,
                         r.problem->d, &algo, r.workspace,
                         static_cast<size_t>(r.workspace_bytes), r.stream),
          "cublasLtMatmul");
}

// Microseconds per launch over `launches` back-to-back launches.
double timeLaunches(const GemmRun &r, const cublasLtMatmulAlgo_t &algo,
                    int64_t launches, int64_t *counter) {
  Events ev;
  cudaCheck(cudaEventRecord(ev.start, r.stream), "cudaEventRecord");
  for (int64_t i = 0; i < launches; ++i)
    launch(r, algo, (*counter)++);
  cudaCheck(cudaEventRecord(ev.stop, r.stream), "cudaEventRecord");
  cudaCheck(cudaEventSynchronize(ev.stop), "cudaEventSynchronize");
  float ms = 0;
  cudaCheck(cudaEventElapsedTime(&ms, ev.start, ev.stop),
            "cudaEventElapsedTime");
  return ms * 1000.0 / static_cast<double>(launches);
}

std::vector<cublasLtMatmulHeuristicResult_t> heuristics(const GemmRun &r,
                                                        int64_t wanted) {
  cublasLtMatmulPreference_t pref = nullptr;
  ltCheck(cublasLtMatmulPreferenceCreate(&pref), "preference");
  const uint64_t ws = static_cast<uint64_t>(r.workspace_bytes);
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  std::vector<cublasLtMatmulHeuristicResult_t> results(
      static_cast<size_t>(wanted));
  int returned = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
      r.lt, r.problem->op, r.problem->a, r.problem->b, r.problem->d,
      r.problem->d, pref, static_cast<int>(wanted), results.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS || returned == 0)
    throw CollectorError("cuBLASLt has no algorithm for this GEMM");
  results.resize(static_cast<size_t>(returned));
  return results;
}

// Times the point with the chosen algorithm; returns per-sample times.
std::vector<double> sample(const GemmRun &r, const GemmOptions &o) {
  const auto candidates = heuristics(r, o.algos);
  int64_t counter = 0;
  for (int64_t i = 0; i < o.warmup; ++i)
    launch(r, candidates[0].algo, counter++);
  size_t best = 0;
  double best_us = 1e300;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const double us = timeLaunches(r, candidates[c].algo, 3, &counter);
    if (us < best_us)
      best_us = us, best = c;
  }
  const int64_t per = launchesPerSample(best_us, 100.0, 1000);
  std::vector<double> samples;
  for (int64_t i = 0; i < o.iters; ++i)
    samples.push_back(timeLaunches(r, candidates[best].algo, per, &counter));
  return samples;
}

struct Session {
  const GemmOptions &opts;
  const GemmPlan &plan;
  cublasLtHandle_t lt = nullptr;
  cudaStream_t stream = nullptr;
  int64_t rotate_bytes = 0;
};

cost::GemmEntry measure(const Session &s, const GemmPoint &p, void *workspace) {
  const GemmDtype &dt = s.plan.dtypes[p.dtype];
  const auto problem = makeProblem(dt, p);
  const int64_t a = p.b * p.m * p.k * cost::dtypeBytes(dt.lhs);
  const int64_t b = p.b * p.k * p.n * cost::dtypeBytes(dt.rhs);
  const int64_t d = p.b * p.m * p.n * cost::dtypeBytes(dt.out);
  int64_t free_b = 0, total_b = 0;
  memoryInfo(&free_b, &total_b);
  const int64_t sets =
      rotatingSets(a + b + d, s.rotate_bytes,
                   std::min<int64_t>(64, free_b / 2 / (a + b + d)));
  DeviceBuffer A(a * sets), B(b * sets), D(d * sets);
  DeviceType ta{}, tb{};
  deviceTypeOf(dt.lhs, &ta), deviceTypeOf(dt.rhs, &tb);
  cudaCheck(
      fillRandom(A.ptr, ta, a * sets / cost::dtypeBytes(dt.lhs), 1, s.stream),
      "fill A");
  cudaCheck(
      fillRandom(B.ptr, tb, b * sets / cost::dtypeBytes(dt.rhs), 2, s.stream),
      "fill B");
  const GemmRun run{s.lt,
                    s.stream,
                    workspace,
                    s.opts.workspace_bytes,
                    problem.get(),
                    A.bytes(),
                    B.bytes(),
                    D.bytes(),
                    a,
                    b,
                    d,
                    sets};
  cost::GemmEntry e = entryFor(s.plan, p);
  e.time = summarize(sample(run, s.opts));
  e.flop_per_s = gemmFlops(p.b, p.m, p.n, p.k) / (e.time->median_us * 1e-6);
  return e;
}

std::string description(const GemmOptions &o, int64_t rotate_bytes) {
  return std::string("cuBLASLt GEMM D[b,m,n] = A[b,m,k] B[b,k,n], k-major "
                     "operands (TN); f32 compute ") +
         (o.f32_compute == F32Compute::Tf32 ? "TF32 (COMPUTE_32F_FAST_TF32)"
                                            : "strict FP32 (COMPUTE_32F)") +
         "; " +
         (o.algos > 1 ? "best of " + std::to_string(o.algos) + " heuristic"
                      : std::string("top heuristic")) +
         " algorithm; CUDA events around batches of launches, median of " +
         std::to_string(o.iters) + " samples after " +
         std::to_string(o.warmup) + " warm-up launches; rotating operands " +
         formatBytes(rotate_bytes) + "; workspace " +
         formatBytes(o.workspace_bytes);
}

std::string label(const GemmPlan &plan, const GemmPoint &p) {
  return plan.dtypes[p.dtype].name + " b" + std::to_string(p.b) + " " +
         std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
         std::to_string(p.k);
}

} // namespace

int runGemmSweep(const GemmOptions &opts,
                 const std::vector<std::string> &args) {
  const int count = cudaDeviceCount();
  if (opts.device >= count)
    throw CollectorError("--device " + std::to_string(opts.device) + ": only " +
                         std::to_string(count) + " CUDA device(s) visible");
  const int dev = static_cast<int>(opts.device);
  cudaCheck(cudaSetDevice(dev), "cudaSetDevice");
  RunEnvironment env = probeEnvironment({dev});
  env.gpu_count = 1, env.gpus_per_node = 1;
  env.cublaslt = static_cast<long>(cublasLtGetVersion());
  Result<GemmPlan> plan = planGemms(opts, env.sm_major * 10 + env.sm_minor);
  if (!plan)
    throw CollectorError(plan.error().message);
  for (const std::string &n : plan->notes)
    std::fprintf(stderr, "note: %s\n", n.c_str());
  const int64_t rotate =
      opts.rotate_bytes > 0
          ? opts.rotate_bytes
          : std::max<int64_t>(2 * L2CacheBytes(dev), int64_t{128} << 20);
  Result<OutputTable> out = openOutputTable(
      opts.out,
      buildMetadata(env, "shardlab-collect-gemm", args,
                    description(opts, rotate), std::time(nullptr)),
      opts.overwrite);
  if (!out)
    throw CollectorError(out.error().message);
  Session s{opts, *plan};
  s.rotate_bytes = rotate;
  ltCheck(cublasLtCreate(&s.lt), "cublasLtCreate");
  cudaCheck(cudaStreamCreate(&s.stream), "cudaStreamCreate");
  DeviceBuffer workspace(opts.workspace_bytes);
  CheckpointWriter writer(opts.out, 10.0);
  Progress progress(static_cast<int64_t>(plan->points.size()), opts.quiet);
  int64_t done = 0, failed = 0;
  for (const GemmPoint &p : plan->points) {
    progress.update(done++, label(*plan, p));
    if (out->done.count(p.key))
      continue;
    try {
      out->table.gemms.push_back(measure(s, p, workspace.ptr));
    } catch (const CollectorError &e) {
      ++failed;
      std::fprintf(stderr, "\nFAILED %s: %s\n", label(*plan, p).c_str(),
                   e.what());
      cudaGetLastError();
      continue;
    }
    if (Result<bool> w = writer.maybe(out->table, nowSeconds(), false); !w)
      throw CollectorError(w.error().message);
  }
  if (Result<bool> w = writer.maybe(out->table, nowSeconds(), true); !w)
    throw CollectorError(w.error().message);
  progress.finish("wrote " + std::to_string(out->table.gemms.size()) +
                  " GEMM entries to " + opts.out +
                  (failed ? " (" + std::to_string(failed) + " failed)" : ""));
  cudaStreamDestroy(s.stream);
  cublasLtDestroy(s.lt);
  return failed ? 1 : 0;
}

} // namespace shardlab::collectors
