// shardlab-context-ring (passes/strategy/context_ring.cpp): the ring it
// writes for a fused attention call, counted by hand, and its errors.
#include "shardlab/interpreter/interpreter.h"
#include "shardlab/partition_check/partition_check.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include "text_edit.h"

#include <doctest/doctest.h>

#include <cmath>
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
    const Ring r = rewrite(
        test::replacedOnce(kAttention, "\"context\"=4", "\"context\"=3"), "");
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

// ---------------------------------------------------------------------------
// The ring's values against the call's: the interpreter runs cuDNN's fused
// attention as the attention it fuses (interpreter/fused_attention.cpp),
// and a manual computation on every device of its mesh with the
// collectives between them. f32, so the merge's rounding is the only
// difference.
namespace {

std::string attentionStep(const std::string &mask) {
  const std::string t = "tensor<2x64x4x8xf32>", st = "tensor<2x4x64xf32>";
  const std::string config =
      "backend_config = \"{\\\"cudnn_fmha_backend_config\\\": "
      "{\\\"mask_type\\\": \\\"" +
      mask + "\\\"}}\"";
  return "sdy.mesh @mesh = <[\"context\"=4]>\n"
         "func.func @main(%q: " +
         t + ", %k: " + t + ", %v: " + t + ", %do: " + t + ") -> (" + t + ", " +
         st + ", " + t + ", " + t + ", " + t +
         ") {\n"
         "  %f:3 = stablehlo.custom_call @\"__cudnn$fmhaSoftmax\"(%q, %k, "
         "%v) {" +
         config + "} : (" + t + ", " + t + ", " + t + ") -> (" + t + ", " + st +
         ", tensor<1xui8>)\n"
         "  %b:4 = stablehlo.custom_call @\"__cudnn$fmhaSoftmaxBackward\"("
         "%q, %k, %v, %f#1, %do, %f#0) {" +
         config + "} : (" + t + ", " + t + ", " + t + ", " + st + ", " + t +
         ", " + t + ") -> (" + t + ", " + t + ", " + t +
         ", tensor<1xui8>)\n"
         "  return %f#0, %f#1, %b#0, %b#1, %b#2 : " +
         t + ", " + st + ", " + t + ", " + t + ", " + t + "\n}\n";
}

// The entry's results on fixed pseudo-random inputs in [-1, 1).
std::vector<interpreter::Tensor> runStep(const std::string &text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  Block &body = module->mainFunc()->region(0).front();
  std::vector<interpreter::Tensor> args;
  uint64_t state = 12345;
  for (size_t i = 0; i < body.numArguments(); ++i) {
    interpreter::Tensor t = interpreter::Tensor::zeros(body.argument(i)->type);
    for (int64_t e = 0; e < t.size(); ++e) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      t.setReal(e, double(state >> 11) / double(1ULL << 53) * 2 - 1);
    }
    args.push_back(std::move(t));
  }
  interpreter::RunResult r = interpreter::run(*module, args);
  REQUIRE_MESSAGE(r.ok, r.error);
  return r.results;
}

