// shardlab-recompute on a step worked out by hand: 4 layers y = tanh(h W)
// (weights [4, 64, 64], h [16, 64]); the forward loop saves each layer's
// input h, the backward recomputes a = h W and t = tanh(a), then
// dt = g (1 - t t), dW = h^T dt, dh = dt W^T. What the backward reads of the
// recomputation is t (for 1 - t t); t is computed from the GEMM's a.
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

const char *kStep = R"(
func.func @main(%w: tensor<4x64x64xf32>, %x: tensor<16x64xf32>) -> tensor<4x64x64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<4x64x64xf32>
  %s0 = stablehlo.constant dense<0.0> : tensor<4x16x64xf32>
  %fw:3 = stablehlo.while(%i = %c0, %h = %x, %st = %s0) : tensor<i32>, tensor<16x64xf32>, tensor<4x16x64xf32>
  cond {
    %flt = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %flt : tensor<i1>
  } do {
    %ws = stablehlo.dynamic_slice %w, %i, %c0, %c0, sizes = [1, 64, 64] : (tensor<4x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
    %wi = stablehlo.reshape %ws : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
    %hr = stablehlo.reshape %h : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
    %st2 = stablehlo.dynamic_update_slice %st, %hr, %i, %c0, %c0 : (tensor<4x16x64xf32>, tensor<1x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x16x64xf32>
    %a = stablehlo.dot_general %h, %wi, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %t = stablehlo.tanh %a : tensor<16x64xf32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %t, %st2 : tensor<i32>, tensor<16x64xf32>, tensor<4x16x64xf32>
  }
  %bw:3 = stablehlo.while(%k = %c0, %g = %fw#1, %dw = %z) : tensor<i32>, tensor<16x64xf32>, tensor<4x64x64xf32>
  cond {
    %blt = stablehlo.compare LT, %k, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %blt : tensor<i1>
  } do {
    %j = stablehlo.subtract %c3, %k : tensor<i32>
    %hs = stablehlo.dynamic_slice %fw#2, %j, %c0, %c0, sizes = [1, 16, 64] : (tensor<4x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
    %hk = stablehlo.reshape %hs : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
    %wks = stablehlo.dynamic_slice %w, %j, %c0, %c0, sizes = [1, 64, 64] : (tensor<4x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
    %wk = stablehlo.reshape %wks : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
    %ba = stablehlo.dot_general %hk, %wk, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %bt = stablehlo.tanh %ba : tensor<16x64xf32>
    %tt = stablehlo.multiply %bt, %bt : tensor<16x64xf32>
    %one = stablehlo.constant dense<1.0> : tensor<16x64xf32>
    %d = stablehlo.subtract %one, %tt : tensor<16x64xf32>
    %dt = stablehlo.multiply %g, %d : tensor<16x64xf32>
    %dwk = stablehlo.dot_general %hk, %dt, contracting_dims = [0] x [0] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
    %dwr = stablehlo.reshape %dwk : (tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %dw2 = stablehlo.dynamic_update_slice %dw, %dwr, %j, %c0, %c0 : (tensor<4x64x64xf32>, tensor<1x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x64x64xf32>
    %g2 = stablehlo.dot_general %dt, %wk, contracting_dims = [1] x [1] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %k2 = stablehlo.add %k, %c1 : tensor<i32>
    stablehlo.return %k2, %g2, %dw2 : tensor<i32>, tensor<16x64xf32>, tensor<4x64x64xf32>
  }
  return %bw#2 : tensor<4x64x64xf32>
}
)";

// What a policy made of the step: the loops' carried values and what
// their bodies hold.
struct Rewritten {
  bool ok = false;
  std::string error, summary;
  size_t forward_carried = 0;
  int backward_gemms = 0, backward_tanh = 0;
  std::vector<std::vector<int64_t>> forward_stacks; ///< F's results [4, ...]
};

Rewritten rewrite(const std::string &text, const std::string &policy) {
  Rewritten r;
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  PassPipeline pipeline;
  REQUIRE(appendPass(pipeline, "shardlab-recompute", "policy=" + policy));
  if (!runPassPipeline(*module, pipeline, diags)) {
    for (const Diagnostic &d : diags.diagnostics())
      r.error += d.message;
    return r;
  }
  r.ok = true;
  const Attr *said = module->op().attrs.get("shardlab.recompute");
  REQUIRE(said);
  r.summary = said->str();
  std::vector<Operation *> loops;
  for (Operation &op : module->mainFunc()->region(0).front())
    if (op.is("stablehlo.while"))
      loops.push_back(&op);
  REQUIRE(loops.size() == 2);
  r.forward_carried = loops[0]->numResults();
  for (size_t i = 0; i < loops[0]->numResults(); ++i)
    if (loops[0]->result(i)->type->rank() == 3)
      r.forward_stacks.push_back(loops[0]->result(i)->type->shape);
  for (Operation &op : loops[1]->region(1).front()) {
    r.backward_gemms += op.is("stablehlo.dot_general");
    r.backward_tanh += op.is("stablehlo.tanh");
  }
  return r;
}

} // namespace

TEST_CASE("Recompute: each policy saves and recomputes what it says") {
  SUBCASE("full: as written, the layer input alone saved") {
    const Rewritten r = rewrite(kStep, "full");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.forward_carried == 3);
    CHECK(r.backward_gemms == 3); // a = h W again, dW, dh
    CHECK(r.backward_tanh == 1);
    CHECK(r.summary.find("saves 1 value per layer") != std::string::npos);
  }
  SUBCASE("none: t saved, nothing of the layer recomputed") {
    const Rewritten r = rewrite(kStep, "none");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.forward_carried == 4);
    CHECK(r.forward_stacks ==
          std::vector<std::vector<int64_t>>{{4, 16, 64}, {4, 16, 64}});
    CHECK(r.backward_gemms == 2); // dW, dh
    CHECK(r.backward_tanh == 0);
    CHECK(r.summary.find("none: the forward layer loop saves 2 values per "
                         "layer for the backward (the module saved 1)") !=
          std::string::npos);
  }
  SUBCASE("selective: the GEMM's a saved, tanh recomputed from it") {
    const Rewritten r = rewrite(kStep, "selective");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.forward_carried == 4);
    CHECK(r.backward_gemms == 2);
    CHECK(r.backward_tanh == 1);
  }
  SUBCASE("back to full from none: the saved t recomputed again") {
    const Rewritten none = rewrite(kStep, "none");
    REQUIRE(none.ok);
    DiagnosticEngine diags;
    auto module = parseModule(kStep, diags);
    PassPipeline twice;
    REQUIRE(appendPass(twice, "shardlab-recompute", "policy=none"));
    REQUIRE(runPassPipeline(*module, twice, diags));
    const Rewritten full = rewrite(printModule(*module), "full");
    REQUIRE_MESSAGE(full.ok, full.error);
    CHECK(full.forward_carried == 3);
    CHECK(full.backward_gemms == 3);
    CHECK(full.backward_tanh == 1);
  }
}

TEST_CASE("Recompute: a step it cannot rewrite says why") {
  const std::string flat = R"(
func.func @main(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
)";
  const Rewritten r = rewrite(flat, "none");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("no loop over stacked layers") != std::string::npos);
  // The forward loop alone, its stack returned: no backward reads it.
  std::string forward_only = kStep;
  forward_only.replace(forward_only.find("return %bw#2 : tensor<4x64x64xf32>"),
                       std::string("return %bw#2 : tensor<4x64x64xf32>").size(),
                       "return %fw#2 : tensor<4x16x64xf32>");
  forward_only.replace(forward_only.find("-> tensor<4x64x64xf32> {"),
                       std::string("-> tensor<4x64x64xf32> {").size(),
                       "-> tensor<4x16x64xf32> {");
  const Rewritten f = rewrite(forward_only, "none");
  CHECK_FALSE(f.ok);
  CHECK(f.error.find("no forward and backward pass") != std::string::npos);
}
