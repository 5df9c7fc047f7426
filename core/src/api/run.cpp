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
    if (!value.empty())
      request.split_marker = value;
  } else if (flag == "output-split-marker") {
    request.output_split_marker = value;
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

/// A chunk of the input and where it starts in the file (0-based line, and
/// the columns before it on that line).
struct Chunk {
  std::string_view text;
  uint32_t first_line = 0;
  uint32_t first_column = 0;
};

/// The chunks between the occurrences of `marker`, split as MLIR's
/// splitAndProcessBuffer splits: at every occurrence, wherever it stands on
/// its line; what follows it on the line starts the next chunk.
/// Worked example, marker `// -----`:
///   "A\n// -----\nB" -> "A\n" (line 0), "\nB" (line 1, column 8)
///   "A // ------\nB"  -> "A " (line 0), "-\nB" (line 0, column 10)
std::vector<Chunk> splitInput(std::string_view text, bool split,
                              std::string_view marker) {
  if (!split || marker.empty())
    return {{text, 0, 0}};
  std::vector<Chunk> chunks;
  size_t start = 0;
  uint32_t line = 0, column = 0;
  for (;;) {
    const size_t found = text.find(marker, start);
    const size_t end = found == std::string_view::npos ? text.size() : found;
    chunks.push_back({text.substr(start, end - start), line, column});
    if (found == std::string_view::npos)
      return chunks;
    // Where the next chunk starts: past the marker.
    const size_t next = found + marker.size();
    for (size_t i = start; i < next; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 0;
      } else {
        ++column;
      }
    }
    start = next;
  }
}

/// Parses, verifies and transforms one chunk; appends its printed form.
/// `timing`: where pass times go (null unless -mlir-timing).
bool processChunk(const Chunk &chunk, const RunRequest &request,
                  DiagnosticEngine &diags, PassTiming *timing,
                  std::string &out) {
  LoadOptions load;
  load.line_offset = chunk.first_line;
  load.column_offset = chunk.first_column;
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
  auto chunks = splitInput(text, request.split_input, request.split_marker);
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
    if (i) // MLIR joins the chunks' outputs with the marker and a newline
      result.output += request.output_split_marker + "\n";
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
