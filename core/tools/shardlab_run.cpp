// shardlab-run: runs a module's entry function with the interpreter and
// reports each of its check.* calls; with --shardings, also partitions it
// and checks the per-device program on simulated devices against the
// global run (partition_check.h).
#include "shardlab/interpreter/interpreter.h"
#include "shardlab/partition_check/partition_check.h"
#include "shardlab/support/file_io.h"
#include "shardlab/text/text.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

using namespace shardlab;

namespace {

const char *kHelp =
    "USAGE: shardlab-run MODULE.mlir [options]\n"
    "\n"
    "Runs the module's entry function (no arguments, as JAX's self-checking\n"
    "test modules are written) with shardlab's StableHLO interpreter and\n"
    "reports each check.* custom call. Exit status: 0 when it ran and every\n"
    "check passed, 1 when a check failed or an op could not run, 2 for bad\n"
    "usage or input.\n"
    "\n"
    "With --shardings it then partitions the module (Shardy's propagation,\n"
    "explicit collectives, the per-device program), runs that program on\n"
    "simulated devices, puts their results together by the output shardings\n"
    "and compares them with the global run; the module's checks run on every\n"
    "device. A function with arguments gets random inputs (from the seed\n"
    "with random shardings, else seed 0).\n"
    "\n"
    "OPTIONS:\n"
    "  --entry NAME          the function to run (default: main)\n"
    "  --shardings random:SEED\n"
    "                        a random mesh and random shardings of the inputs\n"
    "  --shardings module    the module's own mesh and shardings\n"
    "  --devices N           with --shardings random: the largest random mesh\n"
    "                        (default 8); without --shardings: run a "
    "per-device\n"
    "                        program (partition_id, collectives) as it is on "
    "N\n"
    "                        simulated devices and report each device's "
    "checks\n"
    "  --program FILE        with --shardings module: check this per-device\n"
    "                        program (another tool's, such as Shardy's\n"
    "                        sdy_opt's, for the same module) in place of\n"
    "                        shardlab's partitioning; its entry's argument\n"
    "                        and result shardings place inputs and results\n"
    "  --gpu-passes          with --shardings: also XLA's GPU collective\n"
    "                        rewrites (the gpu stage), so that what runs is\n"
    "                        the program shardlab-schedule estimates\n"
    "  --input-scale X       random float inputs times X, a power of two\n"
    "                        (default 1: in [-4, 4]); a deep step checked\n"
    "                        with --shardings wants them small (1/64)\n"
    "  --tolerance-floor F   compare each float result within its precision\n"
    "                        relative to the larger of its own largest value\n"
    "                        and F times the largest of all results (default\n"
    "                        0): a gradient that cancels to rounding noise is\n"
    "                        then judged on the step's scale, not its own\n"
    "  --max-work N          stop, not run, before the work passes N\n"
    "                        (elements produced or read and multiply-adds,\n"
    "                        every device's; default: no limit): a budget\n"
    "                        that stops a module at the same op on any\n"
    "                        machine, where a timeout would not\n"
    "  --print               print the results (16 elements in full, else a\n"
    "                        summary with a digest of every element's bits);\n"
    "                        with --shardings, the per-device "
    "program\n"
    "  --help                this text\n"
    "\n"
    "EXAMPLES:\n"
    "  shardlab-run "
    "../shared/corpus/stablehlo-testdata/abs_float16_20_20.mlir\n"
    "  shardlab-run --shardings random:3 "
    "../shared/corpus/stablehlo-testdata/abs_float16_20_20.mlir\n";

struct Options {
  std::string input, entry = "main";
  bool print = false;
  bool partition = false;
  std::optional<uint64_t> seed;
  int64_t max_devices = 8;
  bool devices_given = false;
  double input_scale = 1;
  double tolerance_floor = 0;
  bool gpu_passes = false;
  std::string program; ///< --program FILE
  int64_t max_work = 0;
};

bool parseCount(const std::string &text, int64_t &out) {
  if (text.empty() || text.size() > 6)
    return false;
  int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    n = n * 10 + (c - '0');
  }
  out = n;
  return n >= 1;
}

