// shardlab-schedule: estimates one training/inference step of a sharded
// module. A thin front end over schedule::runSchedulePipeline (propagation
// and explicit collectives unless --no-propagation, the costed per-device
// program, the latency-hiding scheduler with its memory rerun loop); prints
// the totals and optionally writes a Chrome trace (Perfetto) and a JSON
// report, atomically.
#include "shardlab/api/strategy_api.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/schedule/pipeline.h"
#include "shardlab/schedule/report.h"
#include "shardlab/strategy/strategy.h"
#include "shardlab/support/file_io.h"
#include "shardlab/text/text.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace shardlab;

namespace {

struct Options {
  std::string input, trace, report, svg, preset = "h100", sol_options;
  std::vector<std::string> tables;
  int64_t gpus_per_node = 0; // 0: the preset's
  int overlap_limit = 1;
  std::optional<schedule::OverlapSlowdown> overlap_slowdown;
  std::optional<cost::FusedAttentionEntry> attention_slowdown;
  std::array<int, schedule::kNumCollectiveKinds> kind_limits{};
  std::optional<int64_t> memory_limit, device_memory;
  int reruns = 1;
  int64_t while_trip_count = 0;
  int64_t pipeline_stages = 0;
  std::string pipeline_schedule = "1f1b";
  std::string pipeline_stage_kind = "every";
  std::string recompute;
  int64_t virtual_stages = 1;
  bool approximate = false, propagate = true, fusion = true;
  bool combine = true, pipeline_collectives = false, gemms_at_peak = false;
  bool stream_per_link = false;
  bool compare = false, suggest = false;
  std::string loops; // --loops; "": unroll one schedule, extrapolate strategies
  int64_t devices = 0; // --compare/--suggest: 0 = the module's mesh, or 8
  int64_t budget_ms = 5000;
  int64_t threads = 0; // --compare/--suggest: 0 = the hardware threads
};

const char *kHelp =
    "USAGE: shardlab-schedule MODULE.mlir [options]\n\n"
    "Estimates a step of a sharded module with XLA's latency-hiding\n"
    "scheduler and shardlab's cost model, and prints the totals.\n\n"
    "OPTIONS:\n"
    "  --preset NAME          hardware preset (h100, h200, b200, a100,\n"
    "                         a100-40gb)\n"
    "  --tables FILE          performance table (*.shardlab.json); default:\n"
    "                         the preset's analytical table\n"
    "  --gpus-per-node P      GPUs per NVLink node (default: the preset's)\n"
    "  --sol-options 'k=v,..' S-curve options (nic_speed_gbps, rtt_us, ...;\n"
    "                         ring_hop_us=2.7: NCCL's hop per ring step;\n"
    "                         tree_all_reduce=0: XLA's ring for every\n"
    "                         all-reduce, not NCCL's tree where cheaper)\n"
    "  --overlap-slowdown C[,M]  a kernel running beside a collective's\n"
    "                         transfer takes C times its time, the\n"
    "                         transfer M times (default: a table's\n"
    "                         overlap entry, else 1,1: XLA's model);\n"
    "                         each from 1 to 100\n"
    "  --attention-slowdown F[,B]  a fused attention call (cuDNN) takes F\n"
    "                         times the price of its GEMMs forward, B\n"
    "                         backward (B = F when left out; default: a\n"
    "                         table's fused_attention entry, else the\n"
    "                         GEMMs' price, softmax unpriced); 0.1 to 100\n"
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
    "  --loops unroll|extrapolate  schedule every iteration of a loop, or\n"
    "                         its first, one steady iteration counted for\n"
    "                         the middle ones, and its last (default: unroll;\n"
    "                         extrapolate with --compare and --suggest)\n"
    "  --estimator real|approximate  cost model (default) or XLA's "
    "1/1000/5000\n"
    "  --no-propagation       the module already holds explicit collectives\n"
    "  --no-fusion            cost every op as a kernel of its own (default:\n"
    "                         the kernels XLA's GPU compiler fuses);\n"
    "                         collectives are combined either way\n"
    "  --no-combine           each collective a call of its own (default:\n"
    "                         independent ones of one kind and group\n"
    "                         combined, as XLA's combiners do, <= 30 MiB)\n"
    "  --pipeline-collectives  overlap a loop's collectives with the next or\n"
    "                         previous iteration, as XLA's collective\n"
    "                         pipeliner does (xla_gpu_enable_pipelined_*;\n"
    "                         default off, as in XLA): weight all-gathers\n"
    "                         one iteration early, stored reduce-scatters\n"
    "                         and all-reduces, and sends the iteration\n"
    "                         does not read, finishing in the next one\n"
    "  --stream-per-link      collectives within a node (NVLink) on a stream\n"
    "                         of their own beside those across nodes, as\n"
    "                         PyTorch runs FSDP's gathers beside Megatron's\n"
    "                         all-reduces (default: one stream, as XLA)\n"
    "  --pipeline-stages S    run the layers as S pipeline stages over the\n"
    "                         mesh's \"stage\" axis (S devices, major, used "
    "by\n"
    "                         no sharding): each stage holds L/S of the\n"
    "                         scanned layers, the micro-batch loop runs\n"
    "                         M + S - 1 ticks, activations pass between\n"
    "                         stages by collective_permute\n"
    "  --pipeline-schedule 1f1b|gpipe  micro-batches whose residuals the\n"
    "                         first stage holds: min(S, M) or M (default "
    "1f1b)\n"
    "  --virtual-stages V     interleaved: V chunks of L/(S V) layers a "
    "device,\n"
    "                         M V + S - 1 chunk ticks in rounds of V\n"
    "                         chunks (M a multiple of S)\n"
    "  --pipeline-stage-kind every|middle  the stage estimated: every runs\n"
    "                         the embedding, head and loss beside its\n"
    "                         layers (an unbalanced pipeline's slowest\n"
    "                         stage; default), middle its layers only (a\n"
    "                         balanced pipeline, whose first and last\n"
    "                         stages hold fewer layers: estimate those as\n"
    "                         a program with fewer layers)\n"
    "  --recompute full|selective|none  what the backward recomputes of each\n"
    "                         layer's forward (shardlab-recompute, before\n"
    "                         propagation): all of it, all but its GEMMs\n"
    "                         and attention, or nothing (default: as "
    "written)\n"
    "  --gemms-at-peak        GEMMs at the preset's datasheet peak (the\n"
    "                         roofline), not at measured efficiency\n"
    "  --trace FILE, -o FILE  write a Chrome trace (open in ui.perfetto.dev)\n"
    "  --report FILE          write the JSON report (with --compare or\n"
    "                         --suggest: the rows, shardings included)\n"
    "\nCOMPARING STRATEGIES:\n"
    "  --compare              estimate data, FSDP, tensor, sequence and\n"
    "                         expert parallelism and the 2-D mixes on the\n"
    "                         same devices, beside the module as written\n"
    "  --suggest              search argument shardings from the best of\n"
    "                         those for faster ones, and say why (its\n"
    "                         progress on stderr: strategies, time, best)\n"
    "  --devices N            devices to compare on (default: the module's\n"
    "                         mesh, or 8)\n"
    "  --budget-ms N          --suggest's time budget (default 5000)\n"
    "  --threads N            strategies evaluated at once (default: the\n"
    "                         machine's hardware threads)\n"
    "  --svg FILE             with --compare: write the bars as SVG\n"
    "  --help                 this text\n\n"
    "EXAMPLES:\n"
    "  shardlab-schedule examples/schedule/megatron_block.mlir\n"
    "  shardlab-schedule examples/schedule/transformer_train_step.mlir "
    "--compare --devices 64 --svg bars.svg\n";

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
    return schedule::CollectiveKind::None;
  const std::string name = flag.substr(2, flag.size() - 2 - suffix.size());
  for (int k = 1; k < schedule::kNumCollectiveKinds; ++k)
    if (schedule::toString(schedule::CollectiveKind(k)) == name)
      return schedule::CollectiveKind(k);
  return schedule::CollectiveKind::None;
}

