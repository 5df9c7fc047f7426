// shardlab-run: runs a module's entry function with the interpreter and
// reports each of its check.* calls (issue 44's first stage: the global
// run; simulated devices come next).
#include "shardlab/interpreter/interpreter.h"
#include "shardlab/support/file_io.h"
#include "shardlab/text/text.h"

#include <cstdio>
#include <iostream>
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
    "OPTIONS:\n"
    "  --entry NAME   the function to run (default: main)\n"
    "  --print        print the results (16 elements in full, else a summary)\n"
    "  --help         this text\n"
    "\n"
    "EXAMPLE:\n"
    "  shardlab-run "
    "../shared/corpus/stablehlo-testdata/abs_float16_20_20.mlir\n";

struct Options {
  std::string input, entry = "main";
  bool print = false;
};

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

void printTensor(const interpreter::Tensor &t) {
  std::cout << t.type()->text << " ";
  const int64_t shown = t.size() <= 16 ? t.size() : 8;
  std::cout << "[";
  for (int64_t i = 0; i < shown; ++i)
    std::cout << (i ? ", " : "") << element(t, i);
  if (shown < t.size())
    std::cout << ", ... (" << t.size() << " elements)";
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
    } else if (arg == "--entry" && i + 1 < argc) {
      o.entry = argv[++i];
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
  if (o.input.empty()) {
    std::cerr << kHelp;
    return 2;
  }
  return -1;
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
  interpreter::RunOptions options;
  options.entry = o.entry;
  const interpreter::RunResult r = interpreter::run(*module, options);
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
            << r.ops_run << " ops run, " << r.elements << " elements)\n";
  return r.allChecksPassed() ? 0 : 1;
}
