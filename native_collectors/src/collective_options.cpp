// Command line of shardlab-collect-collectives.
#include "shardlab/collectors/collective_plan.h"

namespace shardlab::collectors {
namespace {

const std::vector<FlagSpec> &Specs() {
  static const std::vector<FlagSpec> specs = {
      {"minbytes", 'b', "SIZE", "1K",
       "smallest transfer size (K/M/G = 2^10/20/30)"},
      {"maxbytes", 'e', "SIZE", "2G", "largest transfer size"},
      {"stepfactor", 'f', "F", "2", "multiply the size by F each step"},
      {"iters", 'n', "N", "20", "timed iterations per point"},
      {"warmup", 'w', "N", "5", "untimed warm-up iterations per point"},
      {"check", 'c', "N", "1", "check results after timing (0 = off)"},
      {"dtypes", 'd', "LIST", "f32", "element types: f32, bf16, f16, s32"},
      {"ops", 0, "LIST", "all",
       "all-reduce, all-gather, reduce-scatter, all-to-all, "
       "collective-permute"},
      {"group-sizes", 0, "LIST", "2,4,8",
       "sizes of contiguous groups (those dividing the GPU count)"},
      {"groups", 0, "SPECS", "",
       "replica groups instead, ';'-separated: [4,2]<=[8];{{0,4},{1,5}}"},
      {"permutes", 0, "LIST", "one-way,ring,mutual",
       "collective-permute patterns inside each group"},
      {"ngpus", 'g', "N", "all visible",
       "GPUs driven by this process (1 under MPI)"},
      {"nodes", 0, "N", "1", "--dry-run: nodes of the planned job"},
      {"partition-size", 0, "N", "GPUs per node",
       "GPUs per NVLink domain (classifies comm types)"},
      {"out", 0, "PATH", "collectives.shardlab.json", "output table"},
      {"overwrite", 0, "", "", "start afresh instead of resuming --out"},
      {"dry-run", 0, "", "", "print the sweep and exit; touches no GPU"},
      {"quiet", 'q', "", "", "no progress on stderr"},
      {"version", 0, "", "", "print the collector version"},
      {"help", 'h', "", "", "print this help"},
  };
  return specs;
}

Result<CollOp> ParseOp(const std::string &text) {
  for (CollOp op :
       {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter,
        CollOp::kAllToAll, CollOp::kCollectivePermute})
    if (text == OpName(op))
      return op;
  if (text == "send-recv" || text == "sendrecv")
    return CollOp::kCollectivePermute;
  return MakeError("--ops: unknown op '" + text +
                   "' (all-reduce, all-gather, reduce-scatter, all-to-all, "
                   "collective-permute)");
}

Result<PermutePattern> ParsePermute(const std::string &text) {
  if (text == "one-way")
    return PermutePattern::kOneWay;
  if (text == "ring")
    return PermutePattern::kRing;
  if (text == "mutual")
    return PermutePattern::kMutual;
  return MakeError("--permutes: unknown pattern '" + text +
                   "' (one-way, ring, mutual)");
}

// Splits "a;b;c" (replica group specs contain commas).
std::vector<std::string> SplitSpecs(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t semi = text.find(';', start);
    if (semi == std::string::npos)
      semi = text.size();
    if (semi > start)
      out.push_back(text.substr(start, semi - start));
    start = semi + 1;
  }
  return out;
}

Result<bool> ReadSizes(const ParsedFlags &f, CollectiveOptions *o) {
  Result<int64_t> lo = ParseBytes(f.Get("minbytes", "1K"));
  Result<int64_t> hi = ParseBytes(f.Get("maxbytes", "2G"));
  Result<double> step = ParseFactor(f.Get("stepfactor", "2"), "--stepfactor");
  if (!lo || !hi)
    return MakeError((!lo ? lo : hi).error().message);
  if (!step)
    return step.error();
  if (*lo > *hi)
    return MakeError("--minbytes " + FormatBytes(*lo) + " > --maxbytes " +
                     FormatBytes(*hi));
  o->min_bytes = *lo, o->max_bytes = *hi, o->step_factor = *step;
  return true;
}

Result<bool> ReadCounts(const ParsedFlags &f, CollectiveOptions *o) {
  struct Int {
    const char *name;
    int64_t *field;
    bool zero_ok;
  };
  for (Int i : {Int{"iters", &o->iters, false}, Int{"warmup", &o->warmup, true},
                Int{"check", &o->check, true}, Int{"ngpus", &o->ngpus, false},
                Int{"nodes", &o->nodes, false},
                Int{"partition-size", &o->partition_size, false}}) {
    if (!f.Has(i.name))
      continue;
    const std::string v = f.Get(i.name, "");
    if (i.zero_ok && v == "0") {
      *i.field = 0;
      continue;
    }
    Result<int64_t> n = ParsePositiveInt(v, std::string("--") + i.name);
    if (!n)
      return n.error();
    *i.field = *n;
  }
  return true;
}

Result<bool> ReadLists(const ParsedFlags &f, CollectiveOptions *o) {
  if (f.Has("dtypes"))
    o->dtypes = SplitList(f.Get("dtypes", ""));
  for (const std::string &d : o->dtypes)
    if (CollectiveDtypeBytes(d) == 0)
      return MakeError("--dtypes: unsupported type '" + d +
                       "' (f32, bf16, f16, s32)");
  if (f.Has("ops") && f.Get("ops", "") != "all") {
    o->ops.clear();
    for (const std::string &name : SplitList(f.Get("ops", ""))) {
      Result<CollOp> op = ParseOp(name);
      if (!op)
        return op.error();
      o->ops.push_back(*op);
    }
  }
  if (f.Has("permutes")) {
    o->permutes.clear();
    for (const std::string &name : SplitList(f.Get("permutes", ""))) {
      Result<PermutePattern> p = ParsePermute(name);
      if (!p)
        return p.error();
      o->permutes.push_back(*p);
    }
  }
  if (f.Has("group-sizes")) {
    Result<std::vector<int64_t>> s =
        ParseIntList(f.Get("group-sizes", ""), "--group-sizes");
    if (!s)
      return s.error();
    o->group_sizes = *s;
  }
  if (f.Has("groups"))
    o->groups = SplitSpecs(f.Get("groups", ""));
  if (o->dtypes.empty() || o->ops.empty() || o->permutes.empty())
    return MakeError("--dtypes, --ops and --permutes must not be empty");
  return true;
}

} // namespace

