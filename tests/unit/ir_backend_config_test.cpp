// backendConfigField / backendConfigNumber: the fields of an op's
// backend_config JSON that the cost model and the interpreter read.
#include "ir/op_properties.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

// An op with `config` as its backend_config string (already escaped for
// the module's text), or none.
std::unique_ptr<Module> withConfig(const std::string &config) {
  const std::string attr =
      config.empty() ? "" : " {backend_config = \"" + config + "\"}";
  const std::string text =
      R"(func.func @main(%q: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %a:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %q, %q))" +
      attr +
      R"( : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> (tensor<1x8x2x4xf32>, tensor<1x2x8xf32>, tensor<1xui8>)
  return %a#0 : tensor<1x8x2x4xf32>
})";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  return module;
}

Operation &callIn(Module &module) {
  return *module.mainFunc()->region(0).front().front();
}

} // namespace

TEST_CASE("backend_config fields: by their keys, strings and numbers") {
  auto module = withConfig(
      R"({\"cudnn_fmha_backend_config\": {\"mask_type\": \"PADDING_CAUSAL\", )"
      R"(\"fmha_scale\": 0.125, \"seed\": \"42\"}, \"n\": [1]})");
  Operation &op = callIn(*module);
  CHECK(backendConfigField(op, {"cudnn_fmha_backend_config", "mask_type"}) ==
        "PADDING_CAUSAL");
  CHECK(isCausalAttention(op));
  CHECK(backendConfigNumber(op, {"cudnn_fmha_backend_config", "fmha_scale"}) ==
        0.125);
  // A number written as a string, as XLA writes 64-bit integers.
  CHECK(backendConfigNumber(op, {"cudnn_fmha_backend_config", "seed"}) == 42);
  // Not a number; absent; an array; a key under a string.
  CHECK_FALSE(
      backendConfigNumber(op, {"cudnn_fmha_backend_config", "mask_type"}));
  CHECK_FALSE(backendConfigField(op, {"cudnn_fmha_backend_config", "x"}));
  CHECK_FALSE(backendConfigField(op, {"n"}));
  CHECK_FALSE(backendConfigField(
      op, {"cudnn_fmha_backend_config", "mask_type", "deeper"}));
}

TEST_CASE("backend_config fields: none, not JSON, CAUSAL only where the mask "
          "says so") {
  CHECK_FALSE(backendConfigField(callIn(*withConfig("")), {"a"}));
  auto broken = withConfig(R"({\"a\": )");
  CHECK_FALSE(backendConfigField(callIn(*broken), {"a"}));
  // The word elsewhere in the config is not the mask.
  auto elsewhere =
      withConfig(R"({\"note\": \"CAUSAL\", \"cudnn_fmha_backend_config\": )"
                 R"({\"mask_type\": \"NO_MASK\"}})");
  CHECK_FALSE(isCausalAttention(callIn(*elsewhere)));
}
