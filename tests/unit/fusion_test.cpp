// The kernels the fusion planner forms, checked against answers worked by
// hand from the rules in fusion/kernels.h: which ops share a kernel, what
// it reads and writes at its boundary, and what the schedule then costs.
#include "shardlab/fusion/kernels.h"
#include "shardlab/schedule/program.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace shardlab;

namespace {

std::unique_ptr<Module> parse(const char *text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  return module;
}

Block &mainBody(Module &module) {
  Operation *main = module.lookupSymbol("main");
  REQUIRE(main);
  return main->region(0).front();
}

bool isComputeOp(const Operation &op) {
  return !op.is("func.return") && !op.is("stablehlo.while");
}

std::vector<fusion::Kernel> plan(Module &module, bool enabled = true) {
  fusion::FusionOptions options;
  options.enabled = enabled;
  return fusion::planKernels(mainBody(module), options, isComputeOp);
}

std::vector<std::string> memberNames(const fusion::Kernel &kernel) {
  std::vector<std::string> names;
  for (const Operation *m : kernel.members)
    names.emplace_back(m->name);
  return names;
}

// A GPT MLP block on one device: 256 tokens, hidden 1024, 4096 wide, f32.
const char *kMlp = R"(
func.func @main(%x: tensor<256x1024xf32>, %w1: tensor<1024x4096xf32>, %b1: tensor<4096xf32>, %w2: tensor<4096x1024xf32>) -> tensor<256x1024xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<256x1024xf32>, tensor<1024x4096xf32>) -> tensor<256x4096xf32>
  %bb = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<4096xf32>) -> tensor<256x4096xf32>
  %hb = stablehlo.add %h, %bb : tensor<256x4096xf32>
  %c = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<256x4096xf32>
  %t = stablehlo.tanh %hb : tensor<256x4096xf32>
  %m = stablehlo.multiply %t, %cb : tensor<256x4096xf32>
  %g = stablehlo.add %m, %cb : tensor<256x4096xf32>
  %gx = stablehlo.multiply %g, %hb : tensor<256x4096xf32>
  %y = stablehlo.dot_general %gx, %w2, contracting_dims = [1] x [0] : (tensor<256x4096xf32>, tensor<4096x1024xf32>) -> tensor<256x1024xf32>
  return %y : tensor<256x1024xf32>
}
)";

constexpr int64_t kActivation = 256 * 4096 * 4; // one 256x4096 f32 tensor

} // namespace

TEST_CASE("Fusion: a GPT MLP block is a GEMM with its bias, one loop kernel "
          "and a GEMM") {
  auto module = parse(kMlp);
  const std::vector<fusion::Kernel> kernels = plan(*module);
  REQUIRE(kernels.size() == 3);

  const fusion::Kernel &up = kernels[0];
  CHECK((up.kind == fusion::KernelKind::Gemm));
  CHECK(memberNames(up) == std::vector<std::string>{
                               "stablehlo.dot_general",
                               "stablehlo.broadcast_in_dim", "stablehlo.add"});
  CHECK(up.root->is("stablehlo.add"));
  // x, w1 and the bias vector in; the biased activation out.
  CHECK(up.bytes_read == (256 * 1024 + 1024 * 4096 + 4096) * 4);
  CHECK(up.bytes_written == kActivation);

  const fusion::Kernel &gelu = kernels[1];
  CHECK((gelu.kind == fusion::KernelKind::Loop));
  // The scalar constant and its broadcast are computed in the kernel; the
  // activation is read once although three members use it.
  CHECK(gelu.members.size() == 6);
  CHECK(gelu.bytes_read == kActivation);
  CHECK(gelu.bytes_written == kActivation);
  CHECK(gelu.flops == 5.0 * 256 * 4096); // broadcast, tanh, mul, add, mul

  const fusion::Kernel &down = kernels[2];
  CHECK((down.kind == fusion::KernelKind::Gemm));
  CHECK(memberNames(down) == std::vector<std::string>{"stablehlo.dot_general"});
  CHECK(down.bytes_written == 256 * 1024 * 4);
}