// The largest difference between two runs' results, relative to the
// largest magnitude of each result.
double largestDifference(const std::vector<interpreter::Tensor> &a,
                         const std::vector<interpreter::Tensor> &b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t r = 0; r < a.size(); ++r) {
    REQUIRE(a[r].size() == b[r].size());
    double scale = 1e-30, diff = 0;
    for (int64_t i = 0; i < a[r].size(); ++i) {
      scale = std::max(scale, std::fabs(a[r].real(i)));
      diff = std::max(diff, std::fabs(a[r].real(i) - b[r].real(i)));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

} // namespace

TEST_CASE("shardlab-context-ring: the ring computes what the call does") {
  const std::string plain = attentionStep("NO_MASK");
  const Ring ring = rewrite(plain);
  REQUIRE_MESSAGE(ring.ok, ring.error);
  REQUIRE(ring.text.find("collective_permute") != std::string::npos);
  // Forward o and statistics, backward dq, dk, dv: the same to f32's
  // rounding (the chunks merged in another order).
  const double ring_difference =
      largestDifference(runStep(plain), runStep(ring.text));
  MESSAGE("ring vs call: " << ring_difference);
  CHECK(ring_difference < 1e-5);
  // And the ring partitioned on 4 simulated devices computes what its
  // manual computation does.
  const partition_check::Outcome on_devices =
      partition_check::checkPartitioned(ring.text, {});
  CHECK_MESSAGE(on_devices.status == partition_check::Status::Match,
                on_devices.message);

  SUBCASE("the check has teeth: a causal ring's values are not the call's") {
    // Each chunk's call masks by its own positions, so a causal ring costs
    // what a load-balanced one does but does not compute causal attention.
    const std::string causal = attentionStep("CAUSAL");
    const Ring causal_ring = rewrite(causal);
    REQUIRE(causal_ring.ok);
    const double causal_difference =
        largestDifference(runStep(causal), runStep(causal_ring.text));
    MESSAGE("causal ring vs call: " << causal_difference);
    CHECK(causal_difference > 0.01);
  }
}

// The interpreter's fused attention against the attention it fuses, each
// checked against something it did not write: the forward against the
// same attention in StableHLO ops (two dot_generals and a softmax, ops the
// interpreter runs to the values JAX computed in the corpus), the backward
// against finite differences of the forward (f64, central, h = 1e-6).
namespace {

constexpr const char *kForwardTwice = R"(
func.func @main(%q: tensor<1x6x2x4xf64>, %k: tensor<1x5x2x4xf64>, %v: tensor<1x5x2x4xf64>) -> (tensor<1x6x2x4xf64>, tensor<1x2x6xf64>, tensor<1x6x2x4xf64>, tensor<1x2x6xf64>) {
  %f:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"NO_MASK\", \"fmha_scale\": 0.5}}"} : (tensor<1x6x2x4xf64>, tensor<1x5x2x4xf64>, tensor<1x5x2x4xf64>) -> (tensor<1x6x2x4xf64>, tensor<1x2x6xf64>, tensor<1xui8>)
  %s = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<1x6x2x4xf64>, tensor<1x5x2x4xf64>) -> tensor<1x2x6x5xf64>
  %half = stablehlo.constant dense<0.5> : tensor<1x2x6x5xf64>
  %x = stablehlo.multiply %s, %half : tensor<1x2x6x5xf64>
  %ninf = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<1x2x6x5xf64>, tensor<f64>) -> tensor<1x2x6xf64>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<1x2x6xf64>) -> tensor<1x2x6x5xf64>
  %xm = stablehlo.subtract %x, %mb : tensor<1x2x6x5xf64>
  %e = stablehlo.exponential %xm : tensor<1x2x6x5xf64>
  %zero = stablehlo.constant dense<0.0> : tensor<f64>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<1x2x6x5xf64>, tensor<f64>) -> tensor<1x2x6xf64>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0, 1, 2] : (tensor<1x2x6xf64>) -> tensor<1x2x6x5xf64>
  %p = stablehlo.divide %e, %sb : tensor<1x2x6x5xf64>
  %o = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] : (tensor<1x2x6x5xf64>, tensor<1x5x2x4xf64>) -> tensor<1x2x6x4xf64>
  %ot = stablehlo.transpose %o, dims = [0, 2, 1, 3] : (tensor<1x2x6x4xf64>) -> tensor<1x6x2x4xf64>
  %logsum = stablehlo.log %sum : tensor<1x2x6xf64>
  %l = stablehlo.add %m, %logsum : tensor<1x2x6xf64>
  return %f#0, %f#1, %ot, %l : tensor<1x6x2x4xf64>, tensor<1x2x6xf64>, tensor<1x6x2x4xf64>, tensor<1x2x6xf64>
})";

