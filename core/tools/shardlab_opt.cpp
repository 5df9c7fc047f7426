// shardlab-opt: Shardy's sdy_opt, re-implemented. Reads MLIR text, runs
// the passes named by flags, prints the result. Understands the same
// flags as sdy_opt, so Shardy's lit tests run against it.
#include "shardlab/passes/pass_registry.h"
#include "shardlab/text/expected_diagnostics.h"
#include "shardlab/text/text.h"
#include "shardlab/verify/verifier.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace shardlab;

namespace {

struct PassRequest {
  const PassInfo *pass;
  PassOptions options;
};

struct Options {
  std::string input = "-";
  std::string output = "-";
  bool split_input = false;
  bool verify_diagnostics = false;
  bool generic = false;
  std::vector<PassRequest> passes;
};

void printHelp() {
  std::cout
      << "OVERVIEW: shardlab-opt, Shardy's sdy_opt re-implemented\n\n"
         "USAGE: shardlab-opt [options] <input file>\n\n"
         "OPTIONS:\n"
         "  -o <file>               Output file (default: stdout)\n"
         "  -split-input-file       Split the input at '// -----' and "
         "process each chunk alone\n"
         "  -verify-diagnostics     Check diagnostics against "
         "expected-* annotations\n"
         "  -mlir-print-op-generic  Print every op in the generic form\n"
         "  -allow-unregistered-dialect  Accepted (unknown ops are "
         "always kept)\n"
         "  --help                  This text\n\n"
         "PASSES (Shardy's flag names; options as -pass=\"k=v k2=v2\"):\n";
  for (const PassInfo &pass : allPasses()) {
    std::string flag = "  -" + std::string(pass.flag);
    flag.resize(std::max<size_t>(flag.size() + 1, 54), ' ');
    std::cout << flag << pass.description
              << (pass.run ? "" : " (not implemented yet)") << "\n";
  }
}

bool parseArgs(int argc, char **argv, Options &options, std::string &error) {
  bool positional_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (positional_only || arg == "-" || arg.empty() || arg[0] != '-') {
      options.input = arg;
      continue;
    }
    if (arg == "--") {
      positional_only = true;
      continue;
    }
    std::string flag = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string value;
    size_t eq = flag.find('=');
    bool has_value = eq != std::string::npos;
    if (has_value) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (flag == "help" || flag == "h") {
      printHelp();
      std::exit(0);
    } else if (flag == "o") {
      if (!has_value && i + 1 >= argc)
        return error = "-o needs a file name", false;
      options.output = has_value ? value : argv[++i];
    } else if (flag == "split-input-file") {
      options.split_input = true;
    } else if (flag == "verify-diagnostics") {
      options.verify_diagnostics = true;
    } else if (flag == "mlir-print-op-generic") {
      options.generic = true;
    } else if (flag == "allow-unregistered-dialect") {
    } else if (const PassInfo *pass = lookupPass(flag)) {
      PassRequest request{pass, {}};
      if (has_value && !parsePassOptions(value, request.options, error))
        return false;
      options.passes.push_back(std::move(request));
    } else {
      error = "Unknown command line argument '" + arg +
              "'.  Try: 'shardlab-opt --help'";
      return false;
    }
  }
  return true;
}

bool readInput(const std::string &path, std::string &text) {
  std::ostringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file)
      return false;
    buffer << file.rdbuf();
  }
  text = buffer.str();
  return true;
}

/// A chunk of the input and the line it starts at (0-based).
struct Chunk {
  std::string_view text;
  uint32_t first_line;
};

std::vector<Chunk> splitInput(std::string_view text, bool split) {
  std::vector<Chunk> chunks;
  if (!split)
    return {{text, 0}};
  size_t start = 0, pos = 0;
  uint32_t line = 0, chunk_line = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view current = text.substr(pos, end - pos);
    size_t first = current.find_first_not_of(" \t");
    if (first != std::string_view::npos &&
        current.substr(first).rfind("// -----", 0) == 0) {
      chunks.push_back({text.substr(start, pos - start), chunk_line});
      start = end + 1;
      chunk_line = line + 1;
    }
    pos = end + 1;
    ++line;
  }
  if (start <= text.size())
    chunks.push_back({text.substr(start), chunk_line});
  return chunks;
}

} // namespace

namespace {

/// Parses, verifies and transforms one chunk; appends its printed form.
bool processChunk(const Chunk &chunk, const Options &options,
                  DiagnosticEngine &diags, std::string &out) {
  ParseOptions parse_options;
  parse_options.line_offset = chunk.first_line;
  auto module = parseModule(chunk.text, diags, parse_options);
  if (!module || !verifyModule(*module, diags))
    return false;
  for (const PassRequest &request : options.passes) {
    if (!request.pass->run) {
      diags.error({}, "pass '-" + std::string(request.pass->flag) +
                          "' is not implemented yet in shardlab");
      return false;
    }
    if (!request.pass->run(*module, request.options, diags) ||
        !verifyModule(*module, diags))
      return false;
  }
  PrintOptions print_options;
  print_options.generic = options.generic;
  out += printModule(*module, print_options);
  return true;
}

bool writeOutput(const std::string &path, const std::string &text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return true;
  }
  std::string temp = path + ".tmp";
  {
    std::ofstream file(temp, std::ios::binary);
    if (!file ||
        !file.write(text.data(), static_cast<std::streamsize>(text.size())))
      return false;
  }
  return std::rename(temp.c_str(), path.c_str()) == 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string error;
  if (!parseArgs(argc, argv, options, error)) {
    std::cerr << "shardlab-opt: " << error << "\n";
    return 2;
  }
  std::string text;
  if (!readInput(options.input, text)) {
    std::cerr << "shardlab-opt: could not open input file '" << options.input
              << "'\n";
    return 1;
  }
  std::string file = options.input == "-" ? "<stdin>" : options.input;
  std::string out;
  bool ok = true;
  auto chunks = splitInput(text, options.split_input);
  for (size_t i = 0; i < chunks.size(); ++i) {
    DiagnosticEngine diags;
    std::string chunk_out;
    bool chunk_ok = processChunk(chunks[i], options, diags, chunk_out);
    if (options.verify_diagnostics) {
      ok &= checkExpectedDiagnostics(chunks[i].text, chunks[i].first_line,
                                     diags.diagnostics(), file, std::cerr);
    } else {
      for (const Diagnostic &diag : diags.diagnostics())
        std::cerr << formatDiagnostic(diag, file, text);
      ok &= chunk_ok;
    }
    if (i)
      out += "// -----\n";
    out += chunk_out;
  }
  if (!writeOutput(options.output, out)) {
    std::cerr << "shardlab-opt: could not write '" << options.output << "'\n";
    return 1;
  }
  return ok ? 0 : 1;
}
