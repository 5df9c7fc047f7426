// Shared helper of the verifier unit tests: parse a module, verify it and
// return what was reported as "line:col: severity: message" strings.
#pragma once

#include "shardlab/text/text.h"
#include "verify/verifier.h"

#include <string>
#include <string_view>
#include <vector>

namespace shardlab::test {

struct VerifyResult {
  bool parsed = false;
  bool ok = false;
  std::vector<std::string> diags; ///< "3:5: error: message"
};

inline VerifyResult verifyText(std::string_view text) {
  DiagnosticEngine diags;
  VerifyResult result;
  std::unique_ptr<Module> module = parseModule(text, diags);
  result.parsed = module != nullptr;
  if (module)
    result.ok = verifyModule(*module, diags);
  for (const Diagnostic &diag : diags.diagnostics())
    result.diags.push_back(
        std::to_string(diag.loc.line) + ":" + std::to_string(diag.loc.col) +
        ": " + std::string(severityName(diag.severity)) + ": " + diag.message);
  return result;
}

} // namespace shardlab::test