// `A` or `A,B`: one or two factors, each from `least` to 100.
struct Factors {
  double first = 1;
  std::optional<double> second; ///< absent when there is no comma
};
std::optional<Factors> parseFactors(const std::string &text, double least) {
  const auto factor = [least](const std::string &t) -> std::optional<double> {
    char *end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || !end || *end != '\0' || !(v >= least && v <= 100))
      return std::nullopt;
    return v;
  };
  const size_t comma = text.find(',');
  Factors f;
  const std::optional<double> first = factor(text.substr(0, comma));
  if (!first)
    return std::nullopt;
  f.first = *first;
  if (comma != std::string::npos) {
    f.second = factor(text.substr(comma + 1));
    if (!f.second)
      return std::nullopt;
  }
  return f;
}

// `C` or `C,M`: a kernel beside a transfer takes C times its time, the
// transfer beside a kernel M times (1 when left out); each from 1 to 100.
bool parseOverlapSlowdown(const std::string &text,
                          std::optional<schedule::OverlapSlowdown> &out) {
  const std::optional<Factors> f = parseFactors(text, 1);
  if (!f)
    return false;
  schedule::OverlapSlowdown s;
  s.source = "--overlap-slowdown " + text;
  s.compute = f->first;
  s.comm = f->second.value_or(1);
  out = s;
  return true;
}

