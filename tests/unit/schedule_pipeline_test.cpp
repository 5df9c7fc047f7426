// The full path behind shardlab-schedule (runSchedulePipeline): modules
// that need propagation and explicit collectives, the report's fields and
// invariants, StableHLO collectives with replica groups, and the memory
// limit with XLA's rerun loop.
#include "shardlab/schedule/pipeline.h"
#include "shardlab/schedule/report.h"
#include "shardlab/schedule/validation.h"
#include "shardlab/text/text.h"
#include "text_edit.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace shardlab;
using namespace shardlab::schedule;
using nlohmann::json;

namespace {

// Megatron's MLP: column-parallel then row-parallel weights, nothing else
// annotated. Propagation shards the hidden activation on "model"; the
// second matmul contracts over it, so lowering adds an all-reduce.
const char *kMegatronMlp = R"(
sdy.mesh @mesh = <["model"=8]>
func.func @main(%x: tensor<4096x4096xbf16>,
                %w1: tensor<4096x16384xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                %w2: tensor<16384x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> tensor<4096x4096xbf16> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x16384xbf16>) -> tensor<4096x16384xbf16>
  %a = stablehlo.tanh %h : tensor<4096x16384xbf16>
  %y = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<4096x16384xbf16>, tensor<16384x4096xbf16>) -> tensor<4096x4096xbf16>
  return %y : tensor<4096x4096xbf16>
}
)";

// Every StableHLO collective with its groups or pairs, 16 devices.
const char *kStablehlo = R"(
func.func @main(%arg0: tensor<1024x1024xf32>) -> tensor<512x2048xf32> {
  %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<2x8xi64>, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %1 = "stablehlo.all_gather"(%0) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 8], [1, 9], [2, 10], [3, 11], [4, 12], [5, 13], [6, 14], [7, 15]]> : tensor<8x2xi64>}> : (tensor<1024x1024xf32>) -> tensor<2048x1024xf32>
  %2 = "stablehlo.collective_permute"(%1) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
  %3 = "stablehlo.reduce_scatter"(%2) <{scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2048x1024xf32>) -> tensor<1024x1024xf32>
  %4 = "stablehlo.all_to_all"(%3) <{split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<1024x1024xf32>) -> tensor<512x2048xf32>
  return %4 : tensor<512x2048xf32>
}
)";

PipelineOptions realOptions() {
  PipelineOptions o;
  o.program.hardware = *cost::findHardwarePreset("h100");
  o.program.sol = cost::solPlatformDefaults(o.program.hardware.device_name);
  o.program.sol.gpus_per_node = 8;
  return o;
}

PipelineResult run(const std::string &text, const PipelineOptions &o) {
  PipelineResult r = runSchedulePipeline(text, o);
  REQUIRE_MESSAGE(r.ok, std::string(r.stage + ": " + r.error));
  return r;
}

std::map<std::string, int> collectiveCounts(const json &report) {
  std::map<std::string, int> counts;
  for (const json &op : report["ops"])
    if (op["kind"] == "collective")
      ++counts[op["collective"].get<std::string>()];
  return counts;
}

// The report's fields and what must hold between them.
void checkReport(const json &r) {
  for (const char *key :
       {"step_time_us", "compute_us", "exposed_comm_us", "serial_us",
        "lower_bound_us", "peak_memory_bytes", "overlap_limit", "ops",
        "per_kind_limits", "memory_limit"})
    REQUIRE_MESSAGE(r.contains(key), key);
  const double step = r["step_time_us"], eps = 1e-6 * (1 + step);
  CHECK(step + eps >= r["lower_bound_us"].get<double>());
  CHECK(step <= r["serial_us"].get<double>() + eps);
  CHECK(step + eps >= r["compute_us"].get<double>());
  CHECK(r["forward_sim_us"].get<double>() == doctest::Approx(step));
  CHECK(r["exposed_comm_us"].get<double>() <= r["comm_us"].get<double>() + eps);
  CHECK(r["results_only_comm_us"].get<double>() >= 0);
  CHECK(r["results_only_comm_us"].get<double>() <=
        r["exposed_comm_us"].get<double>() + eps);
  const json &ops = r["ops"];
  for (size_t i = 0; i < ops.size(); ++i) {
    const json &op = ops[i];
    for (const char *key :
         {"name", "kind", "stream", "start_us", "end_us", "deps"})
      REQUIRE_MESSAGE(op.contains(key), key);
    CHECK((op["kind"] == "compute" || op["kind"] == "collective"));
    CHECK(op["end_us"].get<double>() >= op["start_us"].get<double>());
    CHECK(op["end_us"].get<double>() <= step + eps);
    for (const json &dep : op["deps"]) {
      REQUIRE(dep.get<size_t>() < ops.size());
      CHECK(ops[dep.get<size_t>()]["end_us"].get<double>() <=
            op["start_us"].get<double>() + eps);
    }
  }
}

} // namespace

