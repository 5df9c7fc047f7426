// The run pipeline: shardlab-opt's flags, input splitting and per-chunk
// parse → verify → passes → print, returning text and diagnostics as values.
#include "shardlab/api/api.h"
#include "shardlab/text/text.h"
#include "text/expected_diagnostics.h"

#include <memory>
#include <sstream>

namespace shardlab::api {
namespace {

/// Applies one `-flag[=value]` argument to `request`.
Status applyFlag(const std::string &arg, RunRequest &request) {
  std::string flag = arg.substr(arg.size() > 1 && arg[1] == '-' ? 2 : 1);
  std::string value;
  size_t eq = flag.find('=');
  bool has_value = eq != std::string::npos;
  if (has_value) {
    value = flag.substr(eq + 1);
    flag = flag.substr(0, eq);
  }
  if (flag == "split-input-file") {
    request.split_input = true;
  } else if (flag == "verify-diagnostics") {
    request.verify_diagnostics = true;
  } else if (flag == "mlir-print-op-generic") {
    request.generic = true;
  } else if (flag == "mlir-print-debuginfo") {
    request.debuginfo = true;
  } else if (flag == "mlir-timing") {
    request.timing = true;
  } else if (flag == "verify-each") {
    std::optional<bool> every =
        has_value ? parseBoolOption(value) : std::optional<bool>(true);
    if (!every)
      return makeError("'" + arg + "': -verify-each takes true or false");
    request.verify_passes =
        *every ? Module::VerifyPasses::EveryPass : Module::VerifyPasses::None;
  } else if (flag == "allow-unregistered-dialect") {
  } else if (lookupPass(flag)) {
    return appendPass(request.pipeline, flag, value);
  } else {
    return makeError("Unknown command line argument '" + arg +
                     "'.  Try: 'shardlab-opt --help'");
  }
  return success();
}

/// A chunk of the input and the line it starts at (0-based).
struct Chunk {
  std::string_view text;
  uint32_t first_line;
};

/// True when `line` is a `// -----` separator (leading blanks allowed).
bool isSeparator(std::string_view line) {
  size_t first = line.find_first_not_of(" \t");
  return first != std::string_view::npos &&
         line.substr(first).rfind("// -----", 0) == 0;
}

std::vector<Chunk> splitInput(std::string_view text, bool split) {
  if (!split)
    return {{text, 0}};
  std::vector<Chunk> chunks;
  size_t start = 0, pos = 0;
  uint32_t line = 0, chunk_line = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    if (isSeparator(text.substr(pos, end - pos))) {
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

/// Parses, verifies and transforms one chunk; appends its printed form.
/// `timing`: where pass times go (null unless -mlir-timing).
bool processChunk(const Chunk &chunk, const RunRequest &request,
                  DiagnosticEngine &diags, PassTiming *timing,
                  std::string &out) {
  LoadOptions load;
  load.line_offset = chunk.first_line;
  std::unique_ptr<Module> module = loadModule(chunk.text, diags, load).module;
  if (!module)
    return false;
  module->timing = timing;
  module->verify_passes = request.verify_passes;
  if (!runPassPipeline(*module, request.pipeline, diags))
    return false;
  PrintOptions print_options;
  print_options.generic = request.generic;
  print_options.debuginfo = request.debuginfo;
  print_options.file = request.file;
  out = printModule(*module, print_options); // moved, not copied
  out += '\n'; // mlir-opt ends each module it prints with an empty line
  return true;
}

/// Reports one chunk's diagnostics the way shardlab-opt does on stderr.
bool reportChunk(const Chunk &chunk, const RunRequest &request,
                 std::string_view text, const DiagnosticEngine &diags,
                 std::string &stderr_text) {
  if (request.verify_diagnostics) {
    std::ostringstream err;
    bool ok = checkExpectedDiagnostics(chunk.text, chunk.first_line,
                                       diags.diagnostics(), request.file, err);
    stderr_text += err.str();
    return ok;
  }
  for (const Diagnostic &diag : diags.diagnostics())
    stderr_text += formatDiagnostic(diag, request.file, text);
  return true;
}

} // namespace

Result<RunRequest> parseRunFlags(const std::vector<std::string> &flags) {
  RunRequest request;
  bool positional_only = false;
  for (const std::string &arg : flags) {
    if (positional_only || arg == "-" || arg.empty() || arg[0] != '-') {
      request.file = arg == "-" || arg.empty() ? "<stdin>" : arg;
      continue;
    }
    if (arg == "--") {
      positional_only = true;
      continue;
    }
    if (arg == "-o" || arg.rfind("-o=", 0) == 0 || arg == "-help" ||
        arg == "--help" || arg == "-h") {
      return makeError("'" + arg +
                       "' is not available here (the output is returned)");
    }
    if (Status applied = applyFlag(arg, request); !applied)
      return applied.error();
  }
  return request;
}

RunResult runPipeline(std::string_view text, const RunRequest &request) {
  RunResult result;
  result.ok = true;
  auto chunks = splitInput(text, request.split_input);
  // What MLIR warns about once per process is warned about once per run.
  auto once = std::make_shared<OnceKeys>();
  PassTiming timing;
  for (size_t i = 0; i < chunks.size(); ++i) {
    DiagnosticEngine diags;
    diags.shareOnceKeys(once);
    std::string chunk_out;
    bool chunk_ok = processChunk(chunks[i], request, diags,
                                 request.timing ? &timing : nullptr, chunk_out);
    bool report_ok =
        reportChunk(chunks[i], request, text, diags, result.stderr_text);
    result.ok &= request.verify_diagnostics ? report_ok : chunk_ok;
    for (const Diagnostic &diag : diags.diagnostics())
      result.diagnostics.push_back(diag);
    if (i)
      result.output += "// -----\n";
    if (i == 0) // moved: a module's text can be tens of megabytes
      result.output = std::move(chunk_out);
    else
      result.output += chunk_out;
  }
  if (request.timing)
    result.stderr_text += formatPassTiming(timing);
  return result;
}

} // namespace shardlab::api
