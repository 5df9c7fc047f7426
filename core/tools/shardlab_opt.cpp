// shardlab-opt: Shardy's sdy_opt, re-implemented. Reads MLIR text, runs
// the passes named by flags, prints the result. Understands the same
// flags as sdy_opt, so Shardy's lit tests run against it. The work is done
// by api::runPipeline, which the WASM build uses too; this file only deals
// with files, -o and --help.
#include "shardlab/api/api.h"
#include "shardlab/passes/pass_registry.h"
#include "shardlab/support/file_io.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace shardlab;

namespace {

struct Options {
  std::string input = "-";
  std::string output = "-";
  bool help = false;
  std::string help_pass;          ///< --help-pass=FLAG
  bool passes_markdown = false;   ///< --passes-markdown
  std::vector<std::string> flags; ///< everything else, for the API
};

void printHelp() {
  std::cout
      << "OVERVIEW: shardlab-opt, Shardy's sdy_opt re-implemented\n\n"
         "USAGE: shardlab-opt [options] <input file>\n\n"
         "OPTIONS:\n"
         "  -o <file>               Output file (default: stdout)\n"
         "  -split-input-file[=M]   Split the input at each '// -----' (or "
         "M) and process\n"
         "                          each chunk alone\n"
         "  -output-split-marker=M  Join the chunks' outputs with M "
         "(default '// -----')\n"
         "  -verify-diagnostics     Check diagnostics against "
         "expected-* annotations\n"
         "  -mlir-print-op-generic  Print every op in the generic form\n"
         "  -mlir-print-debuginfo   Print locations (loc(...)) of ops and "
         "arguments\n"
         "  -mlir-timing            Report each pass's wall time on stderr\n"
         "  -verify-each[=false]    Verify after every pass, also those a "
         "pipeline runs\n"
         "                          (default: after each pass given here, a "
         "pipeline as one);\n"
         "                          =false: only the input is verified\n"
         "  -allow-unregistered-dialect  Accepted (unknown ops are "
         "always kept)\n"
         "  --help                  This text\n"
         "  --help-pass=PASS        One pass: what it does, its options\n"
         "  --passes-markdown       Every pass as Markdown (docs/passes.md)\n"
         "\nPASSES (Shardy's flag names; options as -pass=\"k=v k2=v2\"; "
         "see --help-pass=PASS):\n";
  for (const PassInfo &pass : allPasses()) {
    std::string flag = "  -" + std::string(pass.flag);
    flag.resize(std::max<size_t>(flag.size() + 1, 54), ' ');
    std::cout << flag << pass.summary
              << (pass.run ? "" : " (not implemented yet)") << "\n";
  }
}

// Takes out what the command line owns (-o, --help, the input file); the
// rest goes to api::parseRunFlags.
Status splitArgs(int argc, char **argv, Options &options) {
  bool positional_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool positional =
        positional_only || arg == "-" || arg.empty() || arg[0] != '-';
    if (positional) {
      options.input = arg;
    } else if (arg == "--") {
      positional_only = true;
    } else if (arg == "--help" || arg == "-help" || arg == "-h") {
      options.help = true;
    } else if (arg.rfind("--help-pass=", 0) == 0 ||
               arg.rfind("-help-pass=", 0) == 0) {
      options.help_pass = arg.substr(arg.find('=') + 1);
      if (!options.help_pass.empty() && options.help_pass[0] == '-')
        options.help_pass.erase(0, 1);
    } else if (arg == "--passes-markdown" || arg == "-passes-markdown") {
      options.passes_markdown = true;
    } else if (arg == "-o" || arg == "--o") {
      if (i + 1 >= argc)
        return makeError("-o needs a file name");
      options.output = argv[++i];
    } else if (arg.rfind("-o=", 0) == 0 || arg.rfind("--o=", 0) == 0) {
      options.output = arg.substr(arg.find('=') + 1);
    } else {
      options.flags.push_back(arg);
    }
  }
  return success();
}

/// Writes `text` to `path` (or stdout) atomically: temp file + rename.
Status writeOutput(const std::string &path, const std::string &text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return success();
  }
  return writeFileAtomically(path, text);
}