TEST_CASE("Fusion off: every op is a kernel reading all its operands") {
  auto module = parse(kMlp);
  const std::vector<fusion::Kernel> kernels = plan(*module, false);
  CHECK(kernels.size() == 10);
  for (const fusion::Kernel &kernel : kernels)
    CHECK(kernel.members.size() == 1);
}

TEST_CASE("Fusion: a producer two kernels read is duplicated only when "
          "cheap") {
  auto module = parse(R"(
func.func @main(%a: tensor<32x32xf32>, %s: tensor<f32>) -> (tensor<32xf32>, tensor<32xf32>) {
  %c0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
  %e = stablehlo.exponential %a : tensor<32x32xf32>
  %p = stablehlo.multiply %e, %bs : tensor<32x32xf32>
  %q = stablehlo.add %e, %bs : tensor<32x32xf32>
  %r1 = stablehlo.reduce(%p init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<32x32xf32>, tensor<f32>) -> tensor<32xf32>
  %r2 = stablehlo.reduce(%q init: %c0) applies stablehlo.maximum across dimensions = [1] : (tensor<32x32xf32>, tensor<f32>) -> tensor<32xf32>
  return %r1, %r2 : tensor<32xf32>, tensor<32xf32>
}
)");
  const std::vector<fusion::Kernel> kernels = plan(*module);
  // The exponential feeds two reductions and is not cheap: its own kernel,
  // written once and read by both. The broadcast of %s and the init
  // constant are computed again in each reduction. (The two reductions
  // reduce different dimensions, so they are not siblings of one kernel.)
  REQUIRE(kernels.size() == 3);
  CHECK(kernels[0].root->is("stablehlo.exponential"));
  CHECK(kernels[0].bytes_written == 4096);
  for (int i : {1, 2}) {
    CHECK((kernels[size_t(i)].kind == fusion::KernelKind::Reduction));
    CHECK(kernels[size_t(i)].members.size() == 4);    // c0, bs, p|q, reduce
    CHECK(kernels[size_t(i)].bytes_read == 4096 + 4); // %e and %s
    CHECK(kernels[size_t(i)].bytes_written == 32 * 4);
    // broadcast and p|q: 1024 each; the reduce: 1024 elements reduced.
    CHECK(kernels[size_t(i)].flops == 3 * 1024);
  }
}