// `F` or `F,B`: a fused attention's forward takes F times the price of its
// GEMMs, its backward B times (F when left out); each from 0.1 to 100.
bool parseAttentionSlowdown(const std::string &text,
                            std::optional<cost::FusedAttentionEntry> &out) {
  const std::optional<Factors> f = parseFactors(text, 0.1);
  if (!f)
    return false;
  cost::FusedAttentionEntry a;
  a.source = "--attention-slowdown " + text;
  a.forward_slowdown = f->first;
  a.backward_slowdown = f->second.value_or(f->first);
  out = a;
  return true;
}

// A value read as an integer: `n`, and whether it was one.
struct OptionValue {
  const std::string &text;
  int64_t n = 0;
  bool integer = false;
  bool in(int64_t least, int64_t most) const {
    return integer && n >= least && n <= most;
  }
};

// Each option that takes a value (the collective limits aside) and how it
// is read: false for a value it does not accept.
struct ValueOption {
  std::string_view flag;
  bool (*set)(Options &, const OptionValue &);
};

constexpr int64_t kAny = std::numeric_limits<int64_t>::max();

constexpr ValueOption kValueOptions[] = {
    {"--preset",
     [](Options &o, const OptionValue &v) { return o.preset = v.text, true; }},
    {"--tables",
     [](Options &o, const OptionValue &v) {
       return o.tables.push_back(v.text), true;
     }},
    {"--sol-options",
     [](Options &o, const OptionValue &v) {
       return o.sol_options = v.text, true;
     }},
    {"--trace",
     [](Options &o, const OptionValue &v) { return o.trace = v.text, true; }},
    {"-o",
     [](Options &o, const OptionValue &v) { return o.trace = v.text, true; }},
    {"--report",
     [](Options &o, const OptionValue &v) { return o.report = v.text, true; }},
    {"--svg",
     [](Options &o, const OptionValue &v) { return o.svg = v.text, true; }},
    {"--devices",
     [](Options &o, const OptionValue &v) {
       return v.in(1, 1 << 20) && (o.devices = v.n, true);
     }},
    {"--budget-ms",
     [](Options &o, const OptionValue &v) {
       return v.in(1, kAny) && (o.budget_ms = v.n, true);
     }},
    {"--threads",
     [](Options &o, const OptionValue &v) {
       return v.in(1, 256) && (o.threads = v.n, true);
     }},
    {"--estimator",
     [](Options &o, const OptionValue &v) {
       return (v.text == "real" || v.text == "approximate") &&
              (o.approximate = v.text == "approximate", true);
     }},
    {"--gpus-per-node",
     [](Options &o, const OptionValue &v) {
       return v.in(1, kAny) && (o.gpus_per_node = v.n, true);
     }},
    {"--overlap-slowdown",
     [](Options &o, const OptionValue &v) {
       return parseOverlapSlowdown(v.text, o.overlap_slowdown);
     }},
    {"--attention-slowdown",
     [](Options &o, const OptionValue &v) {
       return parseAttentionSlowdown(v.text, o.attention_slowdown);
     }},
    {"--overlap-limit",
     [](Options &o, const OptionValue &v) {
       return v.in(1, 1 << 30) && (o.overlap_limit = int(v.n), true);
     }},
    {"--memory-limit",
     [](Options &o, const OptionValue &v) {
       return v.in(1, kAny) && (o.memory_limit = v.n, true);
     }},
    {"--device-memory",
     [](Options &o, const OptionValue &v) {
       return v.in(0, kAny) && (o.device_memory = v.n, true);
     }},
    {"--reruns",
     [](Options &o, const OptionValue &v) {
       return v.in(0, 999) && (o.reruns = int(v.n), true);
     }},
    {"--while-trip-count",
     [](Options &o, const OptionValue &v) {
       return v.in(1, 1000000) && (o.while_trip_count = v.n, true);
     }},
    {"--loops",
     [](Options &o, const OptionValue &v) {
       return (v.text == "unroll" || v.text == "extrapolate") &&
              (o.loops = v.text, true);
     }},
    {"--pipeline-stages",
     [](Options &o, const OptionValue &v) {
       return v.in(2, 4096) && (o.pipeline_stages = v.n, true);
     }},
    {"--pipeline-schedule",
     [](Options &o, const OptionValue &v) {
       return (v.text == "1f1b" || v.text == "gpipe") &&
              (o.pipeline_schedule = v.text, true);
     }},
    {"--pipeline-stage-kind",
     [](Options &o, const OptionValue &v) {
       return (v.text == "every" || v.text == "middle") &&
              (o.pipeline_stage_kind = v.text, true);
     }},
    {"--virtual-stages",
     [](Options &o, const OptionValue &v) {
       return v.in(1, 1024) && (o.virtual_stages = v.n, true);
     }},
    {"--recompute",
     [](Options &o, const OptionValue &v) {
       return (v.text == "full" || v.text == "selective" || v.text == "none") &&
              (o.recompute = v.text, true);
     }},
};