TEST_CASE("Pipeline: propagation and explicit collectives, then schedule") {
  const PipelineResult r = run(kMegatronMlp, realOptions());
  REQUIRE(r.program.collectives.size() == 1);
  const CollectiveInfo &ar = r.program.collectives[0];
  CHECK((ar.kind == CollectiveKind::AllReduce));
  REQUIRE(ar.groups);
  CHECK(*ar.groups ==
        std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 4, 5, 6, 7}});
  CHECK(ar.comm_type == "single_partition");
  CHECK(ar.bytes == 4096 * 4096 * 2); // the full partial sum on each GPU
  const json report = json::parse(reportJson(r.program, r.schedule));
  checkReport(report);
  CHECK(collectiveCounts(report) ==
        std::map<std::string, int>{{"all-reduce", 1}});
  CHECK(report["topology"]["num_devices"] == 8);
  // The all-reduce needs the second matmul and nothing runs after it but
  // the return: its whole time is exposed.
  CHECK(report["exposed_comm_us"].get<double>() == doctest::Approx(ar.time_us));
  // ... and only the step's result reads it.
  CHECK(report["results_only_comm_us"].get<double>() ==
        doctest::Approx(ar.time_us));
  CHECK(summaryText(r.program, r.schedule).find("read by no kernel") !=
        std::string::npos);
  // A kernel reading the sum: as exposed, and now read by a kernel.
  const std::string then_tanh =
      test::replacedAll(kMegatronMlp, "  return %y : tensor<4096x4096xbf16>",
                        "  %z = stablehlo.tanh %y : tensor<4096x4096xbf16>\n"
                        "  return %z : tensor<4096x4096xbf16>");
  REQUIRE(then_tanh != kMegatronMlp);
  const PipelineResult t = run(then_tanh, realOptions());
  CHECK(t.schedule.exposed_comm_us == doctest::Approx(ar.time_us));
  CHECK(t.schedule.results_only_comm_us == 0);
  CHECK(summaryText(t.program, t.schedule).find("read by no kernel") ==
        std::string::npos);
  // Through a reshape (a bitcast: no kernel, no time) to the result: still
  // read by no kernel; through it to the tanh: read by one.
  const std::string reshaped = test::replacedAll(
      kMegatronMlp, "  return %y : tensor<4096x4096xbf16>",
      "  %r = stablehlo.reshape %y : (tensor<4096x4096xbf16>) -> "
      "tensor<16777216xbf16>\n"
      "  %b = stablehlo.reshape %r : (tensor<16777216xbf16>) -> "
      "tensor<4096x4096xbf16>\n"
      "  return %b : tensor<4096x4096xbf16>");
  const PipelineResult through = run(reshaped, realOptions());
  CHECK(through.schedule.results_only_comm_us == doctest::Approx(ar.time_us));
  const PipelineResult into = run(
      test::replacedAll(reshaped, "  return %b : tensor<4096x4096xbf16>",
                        "  %z = stablehlo.tanh %b : tensor<4096x4096xbf16>\n"
                        "  return %z : tensor<4096x4096xbf16>"),
      realOptions());
  CHECK(into.schedule.exposed_comm_us == doctest::Approx(ar.time_us));
  CHECK(into.schedule.results_only_comm_us == 0);
  // Without propagation the module has no collective at all.
  PipelineOptions none = realOptions();
  none.propagate = false;
  CHECK(run(kMegatronMlp, none).program.collectives.empty());
}

