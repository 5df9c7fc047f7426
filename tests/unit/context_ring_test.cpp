// shardlab-context-ring (passes/strategy/context_ring.cpp): the ring it
// writes for a fused attention call, counted by hand, and its errors.
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

// A causal forward and backward attention over q, k, v [2, 512, 4, 32],
// the mesh's "context" axis of 4 devices beside "data" of 2.
const char *kAttention = R"(
sdy.mesh @mesh = <["data"=2, "context"=4]>
func.func @main(%q: tensor<2x512x4x32xbf16>, %k: tensor<2x512x4x32xbf16>, %v: tensor<2x512x4x32xbf16>, %do: tensor<2x512x4x32xbf16>) -> (tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>) {
  %f:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"CAUSAL\"}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l])->([i, j, k, l], [i, k, j], [o]) {i=2, j=512, k=4, l=32, m=512, n=4, o=1} need_replication={j, l, m}, custom>} : (tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>) -> (tensor<2x512x4x32xbf16>, tensor<2x4x512xf32>, tensor<1xui8>)
  %b:4 = stablehlo.custom_call @"__cudnn$fmhaSoftmaxBackward"(%q, %k, %v, %f#1, %do, %f#0) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"CAUSAL\"}}"} : (tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>, tensor<2x4x512xf32>, tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>) -> (tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>, tensor<1xui8>)
  return %f#0, %b#1 : tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>
})";

struct Ring {
  bool ok = false;
  std::string error, text;
};

Ring rewrite(const std::string &text, const std::string &options = "") {
  Ring r;
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  PassPipeline pipeline;
  REQUIRE(appendPass(pipeline, "shardlab-context-ring", options));
  if (!runPassPipeline(*module, pipeline, diags)) {
    for (const Diagnostic &d : diags.diagnostics())
      r.error += d.message;
    return r;
  }
  r.ok = true;
  r.text = printModule(*module);
  return r;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("shardlab-context-ring: C calls a direction, the keys passed on") {
  const Ring r = rewrite(kAttention);
  REQUIRE_MESSAGE(r.ok, r.error);
  // Each call a manual computation over "context" alone, on 128-token
  // chunks: 4 forward and 4 backward calls.
  CHECK(count(r.text, "sdy.manual_computation") == 2);
  CHECK(count(r.text, "manual_axes={\"context\"}") == 2);
  CHECK(count(r.text, "@__cudnn$fmhaSoftmax(") == 4);
  CHECK(count(r.text, "@__cudnn$fmhaSoftmaxBackward(") == 4);
  CHECK(count(r.text, "tensor<2x128x4x32xbf16>") > 0);
  CHECK(r.text.find("tensor<2x512x4x32xbf16>, tensor<2x512x4x32xbf16>, "
                    "tensor<2x512x4x32xbf16>) -> (tensor<2x512x4x32xbf16>, "
                    "tensor<2x4x512xf32>)") != std::string::npos);
  // Forward: k and v passed on 3 times (6); backward: k and v 3 times,
  // dK and dV 3 times and once more home (14).
  CHECK(count(r.text, "stablehlo.collective_permute") == 20);
  // Device i to the next along "context" (the mesh is data-major: i = 4 d +
  // c), data fixed.
  CHECK(r.text.find("[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], "
                    "[7, 4]]") != std::string::npos);
  // The rule takes the local factor sizes; the forward merges 3 times.
  CHECK(r.text.find("j=128, k=4, l=32, m=128") != std::string::npos);
  CHECK(count(r.text, "stablehlo.log") == 3);
  // Every permute has a channel of its own.
  CHECK(r.text.find("handle = 20,") != std::string::npos);
}

TEST_CASE("shardlab-context-ring: errors name the call and the reason") {
  SUBCASE("no such axis") {
    const Ring r = rewrite(kAttention, "axis=seq");
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("no mesh has an axis \"seq\"") != std::string::npos);
  }
  SUBCASE("a sequence that does not divide") {
    const Ring r =
        rewrite(replaced(kAttention, "\"context\"=4", "\"context\"=3"), "");
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("sequence of 512 does not divide into 3 chunks") !=
          std::string::npos);
  }
  SUBCASE("the workspace used") {
    const std::string used = R"(
sdy.mesh @mesh = <["context"=2]>
func.func @main(%q: tensor<1x512x4x32xbf16>) -> tensor<1xui8> {
  %f:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %q, %q) : (tensor<1x512x4x32xbf16>, tensor<1x512x4x32xbf16>, tensor<1x512x4x32xbf16>) -> (tensor<1x512x4x32xbf16>, tensor<1x4x512xf32>, tensor<1xui8>)
  return %f#2 : tensor<1xui8>
})";
    const Ring r = rewrite(used);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("workspace result is used") != std::string::npos);
  }
  SUBCASE("not the BTNH layout") {
    const std::string flat = R"(
sdy.mesh @mesh = <["context"=2]>
func.func @main(%q: tensor<512x32xbf16>) -> tensor<512x32xbf16> {
  %f:2 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %q, %q) : (tensor<512x32xbf16>, tensor<512x32xbf16>, tensor<512x32xbf16>) -> (tensor<512x32xbf16>, tensor<1xui8>)
  return %f#0 : tensor<512x32xbf16>
})";
    const Ring r = rewrite(flat);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("not in the BTNH layout") != std::string::npos);
  }
  SUBCASE("no fused attention: nothing to do") {
    const Ring r = rewrite(R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})");
    CHECK(r.ok);
  }
}
