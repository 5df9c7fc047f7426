// shardlab-schedule: estimates one training/inference step of a sharded
// module. A thin front end over schedule::runSchedulePipeline (propagation
// and explicit collectives unless --no-propagation, the costed per-device
// program, the latency-hiding scheduler with its memory rerun loop); prints
// the totals and optionally writes a Chrome trace (Perfetto) and a JSON
// report, atomically.
#include "shardlab/cost/perf_table.h"
#include "shardlab/schedule/pipeline.h"
#include "shardlab/schedule/report.h"
#include "shardlab/support/file_io.h"
#include "shardlab/text/text.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace shardlab;

namespace {

struct Options {
  std::string input, trace, report, preset = "h100", sol_options;
  std::vector<std::string> tables;
  int64_t gpus_per_node = 0; // 0: the preset's
  int overlap_limit = 1;
  std::array<int, schedule::kNumCollectiveKinds> kind_limits{};
  std::optional<int64_t> memory_limit, device_memory;
  int reruns = 1;
  int64_t while_trip_count = 0;
  bool approximate = false, propagate = true;
};

const char *kHelp =
    "USAGE: shardlab-schedule MODULE.mlir [options]\n\n"
    "Estimates a step of a sharded module with XLA's latency-hiding\n"
    "scheduler and shardlab's cost model, and prints the totals.\n\n"
    "OPTIONS:\n"
    "  --preset NAME          hardware preset (h100, h200, b200, a100)\n"
    "  --tables FILE          performance table (*.shardlab.json); default:\n"
    "                         the preset's analytical table\n"
    "  --gpus-per-node P      GPUs per NVLink node (default: the preset's)\n"
    "  --sol-options 'k=v,..' S-curve options (nic_speed_gbps, rtt_us, ...)\n"
    "  --overlap-limit N      collectives in flight per stream (default 1)\n"
    "  --all-gather-limit N, --all-reduce-limit N, --reduce-scatter-limit N,\n"
    "  --all-to-all-limit N, --collective-permute-limit N\n"
    "                         collectives of one kind in flight (XLA's\n"
    "                         *_overlap_limit; default 1, at most\n"
    "                         --overlap-limit)\n"
    "  --memory-limit BYTES   live-temporary limit for memory pressure\n"
    "                         (default: XLA's GPU rule, (device memory x 0.8\n"
    "                         - parameters) x 0.95)\n"
    "  --device-memory BYTES  device memory for that rule (default: the\n"
    "                         preset's; 0: no memory limit)\n"
    "  --reruns N             reschedule with the limit x 0.9 while the peak\n"
    "                         exceeds it, at most N times (default 1)\n"
    "  --while-trip-count N   iterations of a while loop whose trip count\n"
    "                         cannot be read from the module (default: one,\n"
    "                         with an assumption in the report)\n"
    "  --estimator real|approximate  cost model (default) or XLA's "
    "1/1000/5000\n"
    "  --no-propagation       the module already holds explicit collectives\n"
    "  --trace FILE, -o FILE  write a Chrome trace (open in ui.perfetto.dev)\n"
    "  --report FILE          write the JSON report\n"
    "  --help                 this text\n";

bool parseInt(const std::string &text, int64_t &out) {
  char *end = nullptr;
  out = std::strtoll(text.c_str(), &end, 10);
  return !text.empty() && end && *end == '\0';
}

// --all-gather-limit and the other per-kind flags; kNone for others.
schedule::CollectiveKind kindOfLimitFlag(const std::string &flag) {
  const std::string suffix = "-limit";
  if (flag.size() <= 2 + suffix.size() ||
      flag.compare(flag.size() - suffix.size(), suffix.size(), suffix) != 0)
    return schedule::CollectiveKind::kNone;
  const std::string name = flag.substr(2, flag.size() - 2 - suffix.size());
  for (int k = 1; k < schedule::kNumCollectiveKinds; ++k)
    if (schedule::toString(schedule::CollectiveKind(k)) == name)
      return schedule::CollectiveKind(k);
  return schedule::CollectiveKind::kNone;
}

bool parseValue(Options &o, const std::string &flag, const std::string &v,
                std::string &error) {
  int64_t n = 0;
  const schedule::CollectiveKind kind = kindOfLimitFlag(flag);
  if (kind != schedule::CollectiveKind::kNone && parseInt(v, n) && n > 0 &&
      n < 1024)
    o.kind_limits[size_t(kind)] = int(n);
  else if (kind != schedule::CollectiveKind::kNone)
    error = "bad value '" + v + "' for " + flag;
  else if (flag == "--preset")
    o.preset = v;
  else if (flag == "--tables")
    o.tables.push_back(v);
  else if (flag == "--sol-options")
    o.sol_options = v;
  else if (flag == "--trace" || flag == "-o")
    o.trace = v;
  else if (flag == "--report")
    o.report = v;
  else if (flag == "--estimator" && (v == "real" || v == "approximate"))
    o.approximate = v == "approximate";
  else if (flag == "--gpus-per-node" && parseInt(v, n) && n > 0)
    o.gpus_per_node = n;
  else if (flag == "--overlap-limit" && parseInt(v, n) && n > 0)
    o.overlap_limit = int(n);
  else if (flag == "--memory-limit" && parseInt(v, n) && n > 0)
    o.memory_limit = n;
  else if (flag == "--device-memory" && parseInt(v, n) && n >= 0)
    o.device_memory = n;
  else if (flag == "--reruns" && parseInt(v, n) && n >= 0 && n < 1000)
    o.reruns = int(n);
  else if (flag == "--while-trip-count" && parseInt(v, n) && n > 0 &&
           n <= 1000000)
    o.while_trip_count = n;
  else
    error = "bad value '" + v + "' for " + flag;
  return error.empty();
}

// 0: run, 1: error, 2: --help printed.
int parseArgs(int argc, char **argv, Options &o, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kHelp;
      return 2;
    }
    if (arg == "--no-propagation") {
      o.propagate = false;
    } else if (arg.rfind("-", 0) == 0 && arg.size() > 1) {
      if (i + 1 >= argc) {
        error = "missing value for " + arg;
        return 1;
      }
      if (!parseValue(o, arg, argv[++i], error))
        return 1;
    } else if (o.input.empty()) {
      o.input = arg;
    } else {
      error = "more than one input file: " + arg;
      return 1;
    }
  }
  if (o.input.empty())
    error = "no input module (see --help)";
  return o.input.empty() ? 1 : 0;
}

} // namespace