std::string element(const interpreter::Tensor &t, int64_t i) {
  std::ostringstream s;
  s.precision(9);
  if (t.isInteger())
    s << t.integer(i);
  else if (t.isComplex())
    s << "(" << t.real(i) << "," << t.imag(i) << ")";
  else
    s << t.real(i);
  return s.str();
}

// FNV-1a over every element's bits: two runs whose summaries show the
// same digest computed the same tensor, bit for bit.
uint64_t digestOf(const interpreter::Tensor &t) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int64_t i = 0; i < t.size(); ++i)
    for (unsigned part = 0; part < t.parts(); ++part) {
      uint64_t bits = t.bits(i, part);
      for (int byte = 0; byte < 8; ++byte, bits >>= 8)
        h = (h ^ (bits & 0xff)) * 0x100000001b3ull;
    }
  return h;
}

void printTensor(const interpreter::Tensor &t) {
  std::cout << t.type()->text << " ";
  const int64_t shown = t.size() <= 16 ? t.size() : 8;
  std::cout << "[";
  for (int64_t i = 0; i < shown; ++i)
    std::cout << (i ? ", " : "") << element(t, i);
  if (shown < t.size()) {
    std::ostringstream digest;
    digest << std::hex << digestOf(t);
    std::cout << ", ... (" << t.size() << " elements, digest " << digest.str()
              << ")";
  }
  std::cout << "]\n";
}

int parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kHelp;
      return 0;
    }
    if (arg == "--print") {
      o.print = true;
    } else if (arg == "--program" && i + 1 < argc) {
      o.program = argv[++i];
    } else if (arg == "--gpu-passes") {
      o.gpu_passes = true;
    } else if (arg == "--entry" && i + 1 < argc) {
      o.entry = argv[++i];
    } else if (arg == "--shardings" && i + 1 < argc) {
      o.partition = true;
      partition_check::Options choice;
      if (!partition_check::readShardingsChoice(argv[++i], choice)) {
        std::cerr << "shardlab-run: --shardings expects random:SEED or "
                     "module, not '"
                  << argv[i] << "'\n";
        return 2;
      }
      o.seed = choice.seed;
    } else if (arg == "--devices" && i + 1 < argc) {
      o.devices_given = true;
      if (!parseCount(argv[++i], o.max_devices)) {
        std::cerr << "shardlab-run: --devices expects a positive count, not '"
                  << argv[i] << "'\n";
        return 2;
      }
    } else if (arg == "--input-scale" && i + 1 < argc) {
      char *end = nullptr;
      const char *text = argv[++i];
      o.input_scale = std::strtod(text, &end);
      if (end == text || *end ||
          !partition_check::isInputScale(o.input_scale)) {
        std::cerr << "shardlab-run: --input-scale expects a positive power of "
                     "two (1, 0.5, 0.015625, ...), not '"
                  << text << "'\n";
        return 2;
      }
    } else if (arg == "--max-work" && i + 1 < argc) {
      char *end = nullptr;
      const char *text = argv[++i];
      const double work = std::strtod(text, &end);
      if (end == text || *end || !(work >= 1) || work > 9e18) {
        std::cerr << "shardlab-run: --max-work expects a positive count "
                     "(2e9, 500000000), not '"
                  << text << "'\n";
        return 2;
      }
      o.max_work = int64_t(work);
    } else if (arg == "--tolerance-floor" && i + 1 < argc) {
      char *end = nullptr;
      const char *text = argv[++i];
      o.tolerance_floor = std::strtod(text, &end);
      if (end == text || *end || !(o.tolerance_floor >= 0) ||
          o.tolerance_floor > 1) {
        std::cerr << "shardlab-run: --tolerance-floor expects a fraction in "
                     "[0, 1], not '"
                  << text << "'\n";
        return 2;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "shardlab-run: unknown option " << arg << " (--help)\n";
      return 2;
    } else if (o.input.empty()) {
      o.input = arg;
    } else {
      std::cerr << "shardlab-run: one module at a time\n";
      return 2;
    }
  }
  if (!o.program.empty() && (!o.partition || o.seed)) {
    std::cerr << "shardlab-run: --program goes with --shardings module (the "
                 "program's shardings are the module's)\n";
    return 2;
  }
  if (o.input.empty()) {
    std::cerr << kHelp;
    return 2;
  }
  return -1;
}