#ifdef SHARDLAB_FAULT_INJECTION
// SHARDLAB_FAULT_LOSSY_INTEGERS: every integer literal goes through a
// double, as shardlab's parser once read them (2^53 + 1 becomes 2^53; a ui64
// at or above 2^63 becomes -2^63).
bool lossyIntegers(Module &module, const PassOptions &, DiagnosticEngine &) {
  walk(module.op(), [&](Operation &op) {
    for (const NamedAttr &entry : std::vector<NamedAttr>(
             op.attrs.entries().begin(), op.attrs.entries().end())) {
      const DenseReader reader = entry.value->denseReader();
      if (!reader.valid() ||
          reader.layout().kind != ElementLayout::Kind::Integer)
        continue;
      std::vector<int64_t> values;
      for (int64_t i = 0; i < reader.size(); ++i) {
        const auto v = static_cast<double>(reader.intAt(i));
        values.push_back(reader.layout().is_unsigned && reader.intAt(i) < 0
                             ? INT64_MIN
                             : static_cast<int64_t>(v));
      }
      op.attrs.set(entry.name, module.ctx().attrs.make(
                                   Attr{AttrKind::DenseElements,
                                        denseOfInts(entry.value->type, values),
                                        entry.value->type,
                                        {}}));
    }
  });
  return true;
}

// SHARDLAB_FAULT_DROP_ATTR=NAME: the attribute NAME is taken off every op,
// as a parser that does not keep it and a printer that never prints it
// would (the printed module is still a fixed point).
bool dropAttr(Module &module, const PassOptions &, DiagnosticEngine &) {
  const std::string name = std::getenv("SHARDLAB_FAULT_DROP_ATTR");
  module.op().attrs.erase(name);
  walk(module.op(), [&](Operation &op) { op.attrs.erase(name); });
  return true;
}

// Only in the test binary shardlab-opt-faulty, so that a test can show a
// gate notices a wrong answer: SHARDLAB_FAULT_NOOP_PASS=FLAG turns the pass
// FLAG, where a command line names it, into a no-op;
// SHARDLAB_FAULT_LOSSY_INTEGERS=1 adds lossyIntegers after the pipeline,
// SHARDLAB_FAULT_DROP_ATTR=NAME dropAttr.
void injectFaults(api::RunRequest &request) {
  if (std::getenv("SHARDLAB_FAULT_DROP_ATTR")) {
    static const PassInfo drop{
        "drop-attr", "canonicalize", "an attribute dropped (fault)", "",
        {},          dropAttr};
    request.pipeline.steps.push_back({&drop, {}});
  }
  if (std::getenv("SHARDLAB_FAULT_LOSSY_INTEGERS")) {
    static const PassInfo lossy{"lossy-integers",
                                "canonicalize",
                                "integers through a double (fault)",
                                "",
                                {},
                                lossyIntegers};
    request.pipeline.steps.push_back({&lossy, {}});
  }
  const char *flag = std::getenv("SHARDLAB_FAULT_NOOP_PASS");
  if (!flag)
    return;
  static const PassInfo noop{
      flag,
      "canonicalize",
      "no-op (fault injection)",
      "",
      {},
      [](Module &, const PassOptions &, DiagnosticEngine &) { return true; }};
  for (PassStep &step : request.pipeline.steps)
    if (step.pass->flag == flag)
      step.pass = &noop;
}
#endif

} // namespace

int main(int argc, char **argv) {
  Options options;
  Status split = splitArgs(argc, argv, options);
  Result<api::RunRequest> parsed = split
                                       ? api::parseRunFlags(options.flags)
                                       : Result<api::RunRequest>(split.error());
  if (!parsed) {
    std::cerr << "shardlab-opt: " << parsed.error().message << "\n";
    return 2;
  }
  api::RunRequest &request = *parsed;
#ifdef SHARDLAB_FAULT_INJECTION
  injectFaults(request);
#endif
  if (options.help) {
    printHelp();
    return 0;
  }
  if (!options.help_pass.empty()) {
    const PassInfo *pass = lookupPass(options.help_pass);
    if (!pass) {
      std::cerr << "shardlab-opt: unknown pass '-" << options.help_pass
                << "'.  Try: 'shardlab-opt --help'\n";
      return 2;
    }
    std::cout << passHelp(*pass);
    return 0;
  }
  if (options.passes_markdown) {
    std::cout << passesMarkdown();
    return 0;
  }
  std::string text;
  if (!readFile(options.input, text)) {
    std::cerr << "shardlab-opt: could not open input file '" << options.input
              << "'\n";
    return 1;
  }
  request.file = options.input == "-" ? "<stdin>" : options.input;
  api::RunResult result = api::runPipeline(text, request);
  std::cerr << result.stderr_text;
  if (Status written = writeOutput(options.output, result.output); !written) {
    std::cerr << "shardlab-opt: could not write '" << options.output
              << "': " << written.error().message << "\n";
    return 1;
  }
  return result.ok ? 0 : 1;
}
