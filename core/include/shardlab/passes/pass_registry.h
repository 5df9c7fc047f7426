// The pass registry, keyed by Shardy's flag names (`sdy-basic-propagate`,
// `sdy-import-pipeline`, ...), and the parser of Shardy's option syntax
// (`-sdy-basic-propagate="conservative-propagation=true keep-sharding-rules"`).
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/text/diagnostics.h"

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// Options of one pass invocation, `key=value` pairs (a bare key is "true").
using PassOptions = std::map<std::string, std::string>;

/// Runs a pass over `module`; reports problems through `diags` and returns
/// false on failure.
using PassFn = bool (*)(Module &module, const PassOptions &options,
                        DiagnosticEngine &diags);

struct PassInfo {
  std::string_view flag;        ///< without the leading '-'
  std::string_view description; ///< one line, for --help
  PassFn run = nullptr;         ///< null: known to Shardy, not implemented yet
};

/// Wall-clock time of every pass run on a module, nested as the pipelines
/// nest; recorded while a Module points at one (shardlab-opt -mlir-timing).
struct PassTiming {
  struct Entry {
    std::string flag;
    int depth = 0;      ///< 0: run directly; 1: inside a pipeline; ...
    double seconds = 0; ///< including nested passes
  };
  std::vector<Entry> entries; ///< in the order the passes started
  int depth = 0;              ///< nesting of the pass running now
};

/// Records the wall time from construction to destruction as one entry of
/// `module.timing` (nothing when it is unset).
class PassTimingScope {
public:
  PassTimingScope(Module &module, std::string_view name);
  ~PassTimingScope();
  PassTimingScope(const PassTimingScope &) = delete;
  PassTimingScope &operator=(const PassTimingScope &) = delete;

private:
  PassTiming *timing_;
  size_t entry_ = 0;
  std::chrono::steady_clock::time_point start_;
};

/// The report MLIR's -mlir-timing prints: total, then one line per pass with
/// its wall time and share of the total, nested passes indented.
std::string formatPassTiming(const PassTiming &timing);

/// Runs a registered pass; records its time when `module.timing` is set.
/// Returns false when the pass failed or is not implemented (reported).
bool runRegisteredPass(const PassInfo &pass, Module &module,
                       const PassOptions &options, DiagnosticEngine &diags);

/// Every pass and pipeline flag Shardy's sdy_opt knows, in --help order.
const std::vector<PassInfo> &allPasses();
const PassInfo *lookupPass(std::string_view flag);

/// Parses `a=1 b="x y" c` into options; returns false (with `error` set) on
/// unbalanced quotes.
bool parsePassOptions(std::string_view text, PassOptions &options,
                      std::string &error);

} // namespace shardlab
