// The pass registry, keyed by Shardy's flag names (`sdy-basic-propagate`,
// `sdy-import-pipeline`, ...), and the parser of Shardy's option syntax
// (`-sdy-basic-propagate="conservative-propagation=true keep-sharding-rules"`).
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/text/diagnostics.h"

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

/// Every pass and pipeline flag Shardy's sdy_opt knows, in --help order.
const std::vector<PassInfo> &allPasses();
const PassInfo *lookupPass(std::string_view flag);

/// Parses `a=1 b="x y" c` into options; returns false (with `error` set) on
/// unbalanced quotes.
bool parsePassOptions(std::string_view text, PassOptions &options,
                      std::string &error);

} // namespace shardlab