TEST_CASE("Fusion: a loop's scalar index arithmetic is recomputed in each "
          "kernel that reads it") {
  auto module = parse(R"(
func.func @main(%w: tensor<8x1024xf32>, %acc: tensor<8x1024xf32>, %t: tensor<i32>, %s: tensor<i32>) -> (tensor<1x1024xf32>, tensor<8x1024xf32>, tensor<i32>) {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %d = stablehlo.subtract %t, %s : tensor<i32>
  %i = stablehlo.remainder %d, %s : tensor<i32>
  %row = stablehlo.dynamic_slice %w, %i, %z, sizes = [1, 1024] : (tensor<8x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1024xf32>
  %e = stablehlo.exponential %row : tensor<1x1024xf32>
  %u = stablehlo.dynamic_update_slice %acc, %e, %i, %z : (tensor<8x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<8x1024xf32>
  %n = stablehlo.add %t, %s : tensor<i32>
  return %row, %u, %n : tensor<1x1024xf32>, tensor<8x1024xf32>, tensor<i32>
}
)");
  const std::vector<fusion::Kernel> kernels = plan(*module);
  // %d and %i feed the slice's kernel and the update's: scalars, computed
  // again in both rather than launched as kernels of their own. %n is
  // returned, so it is written out: a kernel (as XLA's loop counter is).
  REQUIRE(kernels.size() == 3);
  CHECK(kernels[0].root->is("stablehlo.dynamic_slice"));
  CHECK(kernels[1].root->is("stablehlo.dynamic_update_slice"));
  CHECK(kernels[2].root->is("stablehlo.add"));
  for (int k : {0, 1}) {
    const std::vector<std::string> names = memberNames(kernels[size_t(k)]);
    CHECK(std::count(names.begin(), names.end(), "stablehlo.subtract") == 1);
    CHECK(std::count(names.begin(), names.end(), "stablehlo.remainder") == 1);
  }
  // The slice kernel reads one row of %w and the two scalars %t, %s; the
  // update kernel reads the row again (%row is written out: it is
  // returned), never the accumulator.
  CHECK(kernels[0].bytes_read == 1024 * 4 + 4 + 4);
  CHECK(kernels[1].bytes_read == 1024 * 4 + 4 + 4);
  CHECK(kernels[1].bytes_written == 1024 * 4);

  // Were scalars not duplicated, %d and %i would be a kernel of their own
  // (4 kernels); without fusion every op but the constant is one.
  CHECK(plan(*module, false).size() == 7);
}

TEST_CASE("Fusion: softmax's exponential is a second output of its sum's "
          "kernel, when nothing before the sum reads it") {
  auto module = parse(R"(
func.func @main(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %c0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<4x1024xf32>
  %s = stablehlo.reduce(%e init: %c0) applies stablehlo.add across dimensions = [1] : (tensor<4x1024xf32>, tensor<f32>) -> tensor<4xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<4xf32>) -> tensor<4x1024xf32>
  %d = stablehlo.divide %e, %b : tensor<4x1024xf32>
  return %d : tensor<4x1024xf32>
}
)");
  constexpr int64_t kTensor = 4 * 1024 * 4;
  const std::vector<fusion::Kernel> kernels = plan(*module);
  // The sum's kernel computes %e once, writes it and the sums; the divide
  // reads %e back: 2 kernels, 3 tensors of traffic (3 kernels and 4
  // without the second output).
  REQUIRE(kernels.size() == 2);
  CHECK((kernels[0].kind == fusion::KernelKind::Reduction));
  CHECK(memberNames(kernels[0]) ==
        std::vector<std::string>{"stablehlo.constant", "stablehlo.exponential",
                                 "stablehlo.reduce"});
  REQUIRE(kernels[0].extra_outputs.size() == 1);
  CHECK(kernels[0].extra_outputs[0]->is("stablehlo.exponential"));
  // In the schedule a reader of %e alone (%d) waits for the sum's kernel,
  // which writes %e for it, and the node says what the kernel writes.
  {
    auto squares = parse(R"(
func.func @main(%x: tensor<4x1024xf32>) -> (tensor<4x1024xf32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<4x1024xf32>
  %s = stablehlo.reduce(%e init: %c0) applies stablehlo.add across dimensions = [1] : (tensor<4x1024xf32>, tensor<f32>) -> tensor<4xf32>
  %d = stablehlo.multiply %e, %e : tensor<4x1024xf32>
  return %d, %s : tensor<4x1024xf32>, tensor<4xf32>
}
)");
    schedule::ProgramOptions options;
    options.hardware = *cost::findHardwarePreset("h100");
    options.sol = cost::solPlatformDefaults(options.hardware.device_name);
    DiagnosticEngine diags;
    Result<schedule::Program> program =
        schedule::buildProgram(*squares, options, diags);
    REQUIRE(program.ok());
    const schedule::Graph &g = program->graph;
    int64_t sum = -1, square = -1;
    for (int64_t i = 0; i < g.size(); ++i) {
      if (g.node(i).name.rfind("stablehlo.reduce@", 0) == 0)
        sum = i;
      if (g.node(i).name.rfind("stablehlo.multiply@", 0) == 0)
        square = i;
    }
    REQUIRE(sum >= 0);
    REQUIRE(square >= 0);
    REQUIRE(g.node(sum).fusion);
    CHECK(g.node(sum).fusion->second_outputs ==
          std::vector<std::string>{"stablehlo.exponential@4"});
    CHECK(g.node(sum).output_bytes == kTensor + 16);
    bool waits = false;
    for (int64_t e : g.predecessors(square))
      waits = waits || g.edges()[size_t(e)].from == sum;
    CHECK(waits);
  }
  CHECK(kernels[0].bytes_read == kTensor);
  CHECK(kernels[0].bytes_written == kTensor + 16);
  CHECK(kernels[1].root->is("stablehlo.divide"));
  CHECK(kernels[1].bytes_read == kTensor + 16);
  CHECK(kernels[1].bytes_written == kTensor);

  // A reader of %e before the sum: the rule fuses only when every other
  // reader comes after the sum, which can never make a kernel wait for
  // itself (XLA checks for such a cycle; shardlab's test is the stricter
  // one). Here %e stays a kernel of its own. (The transpose iterates over
  // another shape than the sum, so the two are not siblings either.)
  auto before = parse(R"(
func.func @main(%x: tensor<4x1024xf32>) -> (tensor<1024x4xf32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<4x1024xf32>
  %m = stablehlo.transpose %e, dims = [1, 0] : (tensor<4x1024xf32>) -> tensor<1024x4xf32>
  %s = stablehlo.reduce(%e init: %c0) applies stablehlo.add across dimensions = [1] : (tensor<4x1024xf32>, tensor<f32>) -> tensor<4xf32>
  return %m, %s : tensor<1024x4xf32>, tensor<4xf32>
}
)");
  const std::vector<fusion::Kernel> three = plan(*before);
  REQUIRE(three.size() == 3);
  CHECK(three[0].root->is("stablehlo.exponential"));
  CHECK(three[0].extra_outputs.empty());
}

TEST_CASE("Fusion: slices read what they take, updates write in place") {
  auto module = parse(R"(
func.func @main(%cache: tensor<64x1024xf32>, %big: tensor<4096x1024xf32>, %i: tensor<i32>) -> tensor<64x1024xf32> {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %rows = stablehlo.slice %big [0:1, 0:1024] : (tensor<4096x1024xf32>) -> tensor<1x1024xf32>
  %t = stablehlo.tanh %rows : tensor<1x1024xf32>
  %u = stablehlo.dynamic_update_slice %cache, %t, %i, %z : (tensor<64x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<64x1024xf32>
  return %u : tensor<64x1024xf32>
}
)");
  const std::vector<fusion::Kernel> kernels = plan(*module);
  REQUIRE(kernels.size() == 1);
  const fusion::Kernel &k = kernels[0];
  CHECK((k.kind == fusion::KernelKind::InPlace));
  CHECK(k.members.size() == 4);
  // One row of %big, the index; the cache is neither read nor copied.
  CHECK(k.bytes_read == 1024 * 4 + 4);
  CHECK(k.bytes_written == 1024 * 4);
}

TEST_CASE("Fusion: a transpose feeds a GEMM as an operand flag only when it "
          "swaps the minor dimensions") {
  auto module = parse(R"(
func.func @main(%a: tensor<8x64x32xf32>, %b: tensor<8x64x32xf32>) -> (tensor<8x32x32xf32>, tensor<64x8x32xf32>) {
  %at = stablehlo.transpose %a, dims = [0, 2, 1] : (tensor<8x64x32xf32>) -> tensor<8x32x64xf32>
  %d = stablehlo.dot_general %at, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x32x64xf32>, tensor<8x64x32xf32>) -> tensor<8x32x32xf32>
  %bt = stablehlo.transpose %b, dims = [1, 0, 2] : (tensor<8x64x32xf32>) -> tensor<64x8x32xf32>
  return %d, %bt : tensor<8x32x32xf32>, tensor<64x8x32xf32>
}
)");
  const std::vector<fusion::Kernel> kernels = plan(*module);
  REQUIRE(kernels.size() == 2);
  CHECK((kernels[0].kind == fusion::KernelKind::Gemm));
  CHECK(kernels[0].members.size() == 2);
  CHECK(kernels[0].bytes_read == 2 * 8 * 64 * 32 * 4);
  CHECK((kernels[1].kind == fusion::KernelKind::Single)); // a real transpose
}

TEST_CASE("Fusion: the schedule costs a memory-bound chain once, not per "
          "op") {
  // Four elementwise ops on a 64 MiB tensor: unfused, each reads and writes
  // it (8 passes over memory, 4 launches); fused, one read and one write.
  auto module = parse(R"(
func.func @main(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = stablehlo.tanh %x : tensor<4096x4096xf32>
  %1 = stablehlo.exponential %0 : tensor<4096x4096xf32>
  %2 = stablehlo.negate %1 : tensor<4096x4096xf32>
  %3 = stablehlo.abs %2 : tensor<4096x4096xf32>
  return %3 : tensor<4096x4096xf32>
}
)");
  schedule::ProgramOptions options;
  options.hardware = *cost::findHardwarePreset("h100");
  options.sol = cost::solPlatformDefaults(options.hardware.device_name);
  auto stepOf = [&](bool fusion) {
    options.fusion = fusion;
    DiagnosticEngine diags;
    Result<schedule::Program> program =
        schedule::buildProgram(*module, options, diags);
    REQUIRE(program.ok());
    double total = 0;
    for (int64_t i = 0; i < program->graph.size(); ++i)
      total += program->graph.node(i).cost_us;
    return total;
  };
  const double bytes = 4096.0 * 4096 * 4;
  const double pass_us = 1e6 * bytes / options.hardware.hbm_bytes_per_s;
  const double launch = options.hardware.kernel_launch_us;
  // Elementwise FLOPs are far below the memory time (one per element), so
  // exec = memory + 0.05 * compute; the compute term is under 1%.
  CHECK(stepOf(true) == doctest::Approx(2 * pass_us + launch).epsilon(0.01));
  CHECK(stepOf(false) ==
        doctest::Approx(8 * pass_us + 4 * launch).epsilon(0.01));
}

TEST_CASE("Fusion: an accumulator added to a GEMM's product is its C "
          "(beta = 1), when it may be overwritten") {
  // In the loop, %acc (carried, read only by the add) joins the GEMM; the
  // entry's own argument %c (the caller's buffer) does not, nor does %acc2,
  // which the return reads too.
  auto module = parse(R"(
func.func @main(%x: tensor<256x1024xf32>, %g: tensor<256x1024xf32>, %c: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  %d0 = stablehlo.dot_general %x, %g, contracting_dims = [0] x [0] : (tensor<256x1024xf32>, tensor<256x1024xf32>) -> tensor<1024x1024xf32>
  %s0 = stablehlo.add %c, %d0 : tensor<1024x1024xf32>
  %d1 = stablehlo.dot_general %x, %g, contracting_dims = [0] x [0] : (tensor<256x1024xf32>, tensor<256x1024xf32>) -> tensor<1024x1024xf32>
  %acc2 = stablehlo.negate %s0 : tensor<1024x1024xf32>
  %s1 = stablehlo.add %acc2, %d1 : tensor<1024x1024xf32>
  %z = stablehlo.negate %s1 : tensor<1024x1024xf32>
  %d2 = stablehlo.dot_general %x, %g, contracting_dims = [0] x [0] : (tensor<256x1024xf32>, tensor<256x1024xf32>) -> tensor<1024x1024xf32>
  %acc = stablehlo.negate %z : tensor<1024x1024xf32>
  %s2 = stablehlo.add %acc, %d2 : tensor<1024x1024xf32>
  return %s2, %acc2 : tensor<1024x1024xf32>, tensor<1024x1024xf32>
})");
  const std::vector<fusion::Kernel> kernels = plan(*module);
  // The members of the nth GEMM kernel, in program order.
  auto gemm = [&](size_t nth) {
    size_t seen = 0;
    for (const fusion::Kernel &k : kernels)
      if (k.kind == fusion::KernelKind::Gemm && seen++ == nth)
        return memberNames(k);
    return std::vector<std::string>{};
  };
  // %d0 + %c: the entry's argument stays out.
  CHECK(gemm(0) == std::vector<std::string>{"stablehlo.dot_general"});
  // %d1 + %acc2: %acc2 is also returned, so it is not overwritten.
  CHECK(gemm(1) == std::vector<std::string>{"stablehlo.dot_general"});
  // %d2 + %acc: joins the GEMM, which reads %acc as C.
  CHECK(gemm(2) ==
        std::vector<std::string>{"stablehlo.dot_general", "stablehlo.add"});
  const fusion::Kernel &last = [&]() -> const fusion::Kernel & {
    const fusion::Kernel *found = nullptr;
    for (const fusion::Kernel &k : kernels)
      if (k.kind == fusion::KernelKind::Gemm)
        found = &k;
    return *found;
  }();
  CHECK(last.bytes_read == (256 * 1024 * 2 + 1024 * 1024) * 4);
  CHECK(last.bytes_written == 1024 * 1024 * 4);
}

TEST_CASE("Fusion: a GEMM's epilogue scales by a constant, clamps at one and "
          "adds a C to the product itself; a product with another tensor or "
          "a C after a scale is a kernel of its own") {
  // %d0 times %y (a gate, not a constant): a loop kernel. %d1 scaled by 0.5
  // and clamped at 0: cuBLASLt's alpha and ReLU epilogue, one call. %d2
  // scaled, then %acc (overwritable) added: the scale joins, the add does
  // not (kernels.h: a matrix is C only added right on the product, the
  // pattern the rule takes from XLA's FuseMatrixBiasAdd).
  auto module = parse(R"(
func.func @main(%x: tensor<256x1024xf32>, %w: tensor<1024x1024xf32>, %y: tensor<256x1024xf32>) -> (tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>) {
  %d0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<256x1024xf32>, tensor<1024x1024xf32>) -> tensor<256x1024xf32>
  %m0 = stablehlo.multiply %d0, %y : tensor<256x1024xf32>
  %h = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> tensor<256x1024xf32>
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<256x1024xf32>
  %d1 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<256x1024xf32>, tensor<1024x1024xf32>) -> tensor<256x1024xf32>
  %s1 = stablehlo.multiply %d1, %hb : tensor<256x1024xf32>
  %r1 = stablehlo.maximum %s1, %zb : tensor<256x1024xf32>
  %d2 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<256x1024xf32>, tensor<1024x1024xf32>) -> tensor<256x1024xf32>
  %s2 = stablehlo.multiply %d2, %hb : tensor<256x1024xf32>
  %acc = stablehlo.negate %y : tensor<256x1024xf32>
  %t2 = stablehlo.add %s2, %acc : tensor<256x1024xf32>
  return %m0, %r1, %t2 : tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>
})");
  const std::vector<fusion::Kernel> kernels = plan(*module);
  std::vector<std::vector<std::string>> gemms;
  for (const fusion::Kernel &k : kernels)
    if (k.kind == fusion::KernelKind::Gemm) {
      std::vector<std::string> names;
      for (const Operation *m : k.members)
        if (!m->is("stablehlo.constant") &&
            !m->is("stablehlo.broadcast_in_dim"))
          names.emplace_back(m->name);
      gemms.push_back(names);
    }
  CHECK(gemms == std::vector<std::vector<std::string>>{
                     {"stablehlo.dot_general"},
                     {"stablehlo.dot_general", "stablehlo.multiply",
                      "stablehlo.maximum"},
                     {"stablehlo.dot_general", "stablehlo.multiply"}});
}