constexpr const char *kBackward = R"(
func.func @main(%q: tensor<1x6x2x4xf64>, %k: tensor<1x5x2x4xf64>, %v: tensor<1x5x2x4xf64>, %do: tensor<1x6x2x4xf64>) -> (tensor<1x6x2x4xf64>, tensor<1x6x2x4xf64>, tensor<1x5x2x4xf64>, tensor<1x5x2x4xf64>) {
  %f:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"CAUSAL\"}}"} : (tensor<1x6x2x4xf64>, tensor<1x5x2x4xf64>, tensor<1x5x2x4xf64>) -> (tensor<1x6x2x4xf64>, tensor<1x2x6xf64>, tensor<1xui8>)
  %b:4 = stablehlo.custom_call @"__cudnn$fmhaSoftmaxBackward"(%q, %k, %v, %f#1, %do, %f#0) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"CAUSAL\"}}"} : (tensor<1x6x2x4xf64>, tensor<1x5x2x4xf64>, tensor<1x5x2x4xf64>, tensor<1x2x6xf64>, tensor<1x6x2x4xf64>, tensor<1x6x2x4xf64>) -> (tensor<1x6x2x4xf64>, tensor<1x5x2x4xf64>, tensor<1x5x2x4xf64>, tensor<1xui8>)
  return %f#0, %b#0, %b#1, %b#2 : tensor<1x6x2x4xf64>, tensor<1x6x2x4xf64>, tensor<1x5x2x4xf64>, tensor<1x5x2x4xf64>
})";

std::vector<interpreter::Tensor> randomArgs(Module &module) {
  Block &body = module.mainFunc()->region(0).front();
  std::vector<interpreter::Tensor> args;
  uint64_t state = 99;
  for (size_t i = 0; i < body.numArguments(); ++i) {
    interpreter::Tensor t = interpreter::Tensor::zeros(body.argument(i)->type);
    for (int64_t e = 0; e < t.size(); ++e) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      t.setReal(e, double(state >> 11) / double(1ULL << 53) * 2 - 1);
    }
    args.push_back(std::move(t));
  }
  return args;
}

} // namespace

TEST_CASE("The interpreter's fused attention: the forward as StableHLO ops "
          "compute it, the backward as finite differences") {
  DiagnosticEngine diags;
  auto twice = parseModule(kForwardTwice, diags);
  REQUIRE(twice);
  interpreter::RunResult f = interpreter::run(*twice, randomArgs(*twice));
  REQUIRE_MESSAGE(f.ok, f.error);
  CHECK(largestDifference({f.results[0], f.results[1]},
                          {f.results[2], f.results[3]}) < 1e-12);

  // L = sum(dO * o) as a function of q, k and v: its gradient is what the
  // backward returns (dq, dk, dv), causal mask, k and v shorter than q.
  auto module = parseModule(kBackward, diags);
  REQUIRE(module);
  std::vector<interpreter::Tensor> args = randomArgs(*module);
  interpreter::RunResult at = interpreter::run(*module, args);
  REQUIRE_MESSAGE(at.ok, at.error);
  auto loss = [&](const std::vector<interpreter::Tensor> &x) {
    interpreter::RunResult r = interpreter::run(*module, x);
    REQUIRE(r.ok);
    double sum = 0;
    for (int64_t i = 0; i < r.results[0].size(); ++i)
      sum += r.results[0].real(i) * x[3].real(i);
    return sum;
  };
  const double h = 1e-6;
  double worst = 0;
  for (size_t input = 0; input < 3; ++input)
    for (int64_t e = 0; e < args[input].size(); e += 3) {
      std::vector<interpreter::Tensor> up = args, down = args;
      up[input].setReal(e, args[input].real(e) + h);
      down[input].setReal(e, args[input].real(e) - h);
      const double numeric = (loss(up) - loss(down)) / (2 * h);
      worst =
          std::max(worst, std::fabs(numeric - at.results[1 + input].real(e)));
    }
  MESSAGE("finite differences: " << worst);
  CHECK(worst < 1e-6);
}