TEST_CASE("Pipeline: errors come back as values with their stage") {
  PipelineResult r = runSchedulePipeline("func.func @main(", realOptions());
  CHECK_FALSE(r.ok);
  CHECK(r.stage == "parse");
  CHECK_FALSE(r.diagnostics.empty());
  PipelineOptions bad = realOptions();
  bad.scheduler.kind_limits[size_t(CollectiveKind::AllReduce)] = 4;
  r = runSchedulePipeline(kMegatronMlp, bad);
  CHECK_FALSE(r.ok);
  CHECK(r.stage == "schedule");
}

TEST_CASE("Pipeline: dynamic shapes are refused with where and why") {
  // Shardy propagates a module whose only dynamic shapes are on function
  // arguments; the schedule cannot count the bytes of such a step.
  PipelineResult r = runSchedulePipeline(
      "func.func @main(%a: tensor<i64>, %b: tensor<?xf32>) -> tensor<?xf32> "
      "{\n  return %b : tensor<?xf32>\n}\n",
      realOptions());
  CHECK_FALSE(r.ok);
  CHECK(r.stage == "program");
  CHECK(r.error.find("tensor<?xf32>") != std::string::npos);
  CHECK(r.error.find("static shape") != std::string::npos);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].loc.line == 1);
}

TEST_CASE("Pipeline: a module in GSPMD form is imported first") {
  const char *gspmd = R"(
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1024x4096xbf16> {mhlo.sharding = "{devices=[8,1]<=[8]}"},
                         %arg1: tensor<4096x4096xbf16> {mhlo.sharding = "{replicated}"})
      -> (tensor<1024x4096xbf16> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<1024x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1024x4096xbf16>
    return %0 : tensor<1024x4096xbf16>
  }
}
)";
  PipelineResult r = run(gspmd, realOptions());
  CHECK(r.program.topology.input_form == "gspmd");
  CHECK(r.program.topology.num_devices == 8);
  CHECK(r.program.topology.device_count_source == "mesh @mesh");
  // Without shardings the declared count is used, with a warning.
  std::string plain = gspmd;
  for (const char *s : {"{mhlo.sharding = \"{devices=[8,1]<=[8]}\"}",
                        "{mhlo.sharding = \"{replicated}\"}"})
    for (size_t at; (at = plain.find(s)) != std::string::npos;)
      plain.erase(at, std::string(s).size());
  PipelineResult p = run(plain, realOptions());
  CHECK(p.program.topology.input_form == "shardy");
  CHECK(p.program.topology.num_devices == 8);
  CHECK(p.program.topology.device_count_source ==
        "mhlo.num_partitions x mhlo.num_replicas");
  bool warned = false;
  for (const Diagnostic &d : p.diagnostics)
    warned = warned || d.message.find("nothing in it reads as a sharding") !=
                           std::string::npos;
  CHECK(warned);
}

TEST_CASE("Pipeline: the report says whether a step fits device memory") {
  PipelineOptions small = realOptions();
  small.device_memory_bytes = 1 << 20; // 1 MiB: the MLP's weights do not fit
  PipelineResult r = run(kMegatronMlp, small);
  json report = json::parse(reportJson(r.program, r.schedule));
  CHECK(report["memory_per_device"]["capacity_bytes"] == 1 << 20);
  CHECK(report["memory_per_device"]["fits"] == false);
  CHECK(summaryText(r.program, r.schedule).find("DOES NOT FIT") !=
        std::string::npos);
  // Why: the parameters and the temporaries live at the peak, which add up
  // to it, each named by the op in ops[] that defines it.
  const json &memory = report["memory_per_device"];
  int64_t accounted = memory["parameter_bytes"].get<int64_t>() +
                      memory["other_live"]["bytes"].get<int64_t>();
  std::set<std::string> ops;
  for (const json &op : report["ops"])
    ops.insert(op["name"].get<std::string>());
  REQUIRE(!memory["largest_live"].empty());
  for (const json &buffer : memory["largest_live"]) {
    accounted += buffer["bytes"].get<int64_t>();
    CHECK(ops.count(buffer["name"].get<std::string>()) == 1);
  }
  CHECK(accounted == memory["peak_bytes"].get<int64_t>());
  CHECK(ops.count(memory["peak_at"].get<std::string>()) == 1);
  CHECK(summaryText(r.program, r.schedule).find("at the peak, while ") !=
        std::string::npos);
  PipelineOptions big = realOptions();
  big.device_memory_bytes = int64_t{80} << 30;
  PipelineResult fits = run(kMegatronMlp, big);
  CHECK(json::parse(reportJson(
            fits.program, fits.schedule))["memory_per_device"]["fits"] == true);
}