TEST_CASE("Fusion: the sum of two products is two GEMMs, the second "
          "reading the first's product as its C") {
  // An input gradient through two column-parallel GEMMs (a SwiGLU's gate
  // and up projections): each product is a cuBLAS call of its own; the add
  // joins the first in program order, which reads the other product as C.
  auto module = parse(R"(
func.func @main(%dg: tensor<256x512xf32>, %du: tensor<256x512xf32>, %wg: tensor<1024x512xf32>, %wu: tensor<1024x512xf32>) -> tensor<256x1024xf32> {
  %a = stablehlo.dot_general %dg, %wg, contracting_dims = [1] x [1] : (tensor<256x512xf32>, tensor<1024x512xf32>) -> tensor<256x1024xf32>
  %b = stablehlo.dot_general %du, %wu, contracting_dims = [1] x [1] : (tensor<256x512xf32>, tensor<1024x512xf32>) -> tensor<256x1024xf32>
  %s = stablehlo.add %a, %b : tensor<256x1024xf32>
  return %s : tensor<256x1024xf32>
})");
  const std::vector<fusion::Kernel> kernels = plan(*module);
  std::vector<std::vector<std::string>> gemms;
  for (const fusion::Kernel &k : kernels)
    if (k.kind == fusion::KernelKind::Gemm)
      gemms.push_back(memberNames(k));
  std::sort(gemms.begin(), gemms.end());
  CHECK(gemms == std::vector<std::vector<std::string>>{
                     {"stablehlo.dot_general"},
                     {"stablehlo.dot_general", "stablehlo.add"}});
}

