// Which ops of a loop body the collective pipeliner moves, checked against
// the rules in fusion/collective_pipeliner.h worked by hand, and what the
// schedule makes of it.
#include "shardlab/cost/hardware.h"
#include "shardlab/fusion/collective_pipeliner.h"
#include "shardlab/schedule/program.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <set>

using namespace shardlab;

namespace {

std::unique_ptr<Module> parse(const char *text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  return module;
}

// A layer loop over 2 devices: weights stacked [2, 8, 2] (each device holds
// half of every layer's columns), carried unchanged; the counter %i.
//   %wf  all-gather of the layer's weights: prefetched, with the slice and
//        reshape that compute its operand
//   %ha  all-gather of the carried activation: changes every iteration
//   %ar  all-reduce whose result the next GEMM reads: stays
//   %rs  reduce-scatter only reshaped and stored into %g: sunk, with both
const char *kLoop = R"(
func.func @main(%x: tensor<4x8xf32>, %gs: tensor<2x8x2xf32>, %ws: tensor<2x8x2xf32>) -> (tensor<4x8xf32>, tensor<2x8x2xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:4 = stablehlo.while(%i = %c0, %h = %x, %g = %gs, %w = %ws) : tensor<i32>, tensor<4x8xf32>, tensor<2x8x2xf32>, tensor<2x8x2xf32>
   cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %more = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %more : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %wi = stablehlo.dynamic_slice %w, %i, %z, %z, sizes = [1, 8, 2] : (tensor<2x8x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x2xf32>
    %wr = stablehlo.reshape %wi : (tensor<1x8x2xf32>) -> tensor<8x2xf32>
    %wf = "stablehlo.all_gather"(%wr) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<8x2xf32>) -> tensor<8x4xf32>
    %ha = "stablehlo.all_gather"(%h) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x8xf32>) -> tensor<8x8xf32>
    %y = stablehlo.dot_general %h, %wf, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    %ar = "stablehlo.all_reduce"(%y) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %h2 = stablehlo.dot_general %ar, %wf, contracting_dims = [1] x [1] : (tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
    %dw = stablehlo.dot_general %ha, %wf, contracting_dims = [0] x [0] : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %rs = "stablehlo.reduce_scatter"(%dw) <{scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x4xf32>) -> tensor<8x2xf32>
    %rr = stablehlo.reshape %rs : (tensor<8x2xf32>) -> tensor<1x8x2xf32>
    %g2 = stablehlo.dynamic_update_slice %g, %rr, %i, %z, %z : (tensor<2x8x2xf32>, tensor<1x8x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8x2xf32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %h2, %g2, %w : tensor<i32>, tensor<4x8xf32>, tensor<2x8x2xf32>, tensor<2x8x2xf32>
  }
  return %r#1, %r#2 : tensor<4x8xf32>, tensor<2x8x2xf32>
}
)";

Operation &whileOp(Module &module) {
  Operation *main = module.lookupSymbol("main");
  REQUIRE(main);
  for (Operation &op : main->region(0).front())
    if (op.is("stablehlo.while"))
      return op;
  FAIL("no while");
  return *main;
}

// The names of the moved ops.
std::multiset<std::string>
names(const std::unordered_set<const Operation *> &ops) {
  std::multiset<std::string> out;
  for (const Operation *op : ops)
    out.insert(std::string(op->name));
  return out;
}

} // namespace

TEST_CASE("Collective pipeliner: weight all-gathers go early, stored "
          "reduce-scatters late, the rest stays") {
  auto module = parse(kLoop);
  const fusion::PipelinedOps moved = fusion::pipelinedOps(whileOp(*module));
  // The slice, the reshape and the all-gather of %wf (and the constants
  // their operands are; %ha gathers the carried %h: not moved).
  CHECK(names(moved.prefetched) ==
        std::multiset<std::string>{"stablehlo.all_gather", "stablehlo.constant",
                                   "stablehlo.dynamic_slice",
                                   "stablehlo.reshape"});
  // %rs with the reshape and the update that store it; %ar's result feeds
  // a GEMM: not sunk.
  CHECK(names(moved.sunk) ==
        std::multiset<std::string>{"stablehlo.dynamic_update_slice",
                                   "stablehlo.reduce_scatter",
                                   "stablehlo.reshape"});
}