TEST_CASE("Pipeline: a call to a declaration stays a call") {
  PipelineResult r = run("func.func private @f() -> tensor<4xf32>\n"
                         "func.func @main() -> tensor<4xf32> {\n"
                         "  %0 = call @f() : () -> tensor<4xf32>\n"
                         "  return %0 : tensor<4xf32>\n}\n",
                         realOptions());
  bool call = false;
  for (int64_t i = 0; i < r.program.graph.size(); ++i)
    call = call || r.program.graph.node(i).name.rfind("func.call", 0) == 0;
  CHECK(call);
}

TEST_CASE("StableHLO collectives: groups from replica_groups and pairs") {
  PipelineOptions o = realOptions();
  o.propagate = false;
  const PipelineResult r = run(kStablehlo, o);
  CHECK(r.program.topology.num_devices == 16);
  CHECK(r.program.topology.num_nodes == 2);
  const auto &c = r.program.collectives;
  REQUIRE(c.size() == 5);
  CHECK((c[0].kind == CollectiveKind::AllReduce));
  CHECK(c[0].groups->size() == 2);
  CHECK(c[0].comm_type == "single_partition");
  CHECK(c[0].bytes == 1024 * 1024 * 4);
  CHECK((c[1].kind == CollectiveKind::AllGather));
  CHECK((*c[1].groups)[1] == std::vector<int64_t>{1, 9});
  CHECK(c[1].comm_type != "single_partition"); // across the two nodes
  CHECK(c[1].bytes == 2048 * 1024 * 4);        // output bytes
  CHECK((c[2].kind == CollectiveKind::CollectivePermute));
  CHECK(*c[2].groups == std::vector<std::vector<int64_t>>{{0, 1}, {1, 0}});
  CHECK((c[3].kind == CollectiveKind::ReduceScatter));
  CHECK(c[3].bytes == 2048 * 1024 * 4); // input bytes
  CHECK((c[4].kind == CollectiveKind::AllToAll));
  for (const CollectiveInfo &info : c)
    CHECK(info.time_us > 0);
  checkReport(json::parse(reportJson(r.program, r.schedule)));
}

TEST_CASE("StableHLO collectives: empty groups mean every device") {
  const char *text = R"(
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<256xf32>) -> tensor<256xf32> {
  %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<> : tensor<0x0xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<256xf32>) -> tensor<256xf32>
  return %0 : tensor<256xf32>
}
)";
  PipelineOptions o = realOptions();
  o.propagate = false;
  const PipelineResult r = run(text, o);
  REQUIRE(r.program.collectives.size() == 1);
  CHECK(*r.program.collectives[0].groups ==
        std::vector<std::vector<int64_t>>{{0, 1, 2, 3}});
}

