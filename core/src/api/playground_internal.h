// Internal to the API: what the playground entry points share. Parsing and
// verifying a module, running a playground pipeline on it, and finding the
// op or value at a source position (in the module as parsed, or the same
// op in a transformed copy).
#pragma once

#include "diagnostics_json.h"
#include "json_options.h"
#include "shardlab/api/playground_api.h"
#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"
#include "shardlab/support/result.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::api::detail {

/// Parses and verifies; null when there were errors (they are in `diags`).
std::unique_ptr<Module> parseVerified(std::string_view text,
                                      DiagnosticEngine &diags);

/// Runs shardlab-opt flags over `module`; an error for a bad flag, an
/// unimplemented pass or a failing pass (its diagnostics are in `diags`).
Status runFlags(Module &module, const std::vector<std::string> &flags,
                DiagnosticEngine &diags);

/// A named pipeline and its shardlab-opt flags ("none": no flags).
struct PipelineChoice {
  std::string name;
  std::vector<std::string> flags;
};
/// The "pipeline" option (default "pipeline"); an error for an unknown name.
Result<PipelineChoice> pipelineOption(OptionReader &reader);

/// A 1-based source position read from {"line", "column"}.
struct Position {
  int64_t line = 0;
  int64_t column = 0;
};
bool positionOption(OptionReader &reader, Position &position);

/// The op at `position`: the one starting on that line nearest before the
/// column (func.func and module ops only when nothing else is there).
Operation *findOp(Module &module, const Position &position);
/// The op of `other` with the same name and location as `op`, or null.
Operation *sameOp(Module &other, const Operation &op);
/// The value defined at `position` (a block argument or an op result).
Value *findValue(Module &module, const Position &position);
/// The value of `other` standing where `value` stands in its module.
Value *sameValue(Module &other, Value &value);

/// The input parsed twice: as written, and after the "pipeline" option's
/// flags. `after` is null (with `error` and `diagnostics`) on failure.
struct BeforeAfter {
  std::unique_ptr<Module> before, after;
  std::string pipeline;
  std::string error;
  std::vector<Diagnostic> diagnostics;
};
/// The input parsed twice, the second run through the "pipeline" option's
/// flags, or the pair `cache` holds for the same text and pipeline (stored
/// there when it succeeded). The views only read the modules.
std::shared_ptr<BeforeAfter>
parseBothCached(std::string_view text, OptionReader &reader, ViewCache *cache);

/// Axis refs as their printed strings.
json axesJson(const std::vector<AxisRef> &axes);

} // namespace shardlab::api::detail
