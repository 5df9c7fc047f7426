// The per-device program built from sdy modules: local shapes, device
// groups and communication types from the mesh, costs in both estimator
// modes, while loops unrolled by their constant trip count, and the JSON
// and trace exports.
#include "shardlab/cost/gemm_model.h"
#include "shardlab/schedule/report.h"
#include "shardlab/text/text.h"

#include "result_text.h"
#include "text_edit.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace shardlab;
using namespace shardlab::schedule;

namespace {

const char *kModule = R"(
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<64x512xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<512x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<64x1024xbf16> {
  %0 = sdy.all_gather [{}, {"y"}] %arg1 out_sharding=<@mesh, [{}, {}]> : tensor<512x1024xbf16>
  %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<64x512xbf16>, tensor<512x1024xbf16>) -> tensor<64x1024xbf16>
  %2 = sdy.all_reduce {"x"} %1 out_sharding=<@mesh, [{}, {}]> : tensor<64x1024xbf16>
  return %2 : tensor<64x1024xbf16>
}
)";

const char *kLoop = R"(
func.func @main(%arg0: tensor<32x96xf32>) -> tensor<32x96xf32> {
  %0 = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.constant dense<1> : tensor<i32>
  %2 = stablehlo.constant dense<3> : tensor<i32>
  %3:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %0) : tensor<32x96xf32>, tensor<i32>
    cond {
    %6 = stablehlo.compare  LT, %iterArg_2, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %6 : tensor<i1>
  } do {
    %6 = stablehlo.add %iterArg_2, %1 : tensor<i32>
    %7 = stablehlo.add %iterArg, %iterArg : tensor<32x96xf32>
    stablehlo.return %7, %6 : tensor<32x96xf32>, tensor<i32>
  }
  return %3#0 : tensor<32x96xf32>
}
)";

std::unique_ptr<Module> parse(const char *text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  return module;
}

ProgramOptions realOptions(int64_t gpus_per_node) {
  ProgramOptions o;
  o.hardware = *cost::findHardwarePreset("h100");
  o.sol = cost::solPlatformDefaults(o.hardware.device_name);
  o.sol.gpus_per_node = gpus_per_node;
  return o;
}

} // namespace