TEST_CASE("Collectives over members spread unevenly across nodes: through "
          "the sparsest node; what no model costs takes XLA's fallback, "
          "said in the assumptions") {
  // Three groups of 12 consecutive devices on nodes of 8: each takes a
  // whole node and half of another. XLA's S-curve (3 communicators on a
  // node of 8 GPUs) fails. The all-reduce is a ring of 12 whose narrowest
  // crossing has 4 NICs: XLA's ring for 12 GPUs, 4 a node.
  const std::string text = R"(
sdy.mesh @mesh = <["x"=36]>
func.func @main(%arg0: tensor<1536x1024xf32>) -> tensor<1536x1024xf32> {
  %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[GROUPS]> : tensor<3x12xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1536x1024xf32>) -> tensor<1536x1024xf32>
  %1 = "stablehlo.all_to_all"(%0) <{split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 12 : i64, replica_groups = dense<[GROUPS]> : tensor<3x12xi64>}> : (tensor<1536x1024xf32>) -> tensor<1536x1024xf32>
  return %1 : tensor<1536x1024xf32>
}
)";
  std::string module = text;
  for (size_t at = module.find("GROUPS"); at != std::string::npos;
       at = module.find("GROUPS"))
    module.replace(at, 6,
                   "[0,1,2,3,4,5,6,7,8,9,10,11],[12,13,14,15,16,17,18,19,20,21,"
                   "22,23],[24,25,26,27,28,29,30,31,32,33,34,35]");
  PipelineOptions o = realOptions();
  o.propagate = false;
  const PipelineResult r = run(module, o);
  REQUIRE(r.ok);
  REQUIRE(r.program.collectives.size() == 2);
  const CollectiveInfo &ar = r.program.collectives[0];
  CHECK(ar.model == "s-curve/ring over unevenly spread members");
  const cost::SolConfig &sol = o.program.sol;
  // Its time: that ring, plus reading and writing its buffer in HBM.
  const double ring =
      *cost::ringLatencyUs(sol, ar.bytes, 3, cost::SolCollective::AllReduce, 2);
  const double hbm = 1e6 * double(float(2 * ar.bytes) /
                                  float(o.program.hardware.hbm_bytes_per_s));
  CHECK(ar.time_us == doctest::Approx(ring + hbm).epsilon(1e-9));
  // The all-to-all: XLA's formula for the GPU with the most peers on other
  // nodes (12 - 4 = 8, as XLA's 4 a node x 2 other nodes).
  const CollectiveInfo &a2a = r.program.collectives[1];
  CHECK(a2a.model == "s-curve/all-to-all over unevenly spread members");
  const double a2a_hbm =
      1e6 *
      double(float(2 * a2a.bytes) / float(o.program.hardware.hbm_bytes_per_s));
  CHECK(
      a2a.time_us ==
      doctest::Approx(*cost::allToAllLatencyUs(sol, a2a.bytes, 3, 2) + a2a_hbm)
          .epsilon(1e-9));
  // A network no model can cost (no NIC speed): XLA's SolLatencyEstimator
  // then asks its wrapped estimator (kHighLatency, 5,000 us), and the
  // report says so (costing it 0 would hide it).
  o.program.sol.nic_speed_gbps = 0;
  const PipelineResult none = run(module, o);
  REQUIRE(none.ok);
  for (const CollectiveInfo &c : none.program.collectives) {
    CHECK(c.time_us == 5000);
    CHECK(c.model == "fallback");
  }
  bool said = false;
  for (const std::string &a : none.program.assumptions)
    said |= a.rfind("not costed: 2 collectives no model could cost", 0) == 0 &&
            a.find("all_to_all@") != std::string::npos;
  CHECK(said);
}

TEST_CASE("Pipeline: memory limit from the device, rerun loop reported") {
  PipelineOptions o = realOptions();
  o.device_memory_bytes = presetDeviceMemoryBytes("h100");
  PipelineResult r = run(kMegatronMlp, o);
  const int64_t params = r.schedule.parameter_bytes;
  CHECK(params == (4096 * 4096 + 2 * 4096 * 2048) * 2);
  REQUIRE(r.schedule.config.memory_limit_bytes);
  CHECK(*r.schedule.config.memory_limit_bytes ==
        gpuMemoryLimitBytes(84978434048, params));
  CHECK(r.schedule.reruns == 0);
  // A limit below what the module needs: every rerun is spent and reported.
  o.scheduler.memory_limit_bytes = 1 << 20;
  o.scheduler.reruns = 2;
  r = run(kMegatronMlp, o);
  const json report = json::parse(reportJson(r.program, r.schedule));
  const json &memory = report["memory_limit"];
  CHECK(memory["reruns"] == 2);
  CHECK(memory["initial_limit_bytes"] == 1 << 20);
  CHECK(memory["limit_bytes"] == int64_t(int64_t((1 << 20) * 0.9) * 0.9));
  CHECK(memory["attempts"].size() == 3);
  CHECK(memory["over_limit"] == true);
  checkReport(report);
}