int runSchedule(const Options &o, std::string &error);

int main(int argc, char **argv) {
  Options options;
  std::string error;
  const int parsed = parseArgs(argc, argv, options, error);
  if (parsed == 2)
    return 0;
  if (parsed == 0 && runSchedule(options, error) == 0)
    return 0;
  std::cerr << "shardlab-schedule: error: " << error << "\n";
  return 1;
}

namespace {

// Loads and joins the --tables files.
bool loadTables(const Options &o, cost::PerfTable &table, std::string &error) {
  for (const std::string &path : o.tables) {
    auto loaded = cost::LoadPerfTable(path);
    if (!loaded.ok()) {
      error = path + ": " + loaded.error().message;
      return false;
    }
    table.collectives.insert(table.collectives.end(),
                             loaded->collectives.begin(),
                             loaded->collectives.end());
    table.gemms.insert(table.gemms.end(), loaded->gemms.begin(),
                       loaded->gemms.end());
    table.metadata = loaded->metadata;
  }
  return true;
}
bool writeOutputs(const Options &o, const schedule::Program &program,
                  const schedule::Schedule &s, std::string &error) {
  if (!o.trace.empty() &&
      !writeFileAtomically(o.trace, schedule::chromeTraceJson(program, s),
                           error))
    return false;
  return o.report.empty() ||
         writeFileAtomically(o.report, schedule::reportJson(program, s), error);
}

} // namespace

bool pipelineOptions(const Options &o, const cost::PerfTable &table,
                     schedule::PipelineOptions &p, std::string &error) {
  schedule::TargetOptions target;
  target.preset = o.preset;
  target.gpus_per_node = o.gpus_per_node;
  target.sol_options = o.sol_options;
  target.approximate = o.approximate;
  target.while_trip_count = o.while_trip_count;
  target.table = o.tables.empty() ? nullptr : &table;
  if (!schedule::pipelineOptionsFor(target, p, error))
    return false;
  p.propagate = o.propagate;
  p.scheduler.overlap_limit = o.overlap_limit;
  p.scheduler.kind_limits = o.kind_limits;
  p.scheduler.memory_limit_bytes = o.memory_limit;
  p.scheduler.reruns = o.reruns;
  if (o.device_memory)
    p.device_memory_bytes = *o.device_memory;
  return true;
}
int runSchedule(const Options &o, std::string &error) {
  std::string text;
  if (!readFile(o.input, text)) {
    error = "cannot read " + o.input;
    return 1;
  }
  cost::PerfTable table;
  schedule::PipelineOptions popts;
  if (!loadTables(o, table, error) || !pipelineOptions(o, table, popts, error))
    return 1;
  const schedule::PipelineResult r = schedule::runSchedulePipeline(text, popts);
  for (const Diagnostic &d : r.diagnostics)
    if (!r.ok || d.severity != Severity::Remark)
      std::cerr << formatDiagnostic(d, o.input, text);
  if (!r.ok) {
    error = r.stage + ": " + r.error;
    return 1;
  }
  std::cout << schedule::summaryText(r.program, r.schedule);
  return writeOutputs(o, r.program, r.schedule, error) ? 0 : 1;
}
