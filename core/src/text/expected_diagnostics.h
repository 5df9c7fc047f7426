// -verify-diagnostics: matches emitted diagnostics against the
// `// expected-error@+1 {{text}}` annotations of the source, as MLIR does.
#pragma once

#include "shardlab/ir/diagnostics.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// Every expected diagnostic must be emitted on its line (substring match)
/// and every emitted one expected; mismatches are reported on `err`.
bool checkExpectedDiagnostics(std::string_view chunk, uint32_t first_line,
                              const std::vector<Diagnostic> &diags,
                              const std::string &file, std::ostream &err);

} // namespace shardlab