const ValueOption *valueOption(const std::string &flag) {
  for (const ValueOption &option : kValueOptions)
    if (option.flag == flag)
      return &option;
  return nullptr;
}

bool isValueFlag(const std::string &flag) {
  return valueOption(flag) ||
         kindOfLimitFlag(flag) != schedule::CollectiveKind::None;
}

Status parseValue(Options &o, const std::string &flag, const std::string &v) {
  OptionValue value{v};
  value.integer = parseInt(v, value.n);
  const schedule::CollectiveKind kind = kindOfLimitFlag(flag);
  const ValueOption *option = valueOption(flag);
  const bool accepted =
      kind != schedule::CollectiveKind::None
          ? value.in(1, 1023) &&
                (o.kind_limits[size_t(kind)] = int(value.n), true)
          : option && option->set(o, value);
  if (!accepted)
    return makeError("bad value '" + v + "' for " + flag);
  return success();
}

/// Reads the arguments into `o`: true to run, false when --help was printed.
Result<bool> parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kHelp;
      return false;
    }
    if (arg == "--no-propagation") {
      o.propagate = false;
    } else if (arg == "--no-fusion") {
      o.fusion = false;
    } else if (arg == "--no-combine") {
      o.combine = false;
    } else if (arg == "--pipeline-collectives") {
      o.pipeline_collectives = true;
    } else if (arg == "--stream-per-link") {
      o.stream_per_link = true;
    } else if (arg == "--gemms-at-peak") {
      o.gemms_at_peak = true;
    } else if (arg == "--compare") {
      o.compare = true;
    } else if (arg == "--suggest") {
      o.suggest = true;
    } else if (arg.rfind("-", 0) == 0 && arg.size() > 1) {
      if (!isValueFlag(arg))
        return makeError("unknown option " + arg + " (see --help)");
      if (i + 1 >= argc)
        return makeError("missing value for " + arg);
      if (Status parsed = parseValue(o, arg, argv[++i]); !parsed)
        return parsed.error();
    } else if (o.input.empty()) {
      o.input = arg;
    } else {
      return makeError("more than one input file: " + arg);
    }
  }
  if (o.input.empty())
    return makeError("no input module (see --help)");
  if (!o.svg.empty() && !o.compare)
    return makeError("--svg needs --compare");
  // The pipeline's settings describe the stages --pipeline-stages cuts.
  if (o.pipeline_stages == 0 &&
      (o.virtual_stages > 1 || o.pipeline_schedule != "1f1b" ||
       o.pipeline_stage_kind != "every"))
    return makeError("--virtual-stages, --pipeline-schedule and "
                     "--pipeline-stage-kind need --pipeline-stages");
  if ((o.compare || o.suggest) && !o.propagate)
    return makeError("--compare and --suggest propagate each strategy; "
                     "drop --no-propagation");
  return true;
}

} // namespace