TEST_CASE("Per-device program: local shapes, groups, comm types, costs") {
  auto module = parse(kModule);
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, realOptions(8), r_diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  const Program &p = *r;
  CHECK(p.topology.num_devices == 8);
  CHECK(p.topology.num_nodes == 1);
  REQUIRE(p.collectives.size() == 2);
  const CollectiveInfo &ag = p.collectives[0];
  CHECK((ag.kind == CollectiveKind::AllGather));
  CHECK(*ag.groups ==
        std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(ag.bytes == 512 * 1024 * 2); // output bytes of an all-gather
  CHECK(ag.comm_type == "single_partition");
  CHECK(ag.time_us > 0);
  // Parameters: 32x512 and 512x256 bf16 per device.
  const Schedule s = *scheduleGraph(p.graph, {});
  CHECK(s.parameter_bytes == 32 * 512 * 2 + 512 * 256 * 2);
  CHECK(s.step_time_us >= s.lower_bound_us);
  CHECK(s.comm_us == doctest::Approx(ag.time_us + p.collectives[1].time_us));

  // Two GPUs per node: the all-gather over "y" crosses nodes (S-curve).
  DiagnosticEngine r2_diags;
  Result<Program> r2 = buildProgram(*module, realOptions(2), r2_diags);
  REQUIRE(r2.ok());
  CHECK(r2->topology.num_nodes == 4);
  CHECK(r2->collectives[0].comm_type != "single_partition");
  CHECK(r2->collectives[0].time_us > ag.time_us);
}

TEST_CASE("A sharded pad that moves rows between devices is communication") {
  // Rows shift up by one along the sharded dimension: device 0's last row
  // is device 1's first. The per-device program fetches the neighbour's
  // shard (a collective permute, -sdy-resolve-permutation-factors' halo
  // exchange, Shardy's default, exact for a zero pad value); without it
  // each device would pad its own rows only.
  auto module = parse(R"(
sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %arg0, %c, low = [-1, 0], high = [1, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
)");
  DiagnosticEngine diags;
  Result<Program> program = buildProgram(*module, realOptions(8), diags);
  REQUIRE_MESSAGE(program.ok(), errorOf(program));
  REQUIRE(program->collectives.size() == 1);
  CHECK((program->collectives[0].kind == CollectiveKind::CollectivePermute));
  CHECK(program->collectives[0].bytes == 4 * 16 * 4);
}

TEST_CASE("Approximate estimator: XLA's 1 / 1000 / 5000") {
  auto module = parse(kModule);
  ProgramOptions o;
  o.estimator = EstimatorMode::Approximate;
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, o, r_diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  const Graph &g = r->graph;
  int dots = 0;
  for (int64_t i = 0; i < g.size(); ++i) {
    if (g.node(i).name.rfind("stablehlo.dot_general", 0) == 0) {
      CHECK(g.node(i).cost_us == 5000);
      ++dots;
    }
    if (g.node(i).kind == NodeKind::AsyncStart)
      CHECK(g.node(i).cost_us == 1);
  }
  CHECK(dots == 1);
  for (const Edge &e : g.edges())
    CHECK(e.latency_us ==
          (g.node(e.from).kind == NodeKind::AsyncStart ? 5000 : 1));
}

TEST_CASE("While loop with a constant trip count is its body repeated") {
  auto module = parse(kLoop);
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, realOptions(8), r_diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  int adds = 0;
  for (int64_t i = 0; i < r->graph.size(); ++i)
    adds += r->graph.node(i).name.rfind("stablehlo.add", 0) == 0;
  CHECK(adds == 6); // two adds per iteration, three iterations
  CHECK(r->assumptions.empty());
}

TEST_CASE("Loop iterations do not overlap, as XLA schedules a loop body") {
  // The all-gather reads a loop-invariant weight: unrolled without a
  // barrier, the scheduler would prefetch iteration 1's during iteration 0.
  auto module = parse(R"(
sdy.mesh @mesh = <["x"=8]>
func.func @main(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<1024x1024xbf16> {
  %0 = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.constant dense<1> : tensor<i32>
  %2 = stablehlo.constant dense<2> : tensor<i32>
  %3:2 = stablehlo.while(%i = %0, %h = %x) : tensor<i32>, tensor<1024x1024xbf16>
    cond {
    %c = stablehlo.compare  LT, %i, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %g = sdy.all_gather [{}, {"x"}] %w out_sharding=<@mesh, [{}, {}]> : tensor<1024x1024xbf16>
    %d = stablehlo.dot_general %h, %g, contracting_dims = [1] x [0] : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
    %n = stablehlo.add %i, %1 : tensor<i32>
    stablehlo.return %n, %d : tensor<i32>, tensor<1024x1024xbf16>
  }
  return %3#1 : tensor<1024x1024xbf16>
}
)");
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, realOptions(8), r_diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  const Graph &g = r->graph;
  const Schedule s = *scheduleGraph(g, {});
  double first_end = 0, second_start = 1e300;
  int second = 0;
  for (int64_t n = 0; n < g.size(); ++n) {
    const NodeTiming &t = s.timing[size_t(n)];
    const bool start = g.node(n).kind == NodeKind::AsyncStart;
    const double begin = start ? t.transfer_start_us : t.start_us;
    const double end = start ? t.transfer_end_us : t.end_us;
    if (g.node(n).name.find("while@7#0") != std::string::npos &&
        g.node(n).name.rfind("iteration-end", 0) != 0)
      first_end = std::max(first_end, end);
    if (g.node(n).name.find("while@7#1") != std::string::npos) {
      second_start = std::min(second_start, begin);
      ++second;
    }
  }
  // The all-gather's start and done, the dot, the add, and the barrier
  // after the last iteration that the loop's readers wait for.
  CHECK(second == 5);
  CHECK(first_end > 0);
  CHECK(second_start >= first_end - 1e-9);
}

TEST_CASE("A loop starts once its operands are ready and its readers wait "
          "for its end, as XLA's while instruction") {
  // Unrolled without the loop's own barriers, the scheduler would gather
  // iteration 0's loop-invariant weight during the GEMM before the loop,
  // and start the op after it before the last iteration's end.
  auto module = parse(R"(
sdy.mesh @mesh = <["x"=8]>
func.func @main(%x: tensor<4096x4096xbf16>, %w: tensor<4096x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<4096x4096xbf16> {
  %0 = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.constant dense<1> : tensor<i32>
  %2 = stablehlo.constant dense<2> : tensor<i32>
  %pre = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %3:2 = stablehlo.while(%i = %0, %h = %pre) : tensor<i32>, tensor<4096x4096xbf16>
    cond {
    %c = stablehlo.compare  LT, %i, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %g = sdy.all_gather [{}, {"x"}] %w out_sharding=<@mesh, [{}, {}]> : tensor<4096x4096xbf16>
    %d = stablehlo.dot_general %h, %g, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
    %n = stablehlo.add %i, %1 : tensor<i32>
    stablehlo.return %n, %d : tensor<i32>, tensor<4096x4096xbf16>
  }
  %post = stablehlo.dot_general %x, %3#1, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  return %post : tensor<4096x4096xbf16>
}
)");
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, realOptions(8), diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  const Graph &g = r->graph;
  const Schedule s = *scheduleGraph(g, {});
  double pre_end = -1, post_start = -1, gather_start = -1, last_end = -1;
  for (int64_t n = 0; n < g.size(); ++n) {
    const std::string &name = g.node(n).name;
    const NodeTiming &t = s.timing[size_t(n)];
    if (name.rfind("stablehlo.dot_general@7", 0) == 0)
      pre_end = t.end_us;
    if (name.rfind("stablehlo.dot_general@18", 0) == 0)
      post_start = t.start_us;
    if (name.find("all_gather") != std::string::npos &&
        name.find("#0") != std::string::npos &&
        g.node(n).kind == NodeKind::AsyncStart)
      gather_start = t.transfer_start_us;
    if (name.find("while@8#1") != std::string::npos)
      last_end = std::max(last_end, g.node(n).kind == NodeKind::AsyncStart
                                        ? t.transfer_end_us
                                        : t.end_us);
  }
  REQUIRE(pre_end > 0);
  REQUIRE(post_start > 0);
  REQUIRE(gather_start >= 0);
  CHECK(gather_start >= pre_end - 1e-9);
  CHECK(post_start >= last_end - 1e-9);
}

namespace {

// Nested loops over a weight gathered every iteration, beside work outside
// the loops that the scheduler may lay into their last iterations.
std::string nestedLoops(int64_t outer, int64_t inner) {
  return R"(
sdy.mesh @mesh = <["x"=8]>
func.func @main(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %v: tensor<1024x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) {
  %0 = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<)" +
         std::to_string(outer) + R"(> : tensor<i32>
  %m = stablehlo.constant dense<)" +
         std::to_string(inner) + R"(> : tensor<i32>
  %side = sdy.all_gather [{"x"}, {}] %v out_sharding=<@mesh, [{}, {}]> : tensor<1024x1024xbf16>
  %sq = stablehlo.dot_general %side, %side, contracting_dims = [1] x [0] : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  %3:2 = stablehlo.while(%i = %0, %h = %x) : tensor<i32>, tensor<1024x1024xbf16>
    cond {
    %c = stablehlo.compare  LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %4:2 = stablehlo.while(%j = %0, %k = %h) : tensor<i32>, tensor<1024x1024xbf16>
      cond {
      %c = stablehlo.compare  LT, %j, %m : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %g = sdy.all_gather [{}, {"x"}] %w out_sharding=<@mesh, [{}, {}]> : tensor<1024x1024xbf16>
      %d = stablehlo.dot_general %k, %g, contracting_dims = [1] x [0] : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
      %e = stablehlo.exponential %d : tensor<1024x1024xbf16>
      %jn = stablehlo.add %j, %1 : tensor<i32>
      stablehlo.return %jn, %e : tensor<i32>, tensor<1024x1024xbf16>
    }
    %t = stablehlo.tanh %4#1 : tensor<1024x1024xbf16>
    %in = stablehlo.add %i, %1 : tensor<i32>
    stablehlo.return %in, %t : tensor<i32>, tensor<1024x1024xbf16>
  }
  return %3#1, %sq : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
}
)";
}

struct Scheduled {
  Program program;
  Schedule schedule;
};

Scheduled scheduleNested(int64_t outer, int64_t inner, bool extrapolate) {
  auto module = parse(nestedLoops(outer, inner).c_str());
  ProgramOptions options = realOptions(8);
  options.extrapolate_loops = extrapolate;
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, options, diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  Result<Schedule> s = scheduleGraph(r->graph, {});
  REQUIRE(s.ok());
  return {std::move(*r), std::move(*s)};
}

} // namespace

TEST_CASE("Extrapolated loops: a steady iteration counted for the middle "
          "ones gives the unrolled totals") {
  const Scheduled all = scheduleNested(7, 9, false);
  const Scheduled few = scheduleNested(7, 9, true);
  // Outer: 0, 1 (x 2), 4, 5, 6; inner, in each: 0, 1 (x 4), 6, 7, 8.
  CHECK(few.program.graph.size() < all.program.graph.size() * 40 / 63);
  const Schedule &a = all.schedule, &b = few.schedule;
  CHECK(a.step_time_us > 0);
  CHECK(b.step_time_us == doctest::Approx(a.step_time_us).epsilon(1e-9));
  CHECK(b.compute_us == doctest::Approx(a.compute_us).epsilon(1e-9));
  CHECK(b.comm_us == doctest::Approx(a.comm_us).epsilon(1e-9));
  CHECK(b.exposed_comm_us == doctest::Approx(a.exposed_comm_us).epsilon(1e-9));
  CHECK(b.forward_sim_us == doctest::Approx(a.forward_sim_us).epsilon(1e-9));
  CHECK(b.peak_memory_bytes == a.peak_memory_bytes);
  const KindTotals &ag = b.per_kind[size_t(CollectiveKind::AllGather)];
  CHECK(ag.count == 7 * 9 + 1); // every iteration's gather and the side one
  CHECK(ag.count == a.per_kind[size_t(CollectiveKind::AllGather)].count);
  CHECK(ag.bytes == a.per_kind[size_t(CollectiveKind::AllGather)].bytes);
  // Each loop says so once, as it was first reached.
  int said = 0;
  for (const std::string &line : few.program.assumptions)
    said += line.find("extrapolated from 5") != std::string::npos;
  CHECK(said == 2);
  CHECK(all.program.assumptions.empty());
}

TEST_CASE("Extrapolated loops: five iterations or fewer are all emitted") {
  const Scheduled all = scheduleNested(5, 3, false);
  const Scheduled few = scheduleNested(5, 3, true);
  CHECK(few.program.graph.size() == all.program.graph.size());
  CHECK(few.schedule.step_time_us == all.schedule.step_time_us);
  CHECK(few.program.assumptions.empty());
}

TEST_CASE("A call site runs its callee's ops, under the call path") {
  // @inner is called twice and calls @leaf; @self calls itself.
  auto module = parse(R"(
func.func @main(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = call @inner(%a) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = call @inner(%0) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = call @self(%1) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}
func.func private @inner(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = call @leaf(%0) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}
func.func private @leaf(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.tanh %x : tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
func.func private @self(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = call @self(%x) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
)");
  ProgramOptions options = realOptions(1);
  options.func_name = "main";
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, options, r_diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  const Graph &g = r->graph;
  int dots = 0, tanhs = 0;
  for (int64_t i = 0; i < g.size(); ++i) {
    const std::string &name = g.node(i).name;
    if (name.rfind("stablehlo.dot_general", 0) == 0) {
      ++dots;
      CHECK(name.find("/@inner") != std::string::npos);
      CHECK(g.node(i).cost_us > 0);
    }
    if (name.rfind("stablehlo.tanh", 0) == 0) {
      ++tanhs;
      CHECK(name.find("/@inner/") != std::string::npos);
      CHECK(name.find("/@leaf") != std::string::npos);
    }
  }
  CHECK(dots == 2);
  CHECK(tanhs == 2);
  // The recursion, and the 64x64 GEMMs below the measured grid (256..).
  REQUIRE(r->assumptions.size() == 2);
  CHECK(r->assumptions[0].find("recursive call to @self") != std::string::npos);
  CHECK(r->assumptions[1].find("GEMM table: 1 GEMM outside the measured "
                               "grid") != std::string::npos);
  CHECK(r->assumptions[1].find("m=64 below 256, k=64 below 256, n=64 below "
                               "256") != std::string::npos);
}

TEST_CASE("custom calls: sharding markers free, GEMMs and interpreter checks "
          "costed, others listed") {
  auto module = parse(R"(
func.func @main(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.custom_call @Sharding(%a) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = stablehlo.custom_call @__cublas$gemm(%0, %0) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = stablehlo.custom_call @my_kernel(%1) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %3 = stablehlo.custom_call @my_kernel(%2) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  stablehlo.custom_call @check.expect_close(%3, %a) {has_side_effect = true} : (tensor<256x256xf32>, tensor<256x256xf32>) -> ()
  return %3 : tensor<256x256xf32>
}
)");
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, realOptions(1), r_diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  const Graph &g = r->graph;
  for (int64_t i = 0; i < g.size(); ++i) {
    const Node &node = g.node(i);
    if (node.name.rfind("stablehlo.custom_call@3", 0) == 0)
      CHECK((node.kind == NodeKind::Nop));
    if (node.name.rfind("stablehlo.custom_call@4", 0) == 0) {
      CHECK(node.cost_us > 0);
      CHECK(node.explanation.find("not costed") == std::string::npos);
    }
    if (node.name.rfind("stablehlo.custom_call@5", 0) == 0)
      CHECK(node.explanation.rfind("not costed: custom_call @my_kernel", 0) ==
            0);
    if (node.name.rfind("stablehlo.custom_call@7", 0) == 0) {
      CHECK(node.cost_us > 0); // reads two 256 KiB operands
      CHECK(node.explanation.rfind("interpreter check", 0) == 0);
    }
  }
  REQUIRE(r->not_costed.size() == 1);
  CHECK(r->not_costed.at("my_kernel") == 2);
}

TEST_CASE("Loops: trip counts from bounds, XLA's backend_config, frontend "
          "attributes or the option") {
  // The first loop counts to a block argument (unknown), the second carries
  // XLA's known_trip_count, the third a frontend attribute.
  const char *text = R"(
func.func @main(%a: tensor<8xf32>, %n: tensor<i32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %x = %a) : tensor<i32>, tensor<8xf32>
   cond {
    %p = stablehlo.compare  LT, %i, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %y = stablehlo.sine %x : tensor<8xf32>
    %j = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %j, %y : tensor<i32>, tensor<8xf32>
  }
  %1:2 = stablehlo.while(%i = %c0, %x = %0#1) : tensor<i32>, tensor<8xf32> attributes {backend_config = "{\"known_trip_count\":{\"n\":\"7\"}}"}
   cond {
    %p = stablehlo.compare  LT, %i, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %y = stablehlo.cosine %x : tensor<8xf32>
    %j = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %j, %y : tensor<i32>, tensor<8xf32>
  }
  %2:2 = stablehlo.while(%i = %c0, %x = %1#1) : tensor<i32>, tensor<8xf32> attributes {mhlo.frontend_attributes = {known_trip_count = "3"}}
   cond {
    %p = stablehlo.compare  LT, %i, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %y = stablehlo.tan %x : tensor<8xf32>
    %j = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %j, %y : tensor<i32>, tensor<8xf32>
  }
  return %2#1 : tensor<8xf32>
}
)";
  auto count = [](const Program &p, const char *prefix) {
    int n = 0;
    for (int64_t i = 0; i < p.graph.size(); ++i)
      n += p.graph.node(i).name.rfind(prefix, 0) == 0;
    return n;
  };
  auto module = parse(text);
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, realOptions(1), r_diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  REQUIRE(r->loops.size() == 3);
  CHECK(r->loops[0].source == "unknown (one iteration)");
  CHECK(r->loops[1].source == "backend_config known_trip_count");
  CHECK(r->loops[1].trip_count == 7);
  CHECK(r->loops[2].source == "mhlo.frontend_attributes known_trip_count");
  CHECK(r->loops[2].trip_count == 3);
  CHECK(count(*r, "stablehlo.tan") == 3);
  CHECK(count(*r, "stablehlo.sine") == 1);
  CHECK(count(*r, "stablehlo.cosine") == 7);
  REQUIRE(r->assumptions.size() == 1);
  CHECK(r->assumptions[0].find("--while-trip-count") != std::string::npos);

  ProgramOptions options = realOptions(1);
  options.while_trip_count = 4;
  auto again = parse(text);
  DiagnosticEngine with_diags;
  Result<Program> with = buildProgram(*again, options, with_diags);
  REQUIRE_MESSAGE(with.ok(), errorOf(with));
  CHECK(with->loops[0].source == "--while-trip-count");
  CHECK(count(*with, "stablehlo.sine") == 4);
  CHECK(with->assumptions.empty());
}

TEST_CASE("case: the costliest branch is scheduled, and said") {
  auto module = parse(R"(
func.func @main(%i: tensor<i32>, %a: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = "stablehlo.case"(%i) ({
    %1 = stablehlo.sine %a : tensor<512x512xf32>
    stablehlo.return %1 : tensor<512x512xf32>
  }, {
    %1 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %2 = stablehlo.sine %1 : tensor<512x512xf32>
    stablehlo.return %2 : tensor<512x512xf32>
  }) : (tensor<i32>) -> tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}
)");
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, realOptions(1), r_diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  double case_cost = -1;
  for (int64_t i = 0; i < r->graph.size(); ++i)
    if (r->graph.node(i).name.rfind("stablehlo.case", 0) == 0)
      case_cost = r->graph.node(i).cost_us;
  CHECK(case_cost > 1.0); // the GEMM branch, not the sine alone
  REQUIRE(r->assumptions.size() == 1);
  CHECK(r->assumptions[0].find("costliest of 2 branches (branch 1)") !=
        std::string::npos);
}

TEST_CASE("Report JSON and Chrome trace") {
  auto module = parse(kModule);
  DiagnosticEngine r_diags;
  Result<Program> r = buildProgram(*module, realOptions(8), r_diags);
  REQUIRE(r.ok());
  const Schedule s = *scheduleGraph(r->graph, {});
  const auto report = nlohmann::json::parse(reportJson(*r, s));
  for (const char *key :
       {"step_time_us", "compute_us", "exposed_comm_us", "serial_us",
        "lower_bound_us", "peak_memory_bytes", "overlap_limit", "ops"})
    CHECK_MESSAGE(report.contains(key), key);
  int collectives = 0;
  for (const auto &op : report["ops"]) {
    CHECK(op["end_us"].get<double>() >= op["start_us"].get<double>());
    for (const auto &dep : op["deps"])
      CHECK(dep.get<int64_t>() < int64_t(report["ops"].size()));
    collectives += op["kind"] == "collective";
  }
  CHECK(collectives == 2);
  const auto trace = nlohmann::json::parse(chromeTraceJson(*r, s));
  CHECK(trace["traceEvents"].size() > 3);
  CHECK(summaryText(*r, s).find("step time") != std::string::npos);
}

TEST_CASE("A named computation's body is scheduled op by op") {
  // The per-device program keeps named computations (manual computations
  // are inlined into it): their ops are the program's.
  auto module = parse(R"(
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.named_computation<"body">(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] (%arg1: tensor<16x32xf32>) {
    %1 = stablehlo.tanh %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<16x32xf32>
    %2 = stablehlo.exponential %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<16x32xf32>
    sdy.return %2 : tensor<16x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
)");
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, realOptions(8), diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  std::vector<std::string> names; // a fused node's ops count as its own
  for (int64_t i = 0; i < r->graph.size(); ++i) {
    const Node &node = r->graph.node(i);
    std::vector<std::string> ops =
        node.fusion ? node.fusion->members : std::vector<std::string>{};
    if (ops.empty())
      ops.push_back(node.name);
    for (const std::string &op : ops)
      names.push_back(op.substr(0, op.find('@')));
  }
  CHECK(std::count(names.begin(), names.end(), "stablehlo.tanh") == 1);
  CHECK(std::count(names.begin(), names.end(), "stablehlo.exponential") == 1);
  CHECK(std::count(names.begin(), names.end(), "sdy.named_computation") == 0);
}

TEST_CASE("A collective across nodes is costed on the hosts its devices "
          "span") {
  // 64 GPUs, 8 per node: the all-reduce over "node" and "tp" has two groups
  // of 32, each with 4 GPUs on every one of the 8 nodes. XLA's estimator
  // would count 32 hosts.
  auto module = parse(R"(
sdy.mesh @mesh = <["node"=8, "dp"=2, "tp"=4]>
func.func @main(%arg0: tensor<4096x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> tensor<4096x4096xf32> {
  %0 = sdy.all_reduce {"node", "tp"} %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
)");
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, realOptions(8), diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  REQUIRE(r->collectives.size() == 1);
  CHECK(r->collectives[0].groups->size() == 2);
  CHECK((*r->collectives[0].groups)[0].size() == 32);
  const Node &start = r->graph.node(r->collectives[0].start_node);
  CHECK(start.explanation.find("hosts = 8 nodes") != std::string::npos);
  CHECK(start.explanation.find("communicators = 2") != std::string::npos);
}

TEST_CASE("Padding a dimension its shards do not divide is an assumption") {
  // A batch of 16 on 32 devices: each device computes one row, half of all
  // rows are padding. The report says so instead of a silently fast step.
  auto module = parse(R"(
sdy.mesh @mesh = <["x"=32]>
func.func @main(%arg0: tensor<16x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<16x1024xf32> {
  %0 = stablehlo.dot_general %arg0, %w, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x1024xf32>, tensor<1024x1024xf32>) -> tensor<16x1024xf32>
  return %0 : tensor<16x1024xf32>
}
)");
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, realOptions(8), diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  bool said = false;
  for (const std::string &a : r->assumptions)
    said = said || a.find("stablehlo.dot_general@4 dimension 0 (16) over 32 "
                          "shards: 1 per device (32 in all, 16 of them "
                          "padding: 2.00x the work)") != std::string::npos;
  CHECK(said);

  // Dividing shardings say nothing.
  auto divides = parse(kModule);
  DiagnosticEngine quiet;
  Result<Program> ok = buildProgram(*divides, realOptions(8), quiet);
  REQUIRE(ok.ok());
  for (const std::string &a : ok->assumptions)
    CHECK(a.find("padding") == std::string::npos);
}

TEST_CASE("cuDNN flash attention is costed as the GEMMs it fuses") {
  // q, k, v [B=2, T=S=1024, N=16, D=128]: the forward is two batched GEMMs
  // of 32 x (1024 x 1024 x 128), half of them under a causal mask; the
  // backward five (2.5x).
  auto module = parse(R"(
func.func @main(%q: tensor<2x1024x16x128xbf16>, %k: tensor<2x1024x16x128xbf16>, %v: tensor<2x1024x16x128xbf16>) -> (tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>) {
  %0:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"CAUSAL\"}}"} : (tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>) -> (tensor<2x1024x16x128xbf16>, tensor<2x16x1024xf32>, tensor<0xui8>)
  %1:4 = stablehlo.custom_call @"__cudnn$fmhaSoftmaxBackward"(%q, %k, %v, %0#1, %0#0, %0#0) : (tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<2x16x1024xf32>, tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>) -> (tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<0xui8>)
  return %0#0, %1#0 : tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>
}
)");
  ProgramOptions options = realOptions(8);
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, options, diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  CHECK(r->not_costed.empty());
  const cost::PerfTable table = cost::presetTable(options.hardware);
  cost::MatmulOptions gemm_options;
  gemm_options.min_time_us = options.hardware.kernel_launch_us;
  auto gemms = cost::MatmulInterpolator::create(table, gemm_options);
  REQUIRE(gemms);
  const double qk =
      *gemms->timeUs({{32, 1024, 128, 1024}, "bf16", "bf16", "bf16"});
  const double pv =
      *gemms->timeUs({{32, 1024, 1024, 128}, "bf16", "bf16", "bf16"});
  double forward = 0, backward = 0;
  for (int64_t i = 0; i < r->graph.size(); ++i) {
    const Node &node = r->graph.node(i);
    if (node.explanation.find("forward (2 GEMMs)") != std::string::npos)
      forward = node.cost_us;
    if (node.explanation.find("backward (5 GEMMs)") != std::string::npos)
      backward = node.cost_us;
  }
  CHECK(forward == doctest::Approx(0.5 * (qk + pv)));
  CHECK(backward == doctest::Approx(2.5 * (qk + pv)));
  // What the price leaves out is said, with its size: the forward's causal
  // half of 32 x 1024 x 1024 scores, the backward's (no mask) all of them.
  std::string said;
  for (const std::string &a : r->assumptions)
    if (a.rfind("fused attention: 2 calls", 0) == 0)
      said = a;
  CHECK(said.find("softmax between them") != std::string::npos);
  INFO(said);
  CHECK(said.find("custom_call@3 (softmax of 1.68e+07 scores)") !=
        std::string::npos);
  CHECK(said.find("custom_call@4 (softmax of 3.36e+07 scores)") !=
        std::string::npos);

  // A measured factor prices the call as its GEMMs times it, forward and
  // backward each their own, and the line says it and where it came from.
  options.fused_attention = cost::FusedAttentionEntry{1.5, 1.2, "by hand"};
  auto again = parse(R"(
func.func @main(%q: tensor<2x1024x16x128xbf16>, %k: tensor<2x1024x16x128xbf16>, %v: tensor<2x1024x16x128xbf16>) -> (tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>) {
  %0:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"CAUSAL\"}}"} : (tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>) -> (tensor<2x1024x16x128xbf16>, tensor<2x16x1024xf32>, tensor<0xui8>)
  %1:4 = stablehlo.custom_call @"__cudnn$fmhaSoftmaxBackward"(%q, %k, %v, %0#1, %0#0, %0#0) : (tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<2x16x1024xf32>, tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>) -> (tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>, tensor<0xui8>)
  return %0#0, %1#0 : tensor<2x1024x16x128xbf16>, tensor<2x1024x16x128xbf16>
}
)");
  DiagnosticEngine measured_diags;
  Result<Program> measured = buildProgram(*again, options, measured_diags);
  REQUIRE_MESSAGE(measured.ok(), errorOf(measured));
  double measured_forward = 0, measured_backward = 0;
  for (int64_t i = 0; i < measured->graph.size(); ++i) {
    const Node &node = measured->graph.node(i);
    if (node.explanation.find("forward (2 GEMMs)") != std::string::npos) {
      measured_forward = node.cost_us;
      CHECK(
          node.explanation.find("x 1.5 the GEMMs' price for the whole call") !=
          std::string::npos);
    }
    if (node.explanation.find("backward (5 GEMMs)") != std::string::npos)
      measured_backward = node.cost_us;
  }
  CHECK(measured_forward == doctest::Approx(1.5 * 0.5 * (qk + pv)));
  CHECK(measured_backward == doctest::Approx(1.2 * 2.5 * (qk + pv)));
  std::string priced;
  for (const std::string &a : measured->assumptions)
    if (a.rfind("fused attention: 2 calls", 0) == 0)
      priced = a;
  INFO(priced);
  CHECK(priced.find("times x1.5 (forward) and x1.2 (backward) for the whole "
                    "call, softmax included, from by hand") !=
        std::string::npos);
  CHECK(priced.find("is not priced") == std::string::npos);
  CHECK(priced.find("custom_call@3 (softmax of 1.68e+07 scores)") !=
        std::string::npos);
}

TEST_CASE("A bf16 GEMM writing f32 runs at bf16's rate, plus its wider "
          "result's bytes, and says so") {
  // JAX's preferred_element_type=f32 (a weight gradient written into an f32
  // buffer): the tensor cores' rate is the operands'. The table has no
  // bf16xbf16->f32 key; the roofline of its f32 result would take the FP32
  // peak, 1/15 of the tensor cores'.
  auto module = parse(R"(
func.func @main(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> (tensor<4096x4096xf32>, tensor<4096x4096xbf16>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xf32>
  %1 = stablehlo.dot_general %b, %a, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  return %0, %1 : tensor<4096x4096xf32>, tensor<4096x4096xbf16>
}
)");
  const ProgramOptions options = realOptions(8);
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, options, diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  double wide = 0, narrow = 0;
  for (int64_t i = 0; i < r->graph.size(); ++i) {
    const Node &node = r->graph.node(i);
    if (node.line == 3)
      wide = node.cost_us;
    if (node.line == 4)
      narrow = node.cost_us;
  }
  // 4096 x 4096 results: 2 bytes more each, at H100's HBM bandwidth.
  const double extra_us =
      4096.0 * 4096 * 2 / options.hardware.hbm_bytes_per_s * 1e6;
  REQUIRE(narrow > 0);
  CHECK(wide == doctest::Approx(narrow + extra_us));
  CHECK(wide < 1.2 * narrow); // not the FP32 roofline (~15x)
  bool said = false;
  for (const std::string &a : r->assumptions)
    said |=
        a.find("GEMM table: 1 GEMM of a dtype key it does not have") !=
            std::string::npos &&
        a.find("dot_general@3 (bf16xbf16->f32 at bf16xbf16->bf16's rates)") !=
            std::string::npos;
  CHECK_MESSAGE(said, "assumptions: " << r->assumptions.size());
}

TEST_CASE("A GEMM no table key prices is costed at the roofline, and said") {
  // fp8 operands: the preset's tables hold bf16, f16 and f32 GEMMs.
  auto module = parse(R"(
func.func @main(%a: tensor<4096x4096xf8E4M3FN>, %b: tensor<4096x4096xf8E4M3FN>) -> tensor<4096x4096xbf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4096x4096xf8E4M3FN>, tensor<4096x4096xf8E4M3FN>) -> tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}
)");
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, realOptions(8), diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  bool said = false;
  for (const std::string &a : r->assumptions)
    said |=
        a.find("1 GEMM of a dtype key it does not have, costed by the "
               "roofline") != std::string::npos &&
        a.find("dot_general@3 (f8E4M3FNxf8E4M3FN->bf16)") != std::string::npos;
  CHECK(said);
}

namespace {

// A loop writing each of 4 rows [1, 1024] f32 (4 KiB) of a stack [4, 1024]
// (16 KiB) that a broadcast makes, then the stack summed: the stack is the
// one large buffer. `also_read` adds a reader of the stack's initial value
// after the loop, so the loop must write into a copy.
std::string stackLoop(bool also_read) {
  std::string text = R"(
func.func @main(%row: tensor<1x1024xf32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %init = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<4x1024xf32>
  %w:2 = stablehlo.while(%i = %c0, %st = %init) : tensor<i32>, tensor<4x1024xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %st2 = stablehlo.dynamic_update_slice %st, %row, %i, %c0 : (tensor<4x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<4x1024xf32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %st2 : tensor<i32>, tensor<4x1024xf32>
  }
  %sum = stablehlo.reduce(%w#1 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x1024xf32>, tensor<f32>) -> tensor<f32>
  return %sum : tensor<f32>
}
)";
  if (also_read) {
    const std::string from = "  return %sum";
    text.replace(text.find(from), from.size(),
                 "  %again = stablehlo.reduce(%init init: %zero) applies "
                 "stablehlo.add across dimensions = [0, 1] : "
                 "(tensor<4x1024xf32>, tensor<f32>) -> tensor<f32>\n"
                 "  %both = stablehlo.add %sum, %again : tensor<f32>\n"
                 "  return %both");
  }
  return text;
}

int64_t peakOf(const std::string &text) {
  auto module = parse(text.c_str());
  DiagnosticEngine diags;
  Result<Program> r = buildProgram(*module, realOptions(8), diags);
  REQUIRE_MESSAGE(r.ok(), errorOf(r));
  Result<Schedule> s = scheduleGraph(r->graph, {});
  REQUIRE(s.ok());
  return s->peak_memory_bytes - s->parameter_bytes;
}

} // namespace

TEST_CASE("An in-place update writes into its target's buffer, as XLA "
          "aliases a dynamic_update_slice's result with its target") {
  // Live at the peak: the stack (16 KiB) and a few scalars. Written into a
  // new buffer, each update would hold two stacks (32 KiB) while it runs.
  const int64_t stack = 4 * 1024 * 4;
  const int64_t in_place = peakOf(stackLoop(false));
  CHECK(in_place >= stack);
  CHECK(in_place < stack + 64);
  // The initial stack is read again after the loop: the loop writes into a
  // copy (XLA's copy insertion), two stacks live.
  const int64_t copied = peakOf(stackLoop(true));
  CHECK(copied >= 2 * stack);
  CHECK(copied < 2 * stack + 64);
}

TEST_CASE("Two stacks a loop starts from one value: one keeps its buffer, "
          "the other writes into a copy") {
  // As stackLoop, with the row written into two stacks that both start
  // from %init (JAX's zeros for two saved residuals, merged as equal
  // constants): XLA's copy insertion gives the loop's second stack a copy,
  // so two stacks are live (32 KiB), not the initial value and two new
  // ones (48 KiB).
  std::string text = stackLoop(false);
  const auto swap = [&](const std::string &from, const std::string &to) {
    text = test::replacedOnce(text, from, to);
  };
  swap("%w:2 = stablehlo.while(%i = %c0, %st = %init) : tensor<i32>, "
       "tensor<4x1024xf32>",
       "%w:3 = stablehlo.while(%i = %c0, %st = %init, %su = %init) : "
       "tensor<i32>, tensor<4x1024xf32>, tensor<4x1024xf32>");
  swap("    %i2 = stablehlo.add %i, %c1 : tensor<i32>\n"
       "    stablehlo.return %i2, %st2 : tensor<i32>, tensor<4x1024xf32>",
       "    %su2 = stablehlo.dynamic_update_slice %su, %row, %i, %c0 : "
       "(tensor<4x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> "
       "tensor<4x1024xf32>\n"
       "    %i2 = stablehlo.add %i, %c1 : tensor<i32>\n"
       "    stablehlo.return %i2, %st2, %su2 : tensor<i32>, "
       "tensor<4x1024xf32>, tensor<4x1024xf32>");
  swap("%sum = stablehlo.reduce(%w#1 init: %zero)",
       "%wsum = stablehlo.add %w#1, %w#2 : tensor<4x1024xf32>\n"
       "  %sum = stablehlo.reduce(%wsum init: %zero)");
  const int64_t stack = 4 * 1024 * 4;
  const int64_t peak = peakOf(text);
  CHECK(peak >= 2 * stack);
  CHECK(peak < 2 * stack + 64);
}

TEST_CASE("A row read back, added to and written in place shares the stack "
          "(dw[i] += g), unless the old stack is read after the update") {
  // A loop adding a row [1, 1024] f32 into row i of a stack [4, 1024]
  // (16 KiB): the dynamic_slice reading the row runs before the update
  // that its sum feeds, so XLA writes the stack in place: one stack live.
  const std::string accumulate = R"(
func.func @main(%row: tensor<1x1024xf32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %init = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<4x1024xf32>
  %w:3 = stablehlo.while(%i = %c0, %st = %init, %seen = %zero) : tensor<i32>, tensor<4x1024xf32>, tensor<f32>
  cond {
    %lt = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %old = stablehlo.dynamic_slice %st, %i, %c0, sizes = [1, 1024] : (tensor<4x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1024xf32>
    %sum = stablehlo.add %old, %row : tensor<1x1024xf32>
    %st2 = stablehlo.dynamic_update_slice %st, %sum, %i, %c0 : (tensor<4x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<4x1024xf32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %st2, %seen : tensor<i32>, tensor<4x1024xf32>, tensor<f32>
  }
  %sum = stablehlo.reduce(%w#1 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x1024xf32>, tensor<f32>) -> tensor<f32>
  %both = stablehlo.add %sum, %w#2 : tensor<f32>
  return %both : tensor<f32>
}
)";
  const int64_t stack = 4 * 1024 * 4;
  const int64_t in_place = peakOf(accumulate);
  CHECK(in_place >= stack);
  CHECK(in_place < stack + 64);
  // The old stack also summed into %seen, which the update does not wait
  // for: it may run after the update, so the update writes a copy.
  const std::string read_after = test::replacedOnce(
      accumulate, "    stablehlo.return %i2, %st2, %seen",
      "    %all = stablehlo.reduce(%st init: %zero) applies stablehlo.add "
      "across dimensions = [0, 1] : (tensor<4x1024xf32>, tensor<f32>) -> "
      "tensor<f32>\n"
      "    %seen2 = stablehlo.add %seen, %all : tensor<f32>\n"
      "    stablehlo.return %i2, %st2, %seen2");
  const int64_t copied = peakOf(read_after);
  CHECK(copied >= 2 * stack);
  CHECK(copied < 2 * stack + 64);
}

TEST_CASE("A scatter adds into its operand's buffer, in place") {
  // 4 rows added into a [64, 1024] f32 table (256 KiB) of zeros: one table
  // live, not the zeros and the sum.
  const int64_t table = 64 * 1024 * 4;
  const int64_t peak = peakOf(R"(
func.func @main(%rows: tensor<4x1xi32>, %updates: tensor<4x1024xf32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %init = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<64x1024xf32>
  %sum = "stablehlo.scatter"(%init, %rows, %updates) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<64x1024xf32>, tensor<4x1xi32>, tensor<4x1024xf32>) -> tensor<64x1024xf32>
  %total = stablehlo.reduce(%sum init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x1024xf32>, tensor<f32>) -> tensor<f32>
  return %total : tensor<f32>
}
)");
  CHECK(peak >= table);
  CHECK(peak < table + 64);
}

namespace {

// A loop whose state `%acc` [256, 1024] f32 (1 MiB) is updated by `update`
// (an op on %acc and %m, a [256, 1024] f32 argument) each of 3 iterations.
std::string stateLoop(const std::string &update) {
  return R"(
func.func @main(%m: tensor<256x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %init = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<256x1024xf32>
  %l:2 = stablehlo.while(%i = %c0, %acc = %init) : tensor<i32>, tensor<256x1024xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    )" + update +
         R"(
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %acc2 : tensor<i32>, tensor<256x1024xf32>
  }
  %sum = stablehlo.reduce(%l#1 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<f32>
  return %sum : tensor<f32>
}
)";
}

} // namespace

TEST_CASE("Loop state updated elementwise keeps its buffer, as XLA's while "
          "aliasing gives it one") {
  const int64_t state = 256 * 1024 * 4;
  // An accumulation: one state buffer, where a new one for each iteration's
  // sum would hold two while the add runs.
  const int64_t accumulated = peakOf(
      stateLoop("%acc2 = stablehlo.add %acc, %m : tensor<256x1024xf32>"));
  CHECK(accumulated >= state);
  CHECK(accumulated < state + 64);
  // A GEMM cannot write into its operand: its result is a buffer of its own
  // (XLA copies it into the loop's), two live while it runs.
  const int64_t multiplied =
      peakOf(stateLoop("%acc2 = stablehlo.dot_general %acc, %w, "
                       "contracting_dims = [1] x [0] : "
                       "(tensor<256x1024xf32>, tensor<1024x1024xf32>) -> "
                       "tensor<256x1024xf32>"));
  CHECK(multiplied >= 2 * state);
  CHECK(multiplied < 2 * state + 64);
}

TEST_CASE("Explanations off: the same nodes and costs, no text") {
  // The strategy comparison builds its programs with explain = false; its
  // answers must be the explained program's.
  auto module = parse(kModule);
  ProgramOptions quiet = realOptions(2);
  quiet.explain = false;
  DiagnosticEngine a_diags, b_diags;
  Result<Program> explained = buildProgram(*module, realOptions(2), a_diags);
  Result<Program> bare = buildProgram(*module, quiet, b_diags);
  REQUIRE(explained.ok());
  REQUIRE(bare.ok());
  REQUIRE(explained->graph.size() == bare->graph.size());
  int explained_nodes = 0;
  for (int64_t i = 0; i < explained->graph.size(); ++i) {
    const Node &a = explained->graph.node(i), &b = bare->graph.node(i);
    CAPTURE(a.name);
    CHECK(a.name == b.name);
    CHECK(a.cost_us == b.cost_us);
    explained_nodes += !a.explanation.empty();
    // Only fixed words (no-ops, loop bookkeeping) remain without text.
    if (a.cost_us > 0)
      CHECK(b.explanation.empty());
  }
  CHECK(explained_nodes > 0);
  CHECK(scheduleGraph(explained->graph, {})->step_time_us ==
        scheduleGraph(bare->graph, {})->step_time_us);
}

TEST_CASE("A stream per link: an NVLink collective runs beside a network "
          "one, two network ones take turns") {
  // 16 GPUs, 8 a node: "dp" crosses nodes (the NICs), "tp" stays in one
  // (NVLink). The all-reduce over tp and the gathers over dp depend on
  // nothing of each other.
  static const char *kStreams = R"(
sdy.mesh @mesh = <["dp"=2, "tp"=8]>
func.func @main(%a: tensor<8192x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {}]>},
                %b: tensor<8192x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {}]>},
                %c: tensor<4096x4096xf32>) -> (tensor<8192x4096xf32>, tensor<8192x4096xf32>, tensor<4096x4096xf32>) {
  %0 = sdy.all_gather [{"dp"}, {}] %a out_sharding=<@mesh, [{}, {}]> : tensor<8192x4096xf32>
  %1 = sdy.all_gather [{"dp"}, {}] %b out_sharding=<@mesh, [{}, {}]> : tensor<8192x4096xf32>
  %2 = sdy.all_reduce {"tp"} %c out_sharding=<@mesh, [{}, {}]> : tensor<4096x4096xf32>
  return %0, %1, %2 : tensor<8192x4096xf32>, tensor<8192x4096xf32>, tensor<4096x4096xf32>
}
)";
  auto run = [&](bool per_link) {
    ProgramOptions options = realOptions(8);
    options.stream_per_link = per_link;
    options.combine_collectives = false;
    DiagnosticEngine diags;
    auto fresh = parse(kStreams);
    Result<Program> program = buildProgram(*fresh, options, diags);
    REQUIRE_MESSAGE(program.ok(), errorOf(program));
    SchedulerConfig config;
    Result<Schedule> s = scheduleGraph(program->graph, config);
    REQUIRE_MESSAGE(s.ok(), errorOf(s));
    std::vector<std::pair<int, NodeTiming>> out; // stream, transfer, by kind
    for (const CollectiveInfo &c : program->collectives)
      out.push_back({program->graph.node(c.start_node).stream,
                     s->timing[size_t(c.start_node)]});
    return out;
  };
  // Transfers sharing more than a nanosecond (one starting as the other
  // ends is not an overlap).
  auto overlap = [](const NodeTiming &x, const NodeTiming &y) {
    return x.transfer_start_us < y.transfer_end_us - 1e-3 &&
           y.transfer_start_us < x.transfer_end_us - 1e-3;
  };
  // In program order: the two gathers (network), the all-reduce (NVLink).
  const auto one = run(false), two = run(true);
  REQUIRE(one.size() == 3);
  REQUIRE(two.size() == 3);
  CHECK(one[0].first == 0);
  CHECK(one[2].first == 0);
  CHECK(two[0].first == 0);
  CHECK(two[1].first == 0);
  CHECK(two[2].first == 1);
  // One stream: nothing overlaps. A stream per link: the all-reduce
  // overlaps a gather; the gathers still take turns on the NIC.
  CHECK_FALSE(overlap(one[2].second, one[0].second));
  CHECK_FALSE(overlap(one[2].second, one[1].second));
  CHECK((overlap(two[2].second, two[0].second) ||
         overlap(two[2].second, two[1].second)));
  CHECK_FALSE(overlap(two[0].second, two[1].second));
}