TEST_CASE("Examples: each schedules with the collectives it describes") {
  const std::map<std::string, std::map<std::string, int>> expected = {
      {"dp_mlp", {{"all-reduce", 2}}},
      {"megatron_block", {{"all-reduce", 2}}},
      {"zero_optimizer_step", {{"all-gather", 2}, {"reduce-scatter", 2}}},
      // Its two independent reduce-scatters are combined (8 MiB together).
      {"spmd_sequence_parallel",
       {{"all-gather", 2}, {"reduce-scatter", 1}, {"all-reduce", 2}}}};
  for (const auto &[name, counts] : expected) {
    CAPTURE(name);
    std::ifstream in(std::string(SHARDLAB_SOURCE_DIR) + "/examples/schedule/" +
                     name + ".mlir");
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    const PipelineResult r = run(text.str(), realOptions());
    const json report = json::parse(reportJson(r.program, r.schedule));
    CHECK(collectiveCounts(report) == counts);
    checkReport(report);
  }
}

TEST_CASE("Pipeline: the per-device program pads what its shards do not "
          "divide") {
  // 7 rows on 4 devices: the slice reads an 8th row, each device computes
  // 2 rows, the all-gather moves 8 and the result is cut back to 7.
  const PipelineResult r = run(R"(
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<7x16xf32> {
  %0 = stablehlo.slice %arg0 [0:7, 0:16] : (tensor<8x16xf32>) -> tensor<7x16xf32>
  %1 = stablehlo.tanh %0 : tensor<7x16xf32>
  return %1 : tensor<7x16xf32>
}
)",
                               realOptions());
  REQUIRE(r.program.collectives.size() == 1);
  const CollectiveInfo &gather = r.program.collectives.front();
  CHECK((gather.kind == CollectiveKind::AllGather));
  CHECK(*gather.groups == std::vector<std::vector<int64_t>>{{0, 1, 2, 3}});
  CHECK(gather.bytes == 8 * 16 * 4); // the padded rows travel too
  int slices = 0, tanhs = 0;
  for (int64_t i = 0; i < r.program.graph.size(); ++i) {
    // A fused node stands for its members (the trim fuses into the tanh).
    const Node &node = r.program.graph.node(i);
    std::vector<std::string> ops =
        node.fusion ? node.fusion->members : std::vector<std::string>{};
    if (ops.empty())
      ops.push_back(node.name);
    for (const std::string &name : ops) {
      slices += name.rfind("stablehlo.slice", 0) == 0;
      tanhs += name.rfind("stablehlo.tanh", 0) == 0;
    }
  }
  CHECK(tanhs == 1);
  CHECK(slices == 2); // the widened slice and the trim after the gather
}

TEST_CASE("Validation bands: the kind of an estimate picks its band, or "
          "all runs when too few are of its kind") {
  CHECK(schedule::costKind(100, 10) == "compute-bound");
  CHECK(schedule::costKind(100, 40) == "mixed");
  CHECK(schedule::costKind(100, 70) == "communication-bound");
  CHECK_FALSE(schedule::validationBand(0, 0, 1024));
  // Nothing was measured on 8 devices: no band, and the reason.
  const auto small = schedule::validationBand(100, 10, 8);
  REQUIRE(small);
  CHECK(small->kind == "none");
  CHECK(small->runs == 0);
  CHECK(small->note.find("no published run at this scale") == 0);
  // Half the fewest devices measured (440) to twice the most (16384) take
  // a band; just outside, none.
  CHECK(schedule::validationBand(100, 10, 220)->kind != "none");
  CHECK(schedule::validationBand(100, 10, 219)->kind == "none");
  CHECK(schedule::validationBand(100, 10, 32768)->kind != "none");
  CHECK(schedule::validationBand(100, 10, 32769)->kind == "none");
  for (double exposed : {10.0, 40.0, 70.0}) {
    CAPTURE(exposed);
    const auto band = schedule::validationBand(100, exposed, 1024);
    REQUIRE(band);
    CHECK(band->runs >= 3);
    CHECK(band->low > 0);
    CHECK(band->low <= band->high);
    CHECK((band->kind == schedule::costKind(100, exposed) ||
           band->kind == "all"));
    CHECK(band->basis.find("bench/published") != std::string::npos);
    CHECK(band->schedule == "XLA's default schedule");
  }
}

