// The GEMM sweep: command line, dtype configurations and points.
#include "shardlab/collectors/gemm_plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace shardlab::collectors {
namespace {

const std::vector<FlagSpec> &specs() {
  static const std::vector<FlagSpec> specs = {
      {"batch", 0, "LIST", "1,2,4", "batch sizes b"},
      {"mindim", 'b', "N", "256", "smallest m, n, k"},
      {"maxdim", 'e', "N", "4096", "largest m, n, k"},
      {"stepfactor", 'f', "F", "2", "multiply m, n, k by F each step"},
      {"m", 'm', "LIST", "", "m values instead (1,2,4 or 256..4096)"},
      {"n", 0, "LIST", "", "n values instead"},
      {"k", 'k', "LIST", "", "k values instead"},
      {"dtypes", 'd', "LIST", "bf16,f32", "bf16, f16, f32, fp8 (sm_89+)"},
      {"f32-compute", 0, "MODE", "tf32",
       "f32 GEMMs: tf32 (tensor cores) or strict (FP32)"},
      {"iters", 'n', "N", "20", "timed samples per point (median kept)"},
      {"warmup", 'w', "N", "5", "untimed warm-up launches per point"},
      {"algos", 0, "N", "1",
       "heuristic candidates timed per point (best kept; 1 = top choice)"},
      {"device", 0, "N", "0", "CUDA device"},
      {"rotate-bytes", 0, "SIZE", "2 x L2, >= 128M",
       "bytes of rotating operand sets (defeats L2 hits)"},
      {"workspace", 0, "SIZE", "32M", "cuBLASLt workspace"},
      {"out", 0, "PATH", "gemm.shardlab.json", "output table"},
      {"overwrite", 0, "", "", "start afresh instead of resuming --out"},
      {"dry-run", 0, "", "", "print the sweep and exit; touches no GPU"},
      {"quiet", 'q', "", "", "no progress on stderr"},
      {"version", 0, "", "", "print the collector version"},
      {"help", 'h', "", "", "print this help"},
  };
  return specs;
}

Result<std::vector<int64_t>> dims(const ParsedFlags &f, const char *name) {
  if (f.has(name))
    return parseIntList(f.get(name, ""), std::string("--") + name);
  Result<int64_t> lo = parsePositiveInt(f.get("mindim", "256"), "--mindim");
  Result<int64_t> hi = parsePositiveInt(f.get("maxdim", "4096"), "--maxdim");
  Result<double> step = parseFactor(f.get("stepfactor", "2"), "--stepfactor");
  if (!lo || !hi)
    return (!lo ? lo : hi).error();
  if (!step)
    return step.error();
  if (*lo > *hi)
    return makeError("--mindim > --maxdim");
  std::vector<int64_t> out;
  for (double v = static_cast<double>(*lo);
       v <= static_cast<double>(*hi) * (1 + 1e-12); v *= *step)
    if (out.empty() || std::llround(v) > out.back())
      out.push_back(std::llround(v));
  return out;
}

Result<bool> readInts(const ParsedFlags &f, GemmOptions *o) {
  struct Int {
    const char *name;
    int64_t *field;
    bool zero_ok, bytes;
  };
  for (Int i : {Int{"iters", &o->iters, false, false},
                Int{"warmup", &o->warmup, true, false},
                Int{"algos", &o->algos, false, false},
                Int{"device", &o->device, true, false},
                Int{"rotate-bytes", &o->rotate_bytes, false, true},
                Int{"workspace", &o->workspace_bytes, false, true}}) {
    if (!f.has(i.name))
      continue;
    const std::string v = f.get(i.name, "");
    Result<int64_t> n =
        i.zero_ok && v == "0"
            ? Result<int64_t>(int64_t{0})
            : (i.bytes ? parseBytes(v)
                       : parsePositiveInt(v, std::string("--") + i.name));
    if (!n)
      return makeError(std::string("--") + i.name + ": " + n.error().message);
    *i.field = *n;
  }
  return true;
}

Result<bool> readLists(const ParsedFlags &f, GemmOptions *o) {
  if (f.has("batch")) {
    Result<std::vector<int64_t>> b =
        parseIntList(f.get("batch", ""), "--batch");
    if (!b)
      return b.error();
    o->batch = *b;
  }
  for (auto [name, field] :
       {std::make_pair("m", &o->m), std::make_pair("n", &o->n),
        std::make_pair("k", &o->k)}) {
    Result<std::vector<int64_t>> d = dims(f, name);
    if (!d)
      return d.error();
    *field = *d;
  }
  if (f.has("dtypes"))
    o->dtypes = splitList(f.get("dtypes", ""));
  if (o->dtypes.empty())
    return makeError("--dtypes: empty list");
  const std::string mode = f.get("f32-compute", "tf32");
  if (mode != "tf32" && mode != "strict")
    return makeError("--f32-compute: expected tf32 or strict, got '" + mode +
                     "'");
  o->f32_compute = mode == "tf32" ? F32Compute::Tf32 : F32Compute::Strict;
  for (const std::string &d : o->dtypes)
    if (Result<GemmDtype> r = resolveGemmDtype(d, o->f32_compute); !r)
      return r.error();
  return true;
}

} // namespace

Result<GemmOptions> parseGemmOptions(const std::vector<std::string> &args) {
  Result<ParsedFlags> f = parseFlags(specs(), args);
  if (!f)
    return f.error();
  GemmOptions o;
  o.help = f->has("help"), o.version = f->has("version");
  o.dry_run = f->has("dry-run"), o.quiet = f->has("quiet");
  o.overwrite = f->has("overwrite");
  o.out = f->get("out", o.out);
  for (auto step : {readInts, readLists}) {
    Result<bool> ok = step(*f, &o);
    if (!ok)
      return ok.error();
  }
  return o;
}

