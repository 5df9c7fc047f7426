// shardlab-recompute on a step worked out by hand: 4 layers y = tanh(h W)
// (weights [4, 64, 64], h [16, 64]); the forward loop saves each layer's
// input h, the backward recomputes a = h W and t = tanh(a), then
// dt = g (1 - t t), dW = h^T dt, dh = dt W^T. What the backward reads of the
// recomputation is t (for 1 - t t); t is computed from the GEMM's a.
#include "shardlab/cost/perf_table.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/schedule/pipeline.h"
#include "shardlab/text/text.h"

#include "hand_table.h"
#include "text_edit.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
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

// kStep as a module saving t as well, written (as a generated step may be)
// by a second tanh that repeats the one the forward carries.
const char *kRepeatedSave = R"(
func.func @main(%w: tensor<4x64x64xf32>, %x: tensor<16x64xf32>) -> tensor<4x64x64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<4x64x64xf32>
  %s0 = stablehlo.constant dense<0.0> : tensor<4x16x64xf32>
  %fw:4 = stablehlo.while(%i = %c0, %h = %x, %st = %s0, %sv = %s0) : tensor<i32>, tensor<16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>
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
    %t_again = stablehlo.tanh %a : tensor<16x64xf32>
    %tr = stablehlo.reshape %t_again : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
    %sv2 = stablehlo.dynamic_update_slice %sv, %tr, %i, %c0, %c0 : (tensor<4x16x64xf32>, tensor<1x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x16x64xf32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %t, %st2, %sv2 : tensor<i32>, tensor<16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>
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
    %bts = stablehlo.dynamic_slice %fw#3, %j, %c0, %c0, sizes = [1, 16, 64] : (tensor<4x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
    %bt = stablehlo.reshape %bts : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
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

TEST_CASE("Recompute: a saved value whose op repeats another") {
  // The pass merges repeated ops before it looks for the stacks: a stack
  // found first would name the erased repeat, and the backward would read
  // a value no op defines (the verifier crashed on it).
  for (const char *policy : {"full", "selective", "none"}) {
    CAPTURE(policy);
    const Rewritten r = rewrite(kRepeatedSave, policy);
    REQUIRE_MESSAGE(r.ok, r.error);
    const Rewritten plain = rewrite(kStep, policy);
    REQUIRE(plain.ok);
    // The same step as kStep's, whatever the module saved.
    CHECK(r.forward_stacks == plain.forward_stacks);
    CHECK(r.backward_gemms == plain.backward_gemms);
    CHECK(r.backward_tanh == plain.backward_tanh);
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

namespace {

// kStep at a size where the kernels' bytes and GEMMs dominate: layers of
// [1024, 1024] f32, h of [4096, 1024] f32.
std::string scaledStep() {
  return test::replacedAll(kStep, {{"64x64", "1024x1024"},
                                   {"16x64", "4096x1024"},
                                   {"[1, 64, 64]", "[1, 1024, 1024]"},
                                   {"[1, 16, 64]", "[1, 4096, 1024]"}});
}

constexpr double kGemmRate = 1e14; // FLOP/s, every shape

struct Estimated {
  schedule::PipelineResult result;
  /// What is live at the peak: each buffer's defining op (its name up to
  /// the first '@') -> bytes, summed.
  std::map<std::string, int64_t> at_peak;
};

Estimated estimate(const cost::PerfTable &table, const std::string &policy) {
  schedule::TargetOptions target;
  target.table = &table;
  target.recompute = policy;
  Estimated e;
  e.result = schedule::runSchedulePipeline(
      scaledStep(), *schedule::pipelineOptionsFor(target));
  REQUIRE_MESSAGE(e.result.ok, e.result.error);
  for (const schedule::LiveBuffer &b : e.result.schedule.peak_live) {
    const std::string &name = e.result.program.graph.node(b.node).name;
    e.at_peak[name.substr(0, name.find('@'))] += b.bytes;
  }
  return e;
}

} // namespace

TEST_CASE("Recompute: the step's time and peak memory by hand") {
  test::HandTable hand(1);
  hand.gemms({1024, 4096}, "f32", kGemmRate);
  Result<cost::PerfTable> table = cost::parsePerfTable(hand.json());
  REQUIRE(table);
  const Estimated none = estimate(*table, "none"),
                  selective = estimate(*table, "selective"),
                  full = estimate(*table, "full");
  const schedule::PipelineOptions options =
      *schedule::pipelineOptionsFor(schedule::TargetOptions{});
  const cost::HardwarePreset &hw = options.program.hardware;
  // Every kernel but a GEMM moves its bytes at HBM speed and pays a
  // launch. X: h [4096, 1024] f32 (16 MiB); W: a layer [1024, 1024] (4 MiB).
  const auto kernel = [&](double bytes) {
    return bytes / hw.hbm_bytes_per_s * 1e6 + hw.kernel_launch_us;
  };
  const double X = 4096.0 * 1024 * 4, W = 1024.0 * 1024 * 4;
  const double gemm = 2.0 * 4096 * 1024 * 1024 / kGemmRate * 1e6;
  // Full, a layer forward: h saved in place (X read, X written), its
  // weight sliced, a = h W, t = tanh(a), the counter. Backward: h and the
  // weight sliced back, a = h W again, dt = g (1 - tanh(a)^2) in one
  // kernel (reads a and g, writes dt), dW = h^T dt and g' = dt W^T, the
  // counter, dW written in place. (Left out: the elementwise arithmetic,
  // a few FLOPs an element at the peak, under 0.1%.)
  const double forward = kernel(2 * X) + kernel(2 * W) + gemm + kernel(2 * X) +
                         hw.kernel_launch_us;
  const double backward = kernel(2 * X) + kernel(2 * W) + gemm + kernel(3 * X) +
                          2 * gemm + hw.kernel_launch_us + kernel(2 * W);
  const schedule::Schedule &f = full.result.schedule;
  CHECK(f.compute_us ==
        doctest::Approx(4 * (forward + backward)).epsilon(1e-3));
  CHECK(f.step_time_us == doctest::Approx(f.compute_us).epsilon(1e-9));
  // None saves t too (one more in-place update a layer forward) and reads
  // it back inside the backward's kernel instead of recomputing a: one
  // GEMM a layer less, one update more.
  const schedule::Schedule &n = none.result.schedule;
  CHECK(f.compute_us - n.compute_us ==
        doctest::Approx(4 * (gemm - kernel(2 * X))).epsilon(1e-3));
  // Selective saves the GEMM's a and recomputes tanh inside that kernel,
  // which reads a where none reads t: the same bytes, the same time.
  CHECK(selective.result.schedule.compute_us ==
        doctest::Approx(n.compute_us).epsilon(1e-4));

  // Full's peak, in the backward's second layer, while dt is computed: the
  // parameters w and x (2 X); the saved inputs [4, 4096, 1024] (4 X, the
  // zero stack they were written into in place) and the gradients'
  // accumulator (X, likewise); the slices of h (X) and of the weight (W);
  // the recomputed a (X), dt (X), and g (X: the previous layer's g'); and
  // three 4-byte counters and constants.
  CHECK(f.parameter_bytes == int64_t(2 * X));
  CHECK(full.at_peak == std::map<std::string, int64_t>{
                            {"stablehlo.constant", int64_t(5 * X) + 12},
                            {"stablehlo.dynamic_slice", int64_t(X + W)},
                            {"stablehlo.dot_general", int64_t(2 * X)},
                            {"stablehlo.multiply", int64_t(X)},
                            {"stablehlo.add", 4}});
  CHECK(f.peak_memory_bytes == int64_t(2 * X + 5 * X + X + W + 3 * X) + 16);
  // None's peak is at the same point, with the stack of t (4 X) where
  // full has the recomputed a (X): 3 X more. Both stacks start from one
  // zero constant (the lowering merges equal constants): h's keeps its
  // buffer, t's is a copy, as XLA's copy insertion gives each element of
  // a loop's state a buffer of its own.
  CHECK(none.at_peak == std::map<std::string, int64_t>{
                            {"stablehlo.constant", int64_t(5 * X) + 12},
                            {"stablehlo.dynamic_update_slice", int64_t(4 * X)},
                            {"stablehlo.dynamic_slice", int64_t(X + W)},
                            {"stablehlo.dot_general", int64_t(X)},
                            {"stablehlo.multiply", int64_t(X)},
                            {"stablehlo.add", 4}});
  CHECK(n.peak_memory_bytes - f.peak_memory_bytes == int64_t(3 * X));
  // Selective saves a instead of t: the same bytes.
  CHECK(selective.result.schedule.peak_memory_bytes == n.peak_memory_bytes);
  // Every buffer of the account adds up to the peak.
  for (const Estimated *e : {&none, &selective, &full}) {
    const schedule::Schedule &s = e->result.schedule;
    int64_t live = 0;
    for (const schedule::LiveBuffer &b : s.peak_live)
      live += b.bytes;
    CHECK(s.parameter_bytes + live == s.peak_memory_bytes);
  }
}
