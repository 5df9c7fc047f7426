#include "shardlab/verify/verifier.h"

namespace shardlab {

bool verifyModule(Module &module, DiagnosticEngine &diags) {
  size_t before = diags.diagnostics().size();
  (void)module;
  for (size_t i = before; i < diags.diagnostics().size(); ++i)
    if (diags.diagnostics()[i].severity == Severity::Error)
      return false;
  return true;
}

} // namespace shardlab
