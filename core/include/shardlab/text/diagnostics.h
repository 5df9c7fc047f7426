// Diagnostics (errors, warnings, notes, remarks) with source positions.
// Parsing, verification and passes report through a DiagnosticEngine instead
// of throwing, so bad input never crashes the CLI or traps the WASM module.
#pragma once

#include "shardlab/ir/ir.h"

#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

enum class Severity { Error, Warning, Note, Remark };

struct Diagnostic {
  Severity severity = Severity::Error;
  Location loc;
  std::string message;
};

/// Collects diagnostics in emission order.
class DiagnosticEngine {
public:
  void emit(Severity severity, Location loc, std::string message) {
    diags_.push_back({severity, loc, std::move(message)});
  }
  void error(Location loc, std::string message) {
    emit(Severity::Error, loc, std::move(message));
  }
  void warning(Location loc, std::string message) {
    emit(Severity::Warning, loc, std::move(message));
  }
  void note(Location loc, std::string message) {
    emit(Severity::Note, loc, std::move(message));
  }
  bool hasErrors() const;
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  void clear() { diags_.clear(); }

private:
  std::vector<Diagnostic> diags_;
};

std::string_view severityName(Severity severity);

/// Formats `file:line:col: error: message`, then the source line and a caret
/// under the column, as MLIR's SourceMgr printing does.
std::string formatDiagnostic(const Diagnostic &diag, std::string_view file,
                             std::string_view source);

} // namespace shardlab