Status runSchedule(const Options &o);

int main(int argc, char **argv) {
  Options options;
  Result<bool> run = parseArgs(argc, argv, options);
  if (run && !*run)
    return 0;
  Status done = run ? runSchedule(options) : Status(run.error());
  if (done)
    return 0;
  std::cerr << "shardlab-schedule: error: " << done.error().message << "\n";
  return 1;
}

namespace {

// Loads and joins the --tables files.
Result<cost::PerfTable> loadTables(const Options &o) {
  cost::PerfTable table;
  for (const std::string &path : o.tables) {
    auto loaded = cost::loadPerfTable(path);
    if (!loaded.ok())
      return makeError(path + ": " + loaded.error().message);
    table.collectives.insert(table.collectives.end(),
                             loaded->collectives.begin(),
                             loaded->collectives.end());
    table.gemms.insert(table.gemms.end(), loaded->gemms.begin(),
                       loaded->gemms.end());
    table.metadata = loaded->metadata;
    if (loaded->overlap)
      table.overlap = loaded->overlap; // the last table's that has one
    if (loaded->fused_attention)
      table.fused_attention = loaded->fused_attention; // likewise
  }
  return table;
}

Status writeOutputs(const Options &o, const schedule::Program &program,
                    const schedule::Schedule &s) {
  if (!o.trace.empty())
    if (Status written =
            writeFileAtomically(o.trace, schedule::chromeTraceJson(program, s));
        !written)
      return written;
  if (!o.report.empty())
    return writeFileAtomically(o.report, schedule::reportJson(program, s));
  return success();
}

} // namespace

Result<schedule::PipelineOptions>
pipelineOptions(const Options &o, const cost::PerfTable &table) {
  schedule::TargetOptions target;
  target.preset = o.preset;
  target.gpus_per_node = o.gpus_per_node;
  target.sol_options = o.sol_options;
  target.approximate = o.approximate;
  target.while_trip_count = o.while_trip_count;
  target.pipeline_stages = o.pipeline_stages;
  target.pipeline_schedule = o.pipeline_schedule;
  target.pipeline_virtual_stages = o.virtual_stages;
  target.pipeline_stage_kind = o.pipeline_stage_kind;
  target.recompute = o.recompute;
  target.fusion = o.fusion;
  target.combine_collectives = o.combine;
  target.pipeline_collectives = o.pipeline_collectives;
  target.stream_per_link = o.stream_per_link;
  target.gemms_at_peak = o.gemms_at_peak;
  target.table = o.tables.empty() ? nullptr : &table;
  Result<schedule::PipelineOptions> defaults =
      schedule::pipelineOptionsFor(target);
  if (!defaults)
    return defaults;
  schedule::PipelineOptions p = std::move(*defaults);
  p.propagate = o.propagate;
  p.program.extrapolate_loops = o.loops == "extrapolate";
  p.scheduler.overlap_limit = o.overlap_limit;
  p.scheduler.kind_limits = o.kind_limits;
  p.scheduler.memory_limit_bytes = o.memory_limit;
  p.scheduler.reruns = o.reruns;
  if (o.overlap_slowdown)
    p.scheduler.overlap_slowdown = *o.overlap_slowdown;
  if (o.attention_slowdown)
    p.program.fused_attention = *o.attention_slowdown;
  if (o.device_memory)
    p.device_memory_bytes = *o.device_memory;
  return p;
}