TEST_CASE("Validation bands: an estimate takes the band of the schedule it "
          "was made with") {
  using schedule::BandSchedule;
  const auto plain = schedule::validationBand(100, 10, 1024);
  const auto overlapped =
      schedule::validationBand(100, 10, 1024, BandSchedule::Overlapped);
  REQUIRE(plain);
  REQUIRE(overlapped);
  CHECK(overlapped->schedule.find("--pipeline-collectives") !=
        std::string::npos);
  CHECK(overlapped->runs >= 3);
  // The two schedules' runs are estimated differently: their bands differ.
  CHECK((overlapped->low != plain->low || overlapped->high != plain->high));
  // And a program built with both flags says which one it takes.
  DiagnosticEngine parse_diags;
  auto module = parseModule(R"(
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = stablehlo.add %x, %x : tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
)",
                            parse_diags);
  REQUIRE(module);
  schedule::ProgramOptions options;
  options.hardware = *cost::findHardwarePreset("h100");
  options.sol = cost::solDefaultsFor(options.hardware);
  for (bool both : {false, true}) {
    options.pipeline_collectives = options.stream_per_link = both;
    DiagnosticEngine diags;
    Result<schedule::Program> program =
        schedule::buildProgram(*module, options, diags);
    REQUIRE(program.ok());
    CHECK(program->band_schedule ==
          (both ? BandSchedule::Overlapped : BandSchedule::XlaDefault));
  }
}

TEST_CASE("Pipeline: a table's overlap entry slows what runs beside a "
          "transfer, and the report says so") {
  // A weight gathered while an independent GEMM runs: the all-gather is
  // hidden under it, and the GEMM runs beside its transfer.
  const char *text = R"(
func.func @main(%x: tensor<4096x4096xbf16>, %w: tensor<512x4096xbf16>, %v: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %g = "stablehlo.all_gather"(%w) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>}> : (tensor<512x4096xbf16>) -> tensor<4096x4096xbf16>
  %a = stablehlo.dot_general %x, %v, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %b = stablehlo.dot_general %a, %g, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  return %b : tensor<4096x4096xbf16>
}
)";
  TargetOptions target;
  cost::PerfTable table =
      cost::presetTable(*cost::findHardwarePreset(target.preset));
  target.table = &table;
  Result<PipelineOptions> plain = pipelineOptionsFor(target);
  REQUIRE(plain);
  plain->propagate = false;
  const PipelineResult alone = run(text, *plain);
  REQUIRE(alone.schedule.comm_us > 0);
  REQUIRE(alone.schedule.exposed_comm_us < alone.schedule.comm_us);
  CHECK(alone.schedule.contention_us == 0);
  const auto saying = [](const PipelineResult &r, const char *what) {
    for (const std::string &a : r.program.assumptions)
      if (a.rfind("overlap: ", 0) == 0)
        return a.find(what) != std::string::npos;
    return false;
  };
  CHECK(saying(alone, "not to slow each other"));

  table.overlap = cost::OverlapEntry{1.25, 1.5, "measured by hand"};
  Result<PipelineOptions> slowed = pipelineOptionsFor(target);
  REQUIRE(slowed);
  slowed->propagate = false;
  const PipelineResult s = run(text, *slowed);
  // The GEMM beside the transfer is stretched for as long as the transfer
  // (itself 1.5x slower) is in flight: 0.25 of that time is lost.
  const double transfer = alone.schedule.comm_us * 1.5;
  CHECK(s.schedule.comm_us == doctest::Approx(transfer));
  CHECK(s.schedule.contention_us == doctest::Approx(transfer * (1 - 1 / 1.25)));
  CHECK(s.schedule.step_time_us == doctest::Approx(alone.schedule.step_time_us +
                                                   s.schedule.contention_us));
  CHECK(saying(s, "x1.25 its time, a transfer beside a kernel x1.5"));
  CHECK(saying(s, "the table's overlap entry: measured by hand"));
  const json report = json::parse(reportJson(s.program, s.schedule));
  checkReport(report);
  CHECK(report["contention_us"].get<double>() ==
        doctest::Approx(s.schedule.contention_us));
  CHECK(summaryText(s.program, s.schedule).find("beside transfers") !=
        std::string::npos);
}