Result<CollectiveOptions>
ParseCollectiveOptions(const std::vector<std::string> &args) {
  Result<ParsedFlags> f = ParseFlags(Specs(), args);
  if (!f)
    return f.error();
  CollectiveOptions o;
  o.help = f->Has("help"), o.version = f->Has("version");
  o.dry_run = f->Has("dry-run"), o.quiet = f->Has("quiet");
  o.overwrite = f->Has("overwrite");
  o.out = f->Get("out", o.out);
  for (auto step : {ReadSizes, ReadCounts, ReadLists}) {
    Result<bool> ok = step(*f, &o);
    if (!ok)
      return ok.error();
  }
  return o;
}

std::string CollectiveHelp() {
  return FormatHelp(
      "shardlab-collect-collectives",
      "Measures NCCL collectives over transfer sizes, group shapes and "
      "dtypes\n(nccl-tests conventions: warm-up, CUDA events per iteration, "
      "median of -n,\nalgbw/busbw) and writes a shardlab collective table "
      "(*.shardlab.json).\nRe-running with the same --out resumes: finished "
      "points are skipped.",
      Specs(),
      "Launch: one process driving all local GPUs (-g), or one process per "
      "GPU\nunder MPI (mpirun -np 16 -N 8 shardlab-collect-collectives ...).\n"
      "Sizes are XLA's bytes_transferred: all-reduce buffer, all-gather "
      "output,\nreduce-scatter input, all-to-all buffer, permute operand.\n");
}

} // namespace shardlab::collectors