Status runStrategies(const Options &o, std::string_view text,
                     const schedule::PipelineOptions &pipeline);

Status runSchedule(const Options &o) {
  std::string text;
  if (!readFile(o.input, text))
    return makeError("cannot read " + o.input);
  Result<cost::PerfTable> table = loadTables(o);
  if (!table)
    return table.error();
  Result<schedule::PipelineOptions> popts = pipelineOptions(o, *table);
  if (!popts)
    return popts.error();
  if (o.compare || o.suggest)
    return runStrategies(o, text, *popts);
  const schedule::PipelineResult r =
      schedule::runSchedulePipeline(text, *popts);
  for (const Diagnostic &d : r.diagnostics)
    if (!r.ok || d.severity != Severity::Remark)
      std::cerr << formatDiagnostic(d, o.input, text);
  if (!r.ok)
    return makeError(r.stage + ": " + r.error);
  std::cout << schedule::summaryText(r.program, r.schedule);
  return writeOutputs(o, r.program, r.schedule);
}

Status runStrategies(const Options &o, std::string_view text,
                     const schedule::PipelineOptions &pipeline) {
  strategy::CompareOptions compare;
  compare.devices = o.devices;
  compare.pipeline = pipeline;
  compare.threads = int(o.threads);
  compare.extrapolate_loops = o.loops != "unroll";
  std::string report;
  if (o.compare) {
    Result<strategy::Comparison> c = strategy::compareStrategies(text, compare);
    if (!c)
      return makeError(o.input + ": " + c.error().message);
    std::cout << strategy::comparisonText(*c);
    if (!o.svg.empty())
      if (Status written =
              writeFileAtomically(o.svg, strategy::comparisonSvg(*c));
          !written)
        return written;
    report = api::comparisonJson(*c);
  }
  if (o.suggest) {
    strategy::SuggestOptions suggest;
    suggest.compare = compare;
    suggest.budget_ms = double(o.budget_ms);
    std::cerr << "shardlab-schedule: searching for up to " << o.budget_ms
              << " ms...\n";
    // On a terminal one line rewritten in place; otherwise (a log) a line
    // at most every second.
    const bool terminal = isatty(fileno(stderr)) != 0;
    double last_line_ms = -1e9;
    suggest.on_progress = [&](const strategy::SearchProgress &p) {
      if (!terminal && p.elapsed_ms - last_line_ms < 1000)
        return;
      last_line_ms = p.elapsed_ms;
      std::ostringstream line;
      line.precision(3);
      line << std::fixed << "  " << p.evaluated << " strategies in "
           << p.elapsed_ms / 1000 << " s; best " << p.best_step_us / 1000
           << " ms" << (p.best_fits ? "" : " (does not fit)");
      std::cerr << (terminal ? "\r" : "") << line.str()
                << (terminal ? "\x1b[K" : "\n") << std::flush;
    };
    Result<strategy::Suggestions> s = strategy::suggestShardings(text, suggest);
    if (terminal)
      std::cerr << "\n";
    if (!s)
      return makeError(o.input + ": " + s.error().message);
    std::cout << (o.compare ? "\n" : "") << strategy::suggestionsText(*s);
    report = o.compare
                 ? "{\"comparison\":" + report +
                       ",\"suggestions\":" + api::suggestionsJson(*s) + "}"
                 : api::suggestionsJson(*s);
  }
  if (!o.report.empty())
    return writeFileAtomically(o.report, report);
  return success();
}