TEST_CASE("Fusion: sibling kernels reading one tensor over one iteration "
          "space are one kernel reading it once") {
  // LayerNorm's bias and scale gradients: both sum over the tokens, both
  // read %dy. XLA's sibling multi-output fusion makes them one kernel.
  auto module = parse(R"(
func.func @main(%dy: tensor<256x1024xf32>, %xhat: tensor<256x1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %c0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %db = stablehlo.reduce(%dy init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %p = stablehlo.multiply %dy, %xhat : tensor<256x1024xf32>
  %dg = stablehlo.reduce(%p init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %n = stablehlo.negate %db : tensor<1024xf32>
  return %n, %dg : tensor<1024xf32>, tensor<1024xf32>
}
)");
  constexpr int64_t kTokens = 256 * 1024 * 4;
  constexpr int64_t kVector = 1024 * 4;
  const std::vector<fusion::Kernel> kernels = plan(*module);
  // By hand: one kernel reads %dy and %xhat (2 tensors, not 3), writes %db
  // and %dg; the negate reads %db. c0 once, though both reductions use it.
  REQUIRE(kernels.size() == 2);
  CHECK((kernels[0].kind == fusion::KernelKind::Reduction));
  CHECK(memberNames(kernels[0]) ==
        std::vector<std::string>{"stablehlo.constant", "stablehlo.reduce",
                                 "stablehlo.multiply", "stablehlo.reduce"});
  CHECK(kernels[0].root->is("stablehlo.reduce"));
  CHECK(kernels[0].root->result(0)->type->shape == std::vector<int64_t>{1024});
  REQUIRE(kernels[0].extra_outputs.size() == 1); // %db, read by the negate
  CHECK(kernels[0].bytes_read == 2 * kTokens);
  CHECK(kernels[0].bytes_written == 2 * kVector);
  // Flops: the multiply's 256 K, each reduction's 256 K elements reduced.
  CHECK(kernels[0].flops == 3.0 * 256 * 1024);
  CHECK(kernels[1].root->is("stablehlo.negate"));

  // In the schedule the negate waits for the one kernel that writes %db.
  schedule::ProgramOptions options;
  options.hardware = *cost::findHardwarePreset("h100");
  options.sol = cost::solPlatformDefaults(options.hardware.device_name);
  DiagnosticEngine diags;
  Result<schedule::Program> program =
      schedule::buildProgram(*module, options, diags);
  REQUIRE(program.ok());
  const schedule::Graph &g = program->graph;
  int64_t fused = -1, negate = -1;
  for (int64_t i = 0; i < g.size(); ++i) {
    if (g.node(i).fusion && g.node(i).fusion->members.size() == 4)
      fused = i;
    if (g.node(i).name.rfind("stablehlo.negate@", 0) == 0)
      negate = i;
  }
  REQUIRE(fused >= 0);
  REQUIRE(negate >= 0);
  CHECK(g.node(fused).bytes_read == 2 * kTokens);
  bool waits = false;
  for (int64_t e : g.predecessors(negate))
    waits = waits || g.edges()[size_t(e)].from == fused;
  CHECK(waits);

  // Off: every op a kernel of its own (the constant too), %dy read twice.
  CHECK(plan(*module, false).size() == 5);
}

TEST_CASE("Fusion: siblings stay apart over different iteration spaces, or "
          "when one kernel would wait for itself") {
  // Sums over different dimensions of the same tensor: XLA does not fuse
  // reductions whose reduced dimensions differ.
  auto across = parse(R"(
func.func @main(%x: tensor<64x128xf32>) -> (tensor<128xf32>, tensor<64xf32>) {
  %c0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %a = stablehlo.reduce(%x init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<64x128xf32>, tensor<f32>) -> tensor<128xf32>
  %b = stablehlo.reduce(%x init: %c0) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  return %a, %b : tensor<128xf32>, tensor<64xf32>
}
)");
  CHECK(plan(*across).size() == 2);

  // A loop kernel writing the shape a reduction reads is its sibling...
  auto loop_and_sum = parse(R"(
func.func @main(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<128xf32>) {
  %c0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<64x128xf32>
  %a = stablehlo.reduce(%x init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<64x128xf32>, tensor<f32>) -> tensor<128xf32>
  return %e, %a : tensor<64x128xf32>, tensor<128xf32>
}
)");
  const std::vector<fusion::Kernel> one = plan(*loop_and_sum);
  REQUIRE(one.size() == 1);
  CHECK(one[0].bytes_read == 64 * 128 * 4);
  CHECK(one[0].bytes_written == 64 * 128 * 4 + 128 * 4);

  // ...but not when what the earlier one writes is read before the later
  // one's root: the one kernel, run at the later root, would come after
  // the GEMM that waits for it.
  auto read_between = parse(R"(
func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %e = stablehlo.exponential %x : tensor<64x64xf32>
  %d = stablehlo.dot_general %e, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %n = stablehlo.negate %x : tensor<64x64xf32>
  %s = stablehlo.add %n, %d : tensor<64x64xf32>
  return %s, %d : tensor<64x64xf32>, tensor<64x64xf32>
}
)");
  const std::vector<fusion::Kernel> apart = plan(*read_between);
  REQUIRE(apart.size() == 3);
  CHECK(apart[0].root->is("stablehlo.exponential"));
  CHECK(apart[1].root->is("stablehlo.dot_general"));
  CHECK(apart[2].root->is("stablehlo.add"));

  // A constant or broadcast scalar two kernels read is not read from
  // memory: no reason to fuse them.
  auto broadcast = parse(R"(
func.func @main(%x: tensor<64xf32>, %y: tensor<32xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %c = stablehlo.constant dense<2.000000e+00> : tensor<64xf32>
  %a = stablehlo.multiply %x, %c : tensor<64xf32>
  %t = stablehlo.concatenate %y, %y, dim = 0 : (tensor<32xf32>, tensor<32xf32>) -> tensor<64xf32>
  %b = stablehlo.add %t, %c : tensor<64xf32>
  return %a, %b : tensor<64xf32>, tensor<64xf32>
}
)");
  CHECK(plan(*broadcast).size() == 2);
}