TEST_CASE("Collective pipeliner: the schedule overlaps the next layer's "
          "weight gather and the last layer's reduce-scatter with compute") {
  auto module = parse(kLoop);
  schedule::ProgramOptions options;
  options.hardware = *cost::findHardwarePreset("h100");
  options.sol = cost::solDefaultsFor(options.hardware);
  auto barriersCrossedBy = [&](bool pipelined) {
    options.pipeline_collectives = pipelined;
    DiagnosticEngine diags;
    Result<schedule::Program> program =
        schedule::buildProgram(*module, options, diags);
    REQUIRE(program.ok());
    // Edges from the barrier between the iterations to collective nodes,
    // and from collective nodes to it.
    const schedule::Graph &g = program->graph;
    int64_t barrier = -1;
    for (int64_t i = 0; i < g.size(); ++i)
      if (g.node(i).name.rfind("iteration-end@", 0) == 0)
        barrier = i;
    REQUIRE(barrier >= 0);
    std::set<std::string> bound;
    for (const schedule::Edge &e : g.edges()) {
      const int64_t other = e.from == barrier ? e.to
                            : e.to == barrier ? e.from
                                              : -1;
      if (other >= 0 && g.node(other).kind == schedule::NodeKind::AsyncStart)
        bound.insert(
            g.node(other).name.substr(0, g.node(other).name.find('/')) +
            (e.from == barrier ? " after" : " before"));
    }
    return bound;
  };
  const std::set<std::string> xla = barriersCrossedBy(false);
  const std::set<std::string> pipelined = barriersCrossedBy(true);
  // Without the pipeliner, every collective of iteration 0 ends before the
  // barrier and every one of iteration 1 starts after it.
  CHECK(xla.count("stablehlo.all_gather@14 after"));
  CHECK(xla.count("stablehlo.reduce_scatter@24 before"));
  // With it, iteration 1's weight gather and iteration 0's reduce-scatter
  // are free of it; the activation gather and the all-reduce are not.
  CHECK_FALSE(pipelined.count("stablehlo.all_gather@14 after"));
  CHECK_FALSE(pipelined.count("stablehlo.reduce_scatter@24 before"));
  CHECK(pipelined.count("stablehlo.all_gather@15 after"));
  CHECK(pipelined.count("stablehlo.all_reduce@17 before"));
}

TEST_CASE("Collective pipeliner: a collective moves one iteration, no "
          "further") {
  // Three iterations: iteration 0's reduce-scatter must finish before the
  // end of iteration 1, and iteration 2's weight gather start after the end
  // of iteration 0 (XLA moves it into the previous iteration's body).
  std::string text = kLoop;
  const std::string two = "%n = stablehlo.constant dense<2>";
  text.replace(text.find(two), two.size(), "%n = stablehlo.constant dense<3>");
  auto module = parse(text.c_str());
  schedule::ProgramOptions options;
  options.hardware = *cost::findHardwarePreset("h100");
  options.sol = cost::solDefaultsFor(options.hardware);
  options.pipeline_collectives = true;
  DiagnosticEngine diags;
  Result<schedule::Program> program =
      schedule::buildProgram(*module, options, diags);
  REQUIRE(program.ok());
  const schedule::Graph &g = program->graph;
  auto named = [&](std::string_view prefix, std::string_view iteration) {
    for (int64_t i = 0; i < g.size(); ++i) {
      const std::string &name = g.node(i).name;
      if (name.rfind(prefix, 0) == 0 &&
          name.find(iteration) != std::string::npos &&
          g.node(i).kind != schedule::NodeKind::AsyncDone)
        return i;
    }
    FAIL("no node " << prefix << " in iteration " << iteration);
    return int64_t{-1};
  };
  auto edge = [&](int64_t from, int64_t to) {
    for (const schedule::Edge &e : g.edges())
      if (e.from == from && e.to == to)
        return true;
    return false;
  };
  const int64_t rs0 = named("stablehlo.reduce_scatter@24", "#0");
  const int64_t end0 = named("iteration-end@", "#0");
  const int64_t end1 = named("iteration-end@", "#1");
  const int64_t gather2 = named("stablehlo.all_gather@14", "#2");
  CHECK_FALSE(edge(rs0, end0));
  CHECK(edge(rs0, end1));
  CHECK(edge(end0, gather2));
  CHECK_FALSE(edge(end1, gather2));
}

TEST_CASE("Collective pipeliner: a send nothing in the body reads finishes in "
          "the next iteration; a permute whose result is read stays") {
  // %recv's result becomes the next iteration's %h: stays. %send's is read
  // by no op of the body (a pipeline stage's send): sunk.
  auto module = parse(R"(
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %h = %x) : tensor<i32>, tensor<4x8xf32>
   cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %more = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %more : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %y = stablehlo.multiply %h, %h : tensor<4x8xf32>
    %send = "stablehlo.collective_permute"(%y) <{source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %recv = "stablehlo.collective_permute"(%y) <{source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %recv : tensor<i32>, tensor<4x8xf32>
  }
  return %r#1 : tensor<4x8xf32>
}
)");
  const fusion::PipelinedOps moved = fusion::pipelinedOps(whileOp(*module));
  REQUIRE(moved.sunk.size() == 1);
  const Operation *sunk = *moved.sunk.begin();
  CHECK(sunk->is("stablehlo.collective_permute"));
  CHECK_FALSE(sunk->result(0)->hasUses());
  CHECK(moved.prefetched.empty());
}
