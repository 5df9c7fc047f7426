// Diagnostics MLIR emits once per process (emitOpWarningOnce) are emitted
// once per run: once across the chunks of a split input, again in a new run.
#include "shardlab/api/api.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

// A chunk calling @f twice: import-func-calls clones @f's body for the
// second call and warns about it.
const char *kTwoCalls =
    R"(func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @f(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
)";

size_t warnings(const api::RunResult &result) {
  size_t count = 0;
  for (const Diagnostic &diag : result.diagnostics)
    count += diag.severity == Severity::Warning ? 1 : 0;
  return count;
}

api::RunResult runImportFuncCalls(const std::string &text) {
  Result<api::RunRequest> request =
      api::parseRunFlags({"-split-input-file", "-sdy-import-func-calls"});
  REQUIRE(request.ok());
  return api::runPipeline(text, *request);
}

} // namespace

TEST_CASE("a once-per-process warning comes once per split-input run") {
  std::string two_chunks = std::string(kTwoCalls) + "// -----\n" + kTwoCalls;
  api::RunResult result = runImportFuncCalls(two_chunks);
  CHECK(result.ok);
  CHECK(warnings(result) == 1);
  CHECK(result.diagnostics.front().loc.line == 3);
  // A second run warns again.
  CHECK(warnings(runImportFuncCalls(two_chunks)) == 1);
}

TEST_CASE("warningOnce keeps one warning per key in one engine") {
  DiagnosticEngine diags;
  diags.warningOnce("a", {1, 1}, "first");
  diags.warningOnce("a", {2, 1}, "second");
  diags.warningOnce("b", {3, 1}, "third");
  REQUIRE(diags.diagnostics().size() == 2);
  CHECK(diags.diagnostics()[1].message == "third");
}