#ifdef SHARDLAB_FAULT_INJECTION
// shardlab-run-faulty: breaks the per-device program on purpose, so that a
// test can show the partition stage fails on a wrong partitioner.
// SHARDLAB_FAULT_DROP_COLLECTIVE=1: the first all_reduce or
// collective_permute is dropped (its users read its operand).
// SHARDLAB_FAULT_SLICE_OFFSET=1: the first table of per-device slice
// offsets is reversed (each device slices another device's rows).
void injectFaults(Module &module) {
  std::vector<Operation *> dropped, tables;
  walk(module.op(), [&](Operation &op) {
    if (dropped.empty() && (op.is("stablehlo.all_reduce") ||
                            op.is("stablehlo.collective_permute")))
      dropped.push_back(&op);
    if (tables.empty() && op.is("stablehlo.dynamic_slice") &&
        op.operand(0)->defining_op &&
        op.operand(0)->defining_op->is("stablehlo.constant") &&
        op.operand(0)->type->rank() == 1 && op.operand(0)->type->shape[0] > 1)
      tables.push_back(op.operand(0)->defining_op);
  });
  if (std::getenv("SHARDLAB_FAULT_DROP_COLLECTIVE") && !dropped.empty()) {
    Operation &op = *dropped.front();
    op.result(0)->replaceAllUsesWith(op.operand(0));
    op.dropAllUses();
    op.parentBlock()->erase(&op);
  }
  if (std::getenv("SHARDLAB_FAULT_SLICE_OFFSET") && !tables.empty()) {
    Operation &table = *tables.front();
    const Attr *value = table.attrs.get("value");
    const DenseReader reader = value->denseReader();
    std::vector<int64_t> reversed;
    for (int64_t i = reader.size(); i-- > 0;)
      reversed.push_back(reader.intAt(i));
    Context &ctx = module.ctx();
    table.attrs.set(ctx.intern("value"),
                    ctx.attrs.make(Attr{AttrKind::DenseElements,
                                        denseOfInts(value->type, reversed),
                                        value->type,
                                        {}}));
  }
}
#endif

// The partition check of --shardings; its exit status.
int runPartitioned(const std::string &text, const Options &o) {
  partition_check::Options options;
  options.entry = o.entry;
  options.seed = o.seed;
  options.max_devices = o.max_devices;
  options.input_scale = o.input_scale;
  options.gpu_passes = o.gpu_passes;
  options.tolerance_floor = o.tolerance_floor;
  options.keep_program = o.print;
  options.max_work = o.max_work;
  if (!o.program.empty()) {
    std::string program;
    if (!readFile(o.program, program)) {
      std::cerr << "shardlab-run: cannot read " << o.program << "\n";
      return 2;
    }
    options.program = std::move(program);
  }
#ifdef SHARDLAB_FAULT_INJECTION
  options.after_partition = injectFaults;
#endif
  const partition_check::Outcome out =
      partition_check::checkPartitioned(text, options);
  if (out.stage == "global run" || out.stage == "parse") {
    std::cerr << o.input << ": " << out.message << "\n";
    return 1;
  }
  std::cout << out.global_checks_passed << " of " << out.global_checks_run
            << " checks passed in the global run\n";
  if (!out.mesh.empty())
    std::cout << "mesh " << out.mesh << "\n";
  for (const std::string &s : out.shardings)
    std::cout << "  " << s << "\n";
  if (o.print && !out.program.empty())
    std::cout << out.program;
  std::cout << "partitioned on " << out.devices
            << " devices: " << partition_check::statusName(out.status);
  if (out.status == partition_check::Status::Match)
    std::cout << (out.exact ? " (bit-exact)" : " (within tolerance)");
  if (!out.stage.empty())
    std::cout << " at " << out.stage << ": " << out.message;
  std::cout << "; " << out.checks_passed << " of " << out.checks_run
            << " device checks passed\n";
  std::cout << "work: " << out.work << " units (--max-work)\n";
  return out.status == partition_check::Status::Match ? 0 : 1;
}

