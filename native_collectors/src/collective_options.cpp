// Command line of shardlab-collect-collectives.
#include "shardlab/collectors/collective_plan.h"

namespace shardlab::collectors {
namespace {

const std::vector<FlagSpec> &specs() {
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

Result<CollOp> parseOp(const std::string &text) {
  for (CollOp op : {CollOp::AllReduce, CollOp::AllGather, CollOp::ReduceScatter,
                    CollOp::AllToAll, CollOp::CollectivePermute})
    if (text == opName(op))
      return op;
  if (text == "send-recv" || text == "sendrecv")
    return CollOp::CollectivePermute;
  return makeError("--ops: unknown op '" + text +
                   "' (all-reduce, all-gather, reduce-scatter, all-to-all, "
                   "collective-permute)");
}

Result<PermutePattern> parsePermute(const std::string &text) {
  if (text == "one-way")
    return PermutePattern::OneWay;
  if (text == "ring")
    return PermutePattern::Ring;
  if (text == "mutual")
    return PermutePattern::Mutual;
  return makeError("--permutes: unknown pattern '" + text +
                   "' (one-way, ring, mutual)");
}

// Splits "a;b;c" (replica group specs contain commas).
std::vector<std::string> splitSpecs(const std::string &text) {
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

Result<bool> readSizes(const ParsedFlags &f, CollectiveOptions *o) {
  Result<int64_t> lo = parseBytes(f.get("minbytes", "1K"));
  Result<int64_t> hi = parseBytes(f.get("maxbytes", "2G"));
  Result<double> step = parseFactor(f.get("stepfactor", "2"), "--stepfactor");
  if (!lo || !hi)
    return makeError((!lo ? lo : hi).error().message);
  if (!step)
    return step.error();
  if (*lo > *hi)
    return makeError("--minbytes " + formatBytes(*lo) + " > --maxbytes " +
                     formatBytes(*hi));
  o->min_bytes = *lo, o->max_bytes = *hi, o->step_factor = *step;
  return true;
}

Result<bool> readCounts(const ParsedFlags &f, CollectiveOptions *o) {
  struct Int {
    const char *name;
    int64_t *field;
    bool zero_ok;
  };
  for (Int i : {Int{"iters", &o->iters, false}, Int{"warmup", &o->warmup, true},
                Int{"check", &o->check, true}, Int{"ngpus", &o->ngpus, false},
                Int{"nodes", &o->nodes, false},
                Int{"partition-size", &o->partition_size, false}}) {
    if (!f.has(i.name))
      continue;
    const std::string v = f.get(i.name, "");
    if (i.zero_ok && v == "0") {
      *i.field = 0;
      continue;
    }
    Result<int64_t> n = parsePositiveInt(v, std::string("--") + i.name);
    if (!n)
      return n.error();
    *i.field = *n;
  }
  return true;
}

Result<bool> readLists(const ParsedFlags &f, CollectiveOptions *o) {
  if (f.has("dtypes"))
    o->dtypes = splitList(f.get("dtypes", ""));
  for (const std::string &d : o->dtypes)
    if (collectiveDtypeBytes(d) == 0)
      return makeError("--dtypes: unsupported type '" + d +
                       "' (f32, bf16, f16, s32)");
  if (f.has("ops") && f.get("ops", "") != "all") {
    o->ops.clear();
    for (const std::string &name : splitList(f.get("ops", ""))) {
      Result<CollOp> op = parseOp(name);
      if (!op)
        return op.error();
      o->ops.push_back(*op);
    }
  }
  if (f.has("permutes")) {
    o->permutes.clear();
    for (const std::string &name : splitList(f.get("permutes", ""))) {
      Result<PermutePattern> p = parsePermute(name);
      if (!p)
        return p.error();
      o->permutes.push_back(*p);
    }
  }
  if (f.has("group-sizes")) {
    Result<std::vector<int64_t>> s =
        parseIntList(f.get("group-sizes", ""), "--group-sizes");
    if (!s)
      return s.error();
    o->group_sizes = *s;
  }
  if (f.has("groups"))
    o->groups = splitSpecs(f.get("groups", ""));
  if (o->dtypes.empty() || o->ops.empty() || o->permutes.empty())
    return makeError("--dtypes, --ops and --permutes must not be empty");
  return true;
}

} // namespace

Result<CollectiveOptions>
parseCollectiveOptions(const std::vector<std::string> &args) {
  Result<ParsedFlags> f = parseFlags(specs(), args);
  if (!f)
    return f.error();
  CollectiveOptions o;
  o.help = f->has("help"), o.version = f->has("version");
  o.dry_run = f->has("dry-run"), o.quiet = f->has("quiet");
  o.overwrite = f->has("overwrite");
  o.out = f->get("out", o.out);
  for (auto step : {readSizes, readCounts, readLists}) {
    Result<bool> ok = step(*f, &o);
    if (!ok)
      return ok.error();
  }
  return o;
}

std::string collectiveHelp() {
  return formatHelp(
      "shardlab-collect-collectives",
      "Measures NCCL collectives over transfer sizes, group shapes and "
      "dtypes\n(nccl-tests conventions: warm-up, CUDA events per iteration, "
      "median of -n,\nalgbw/busbw) and writes a shardlab collective table "
      "(*.shardlab.json).\nRe-running with the same --out resumes: finished "
      "points are skipped.",
      specs(),
      "Launch: one process driving all local GPUs (-g), or one process per "
      "GPU\nunder MPI (mpirun -np 16 -N 8 shardlab-collect-collectives ...).\n"
      "Sizes are XLA's bytes_transferred: all-reduce buffer, all-gather "
      "output,\nreduce-scatter input, all-to-all buffer, permute operand.\n");
}

} // namespace shardlab::collectors
