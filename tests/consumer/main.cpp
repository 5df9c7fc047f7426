// Loads a module, runs the propagation pipeline through the public API and
// prints the propagated module: what a program embedding shardlab does.
#include "shardlab/api/api.h"

#include <iostream>

int main() {
  const char *text = R"(sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
)";
  shardlab::Result<shardlab::api::RunRequest> request =
      shardlab::api::parseRunFlags({"-sdy-propagation-pipeline"});
  if (!request) {
    std::cerr << request.error().message << "\n";
    return 1;
  }
  shardlab::api::RunResult result = shardlab::api::runPipeline(text, *request);
  std::cout << result.output;
  std::cerr << result.stderr_text;
  return result.ok ? 0 : 1;
}
