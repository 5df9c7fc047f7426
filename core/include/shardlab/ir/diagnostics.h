// Diagnostics (errors, warnings, notes, remarks) with source positions.
// Parsing, verification and passes report through a DiagnosticEngine instead
// of throwing, so bad input never crashes the CLI or traps the WASM module.
#pragma once

#include "shardlab/ir/ir.h"

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

enum class Severity { Error, Warning, Note, Remark };

/// Another place a diagnostic refers to, with what is there.
struct RelatedLocation {
  Location loc;
  std::string message;
};

/// One diagnostic. `loc` is where MLIR reports it (what shardlab-opt
/// prints and -verify-diagnostics matches); `range` is the text it is about
/// when that is more precise (a func argument's sharding error is reported
/// at the func.func, and its range is the argument), else unknown and the
/// token at `loc` stands for it.
struct Diagnostic {
  Severity severity = Severity::Error;
  Location loc;
  std::string message;
  SourceRange range;
  std::vector<RelatedLocation> related;
};

/// Keys of the diagnostics emitted once per run (see warningOnce).
using OnceKeys = std::set<std::string, std::less<>>;

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
  /// A warning emitted at most once per `key` in one run: MLIR's
  /// emitOpWarningOnce, which is once per process. The chunks of one
  /// split-input run share their keys through shareOnceKeys.
  void warningOnce(std::string_view key, Location loc, std::string message) {
    if (!once_)
      once_ = std::make_shared<OnceKeys>();
    if (once_->emplace(key).second)
      warning(loc, std::move(message));
  }
  void shareOnceKeys(std::shared_ptr<OnceKeys> keys) {
    once_ = std::move(keys);
  }
  /// The diagnostic emitted last (to add its range or related locations),
  /// or nullptr.
  Diagnostic *last() { return diags_.empty() ? nullptr : &diags_.back(); }
  bool hasErrors() const;
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  void clear() { diags_.clear(); }

private:
  std::vector<Diagnostic> diags_;
  std::shared_ptr<OnceKeys> once_;
};

std::string_view severityName(Severity severity);

/// Formats `file:line:col: error: message`, then the source line and a caret
/// under the column, as MLIR's SourceMgr printing does.
std::string formatDiagnostic(const Diagnostic &diag, std::string_view file,
                             std::string_view source);

} // namespace shardlab