// --devices N alone: the module is a per-device program; each device runs
// it (no arguments) and its checks and results are reported by device.
int runPerDevice(Module &module, const Options &o) {
  interpreter::RunOptions options;
  options.entry = o.entry;
  options.max_work = o.max_work;
  const std::vector<std::vector<interpreter::Tensor>> none(
      size_t(o.max_devices));
  const interpreter::DevicesRunResult r =
      interpreter::runOnDevices(module, none, options);
  size_t passed = 0;
  for (const interpreter::CheckResult &c : r.checks) {
    passed += c.passed;
    std::cout << (c.passed ? "PASS " : "FAIL ") << c.op << " at " << o.input
              << ":" << c.line << " on device " << c.device
              << (c.detail.empty() ? "" : ": ") << c.detail << "\n";
  }
  if (!r.ok) {
    std::cerr << o.input << ":" << r.error << "\n";
    return 1;
  }
  if (o.print)
    for (size_t d = 0; d < r.results.size(); ++d)
      for (const interpreter::Tensor &t : r.results[d]) {
        std::cout << "device " << d << ": ";
        printTensor(t);
      }
  std::cout << passed << " of " << r.checks.size() << " checks passed on "
            << o.max_devices << " devices (" << r.ops_run << " ops run)\n";
  return passed == r.checks.size() ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int code = parseArgs(argc, argv, o); code >= 0)
    return code;
  std::string text;
  if (!readFile(o.input, text)) {
    std::cerr << "shardlab-run: cannot read " << o.input << "\n";
    return 2;
  }
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(text, diags);
  for (const Diagnostic &d : diags.diagnostics())
    std::cerr << formatDiagnostic(d, o.input, text);
  if (!module)
    return 2;
  if (o.partition) // runs the module globally first, then partitioned
    return runPartitioned(text, o);
  if (o.devices_given)
    return runPerDevice(*module, o);
  interpreter::RunOptions options;
  options.entry = o.entry;
  options.max_work = o.max_work;
  // A function with arguments runs on random inputs (seed 0: the ones the
  // partition check with the module's shardings feeds it).
  if (Operation *entry = interpreter::findEntry(*module, o.entry);
      entry && entry->region(0).front().numArguments() > 0)
    std::cout << "random inputs for " << entry->region(0).front().numArguments()
              << " argument(s)\n";
  const interpreter::RunResult r =
      partition_check::runGlobally(*module, options, 0, o.input_scale);
  for (const interpreter::CheckResult &c : r.checks)
    std::cout << (c.passed ? "PASS " : "FAIL ") << c.op << " at " << o.input
              << ":" << c.line << (c.detail.empty() ? "" : ": ") << c.detail
              << "\n";
  if (!r.ok) {
    std::cerr << o.input << ":" << r.error << "\n";
    return 1;
  }
  if (o.print)
    for (const interpreter::Tensor &t : r.results)
      printTensor(t);
  size_t passed = 0;
  for (const interpreter::CheckResult &c : r.checks)
    passed += c.passed;
  std::cout << passed << " of " << r.checks.size() << " checks passed ("
            << r.ops_run << " ops run, " << r.elements << " elements, "
            << r.work << " units of work)\n";
  return r.allChecksPassed() ? 0 : 1;
}
