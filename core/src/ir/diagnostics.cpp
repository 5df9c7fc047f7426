#include "shardlab/ir/diagnostics.h"

namespace shardlab {

bool DiagnosticEngine::hasErrors() const {
  for (const Diagnostic &diag : diags_)
    if (diag.severity == Severity::Error)
      return true;
  return false;
}

std::string_view severityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Remark:
    return "remark";
  }
  return "error";
}

std::string formatDiagnostic(const Diagnostic &diag, std::string_view file,
                             std::string_view source) {
  std::string out = std::string(file) + ":" + std::to_string(diag.loc.line) +
                    ":" + std::to_string(diag.loc.col) + ": " +
                    std::string(severityName(diag.severity)) + ": " +
                    diag.message + "\n";
  // The source line and a caret under the column.
  size_t line_start = 0;
  for (uint32_t line = 1;
       line < diag.loc.line && line_start != std::string_view::npos; ++line) {
    line_start = source.find('\n', line_start);
    if (line_start != std::string_view::npos)
      ++line_start;
  }
  if (diag.loc.line == 0 || line_start == std::string_view::npos ||
      line_start > source.size())
    return out;
  size_t line_end = source.find('\n', line_start);
  std::string_view text = source.substr(
      line_start, line_end == std::string_view::npos ? std::string_view::npos
                                                     : line_end - line_start);
  if (text.size() > 240)
    text = text.substr(0, 240);
  out += std::string(text) + "\n";
  if (diag.loc.col >= 1 && diag.loc.col <= text.size() + 1)
    out += std::string(diag.loc.col - 1, ' ') + "^\n";
  return out;
}

} // namespace shardlab