std::string gemmHelp() {
  return formatHelp(
      "shardlab-collect-gemm",
      "Measures cuBLASLt GEMMs D[b,m,n] = A[b,m,k] B[b,k,n] over a (b, m, n, "
      "k)\ngrid and dtypes (CUDA events, rotating operand sets, median of "
      "-n) and\nwrites a shardlab GEMM table (*.shardlab.json). Re-running "
      "with the same\n--out resumes: finished points are skipped.",
      specs(),
      "Operands are k-major (cuBLASLt TN layout, required for fp8). The "
      "algorithm\nis cuBLASLt's top heuristic unless --algos > 1. The f32 "
      "compute mode is\nrecorded in the table's metadata.\n");
}

Result<GemmDtype> resolveGemmDtype(std::string_view name, F32Compute mode) {
  if (name == "bf16" || name == "f16")
    return GemmDtype{std::string(name), std::string(name),    std::string(name),
                     std::string(name), "CUBLAS_COMPUTE_32F", 0};
  if (name == "f32")
    return GemmDtype{"f32",
                     "f32",
                     "f32",
                     "f32",
                     mode == F32Compute::Tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32"
                                              : "CUBLAS_COMPUTE_32F",
                     0};
  if (name == "fp8" || name == "f8e4m3fn")
    return GemmDtype{"fp8",  "f8e4m3fn",           "f8e4m3fn",
                     "bf16", "CUBLAS_COMPUTE_32F", 89};
  return makeError("--dtypes: unsupported GEMM type '" + std::string(name) +
                   "' (bf16, f16, f32, fp8)");
}

std::string gemmEntryKey(const cost::GemmEntry &e) {
  return cost::gemmDtypeKey(e) + "|" + std::to_string(e.b) + "," +
         std::to_string(e.m) + "," + std::to_string(e.n) + "," +
         std::to_string(e.k);
}

cost::GemmEntry entryFor(const GemmPlan &plan, const GemmPoint &p) {
  const GemmDtype &d = plan.dtypes[p.dtype];
  cost::GemmEntry e;
  e.b = p.b, e.m = p.m, e.n = p.n, e.k = p.k;
  e.lhs_dtype = d.lhs, e.rhs_dtype = d.rhs, e.out_dtype = d.out;
  return e;
}

Result<GemmPlan> planGemms(const GemmOptions &opts, int64_t sm) {
  GemmPlan plan;
  for (const std::string &name : opts.dtypes) {
    Result<GemmDtype> d = resolveGemmDtype(name, opts.f32_compute);
    if (!d)
      return d.error();
    if (sm > 0 && d->min_sm > sm) {
      plan.notes.push_back(name + ": skipped (needs sm_" +
                           std::to_string(d->min_sm) + "+, device is sm_" +
                           std::to_string(sm) + ")");
      continue;
    }
    plan.dtypes.push_back(*d);
  }
  for (size_t d = 0; d < plan.dtypes.size(); ++d)
    for (int64_t b : opts.batch)
      for (int64_t m : opts.m)
        for (int64_t n : opts.n)
          for (int64_t k : opts.k) {
            GemmPoint p{b, m, n, k, d, ""};
            p.key = gemmEntryKey(entryFor(plan, p));
            plan.points.push_back(p);
          }
  return plan;
}

std::string formatGemmPlan(const GemmPlan &plan, const GemmOptions &opts) {
  std::ostringstream os;
  os << "# shardlab-collect-gemm plan: " << opts.warmup << " warm-up + "
     << opts.iters << " timed samples per point, "
     << (opts.algos > 1
             ? "best of " + std::to_string(opts.algos) + " heuristic algorithms"
             : std::string("top heuristic algorithm"))
     << "\n";
  for (const GemmDtype &d : plan.dtypes)
    os << "# dtype " << d.name << ": " << d.lhs << "x" << d.rhs << "->" << d.out
       << " compute " << d.compute << "\n";
  os << "# b m n k dtype\n";
  for (const GemmPoint &p : plan.points)
    os << p.b << " " << p.m << " " << p.n << " " << p.k << " "
       << plan.dtypes[p.dtype].name << "\n";
  for (const std::string &n : plan.notes)
    os << "# note: " << n << "\n";
  os << "# " << plan.points.size() << " points\n";
  return os.str();
}

int64_t gemmFootprintBytes(const GemmPlan &plan, const GemmPoint &p) {
  const GemmDtype &d = plan.dtypes[p.dtype];
  return p.b * (p.m * p.k * cost::dtypeBytes(d.lhs) +
                p.k * p.n * cost::dtypeBytes(d.rhs) +
                p.m * p.n * cost::dtypeBytes(d.out));
}

int64_t rotatingSets(int64_t footprint, int64_t target, int64_t max_sets) {
  if (footprint <= 0)
    return 1;
  const int64_t sets = (target + footprint - 1) / footprint;
  return std::clamp<int64_t>(sets, 1, std::max<int64_t>(1, max_sets));
}

int64_t launchesPerSample(double estimate_us, double target_us,
                          int64_t max_launches) {
  if (!(estimate_us > 0) || !(target_us > 0))
    return 1;
  const double n = std::ceil(target_us / estimate_us);
  return std::clamp<int64_t>(static_cast<int64_t>(std::min(n, 1e9)), 1,
                             std::max<int64_t>(1, max_launches));
}

} // namespace shardlab::collectors
