// Strategy comparison: argument roles, Megatron dims, candidate plans and
// their evaluation (shardlab/strategy/strategy.h).
#include "shardlab/cost/perf_table.h"
#include "shardlab/partition_check/partition_check.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/strategy/strategy.h"
#include "shardlab/text/text.h"
#include "strategy/arg_roles.h"
#include "strategy/candidates.h"
#include "strategy/compare_internal.h"
#include "strategy/units.h"

#include "hand_table.h"
#include "text_edit.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

using namespace shardlab;
using namespace shardlab::strategy;

namespace {

// An MLP step: x (data) through w1 then w2, a bias, an upstream gradient
// dy (data only through the batch) and a learning rate.
constexpr const char *kMlp = R"(
func.func @main(%x: tensor<16x8x32xf32>, %w1: tensor<32x128xf32>,
                %w2: tensor<128x32xf32>, %b: tensor<128xf32>,
                %dy: tensor<16x8x32xf32>, %lr: tensor<f32>)
    -> (tensor<16x8x32xf32>, tensor<128x32xf32>) {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [2] x [0] : (tensor<16x8x32xf32>, tensor<32x128xf32>) -> tensor<16x8x128xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<128xf32>) -> tensor<16x8x128xf32>
  %hb = stablehlo.add %h, %bb : tensor<16x8x128xf32>
  %a = stablehlo.tanh %hb : tensor<16x8x128xf32>
  %y = stablehlo.dot_general %a, %w2, contracting_dims = [2] x [0] : (tensor<16x8x128xf32>, tensor<128x32xf32>) -> tensor<16x8x32xf32>
  %dw2 = stablehlo.dot_general %a, %dy, contracting_dims = [0, 1] x [0, 1] : (tensor<16x8x128xf32>, tensor<16x8x32xf32>) -> tensor<128x32xf32>
  %lrb = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
  %st = stablehlo.multiply %dw2, %lrb : tensor<128x32xf32>
  %w2n = stablehlo.subtract %w2, %st : tensor<128x32xf32>
  return %y, %w2n : tensor<16x8x32xf32>, tensor<128x32xf32>
})";

const ArgAnalysis &arg(const ModuleAnalysis &m, const std::string &name) {
  auto it =
      std::find_if(m.args.begin(), m.args.end(),
                   [&](const ArgAnalysis &a) { return a.info.name == name; });
  REQUIRE(it != m.args.end());
  return *it;
}

// As a string: doctest would print an ArgRole through strategy::toString.
std::string roleOf(const ArgAnalysis &a) {
  return std::string(toString(a.info.role));
}

// `text` with `row`'s shardings on its arguments and the mesh `mesh`
// (`<[...]>`); "" when an argument is not found.
std::string withRowShardings(std::string text, const Candidate &row,
                             const std::string &mesh) {
  for (const ArgSharding &arg : row.shardings) {
    const size_t at = text.find(arg.name + ": tensor<");
    if (at == std::string::npos)
      return "";
    text.insert(text.find('>', at) + 1,
                " {sdy.sharding = #sdy.sharding<@mesh, " + arg.sharding + ">}");
  }
  return "sdy.mesh @mesh = " + mesh + "\n" + text;
}

// The row of `c` named `name`, which ran.
const Candidate &rowThatRan(const Comparison &c, const std::string &name) {
  auto it = std::find_if(c.rows.begin(), c.rows.end(),
                         [&](const Candidate &r) { return r.name == name; });
  REQUIRE_MESSAGE(it != c.rows.end(), name);
  REQUIRE_MESSAGE(it->ok, name << ": " << it->error);
  return *it;
}

// A row's collectives: kind -> (calls, per-device bytes of their outputs).
using Totals = std::map<std::string, std::pair<int64_t, int64_t>>;
Totals collectiveTotals(const Candidate &row) {
  Totals got;
  for (const CollectiveTotals &k : row.collectives)
    got[k.kind] = {k.count, k.bytes};
  return got;
}

} // namespace

TEST_CASE("Argument roles: data by the batch, weights by the matmuls") {
  Result<ModuleAnalysis> m = analyzeArguments(kMlp);
  REQUIRE(m);
  CHECK(roleOf(arg(*m, "%x")) == "data");
  CHECK(arg(*m, "%x").sequence_dim == 1);
  // dy is read as a matmul's rhs (the weight gradient), yet the batch
  // reaches it: data, not a weight.
  CHECK(roleOf(arg(*m, "%dy")) == "data");
  CHECK(arg(*m, "%dy").batch_dim == 0);
  CHECK(roleOf(arg(*m, "%b")) == "parameter");
  CHECK(roleOf(arg(*m, "%lr")) == "scalar");
  // Megatron: w1 column-parallel (FFN columns), w2 row-parallel (its
  // contracting FFN dim), both splitting the FFN dimension.
  const ArgAnalysis &w1 = arg(*m, "%w1"), &w2 = arg(*m, "%w2");
  CHECK(roleOf(w1) == "parameter");
  CHECK_FALSE(w1.row_parallel);
  CHECK(w1.column_dims == std::vector<int64_t>{1});
  CHECK(w2.row_parallel);
  CHECK(w2.row_dims == std::vector<int64_t>{0});
}

// tokens [micro-batches, batch, sequence] read one micro-batch per trip.
constexpr const char *kMicroBatchLoop = R"(
func.func @main(%tokens: tensor<4x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<32x32xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<32x32xf32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %z) : tensor<i32>, tensor<32x32xf32>
   cond {
    %more = stablehlo.compare LT, %i, %c4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %more : tensor<i1>
  } do {
    %s = stablehlo.dynamic_slice %tokens, %i, %c0, %c0, sizes = [1, 8, 16] : (tensor<4x8x16xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x16xf32>
    %x = stablehlo.reshape %s : (tensor<1x8x16xf32>) -> tensor<8x16xf32>
    %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %g = stablehlo.dot_general %h, %h, contracting_dims = [0] x [0] : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<32x32xf32>
    %a = stablehlo.add %acc, %g : tensor<32x32xf32>
    %n = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %n, %a : tensor<i32>, tensor<32x32xf32>
  }
  return %r#1 : tensor<32x32xf32>
})";

TEST_CASE("Argument roles: a loop over micro-batches does not hold the "
          "batch") {
  // tokens [micro-batches, batch, sequence]: the loop slices one
  // micro-batch at a time, so the batch is dimension 1 and the sequence 2.
  Result<ModuleAnalysis> m = analyzeArguments(kMicroBatchLoop);
  REQUIRE(m);
  CHECK(roleOf(arg(*m, "%tokens")) == "data");
  CHECK(arg(*m, "%tokens").batch_dim == 1);
  CHECK(arg(*m, "%tokens").sequence_dim == 2);
  CHECK(roleOf(arg(*m, "%w")) == "parameter");
}

TEST_CASE("Argument roles: a batch of one sequence is still the batch") {
  // Long-context steps run micro-batches of one sequence: tokens [4, 1,
  // 16]. The batch is the size-1 dim (which no data-parallel layout can
  // split), the sequence after it (which SP and CP split); and with one
  // micro-batch, [1, 8, 16], the loop's dim is still not the batch.
  const auto with = [](const std::string &text, const test::TextEdits &subs) {
    return test::replacedAll(text, subs);
  };
  Result<ModuleAnalysis> one = analyzeArguments(
      with(kMicroBatchLoop, {{"4x8x16", "4x1x16"},
                             {"1x8x16", "1x1x16"},
                             {"sizes = [1, 8, 16]", "sizes = [1, 1, 16]"},
                             {"8x16xf32", "1x16xf32"},
                             {"8x32xf32", "1x32xf32"}}));
  REQUIRE(one);
  CHECK(arg(*one, "%tokens").batch_dim == 1);
  CHECK(arg(*one, "%tokens").sequence_dim == 2);
  Result<ModuleAnalysis> single = analyzeArguments(
      with(kMicroBatchLoop, {{"4x8x16", "1x8x16"}, {"dense<4>", "dense<1>"}}));
  REQUIRE(single);
  CHECK(arg(*single, "%tokens").batch_dim == 1);
  CHECK(arg(*single, "%tokens").sequence_dim == 2);
}

TEST_CASE("Candidates: every family and split, with non-dividing ones failed") {
  Result<ModuleAnalysis> m = analyzeArguments(kMlp);
  REQUIRE(m);
  std::vector<Plan> plans = candidatePlans(*m, 8);
  // DP, FSDP, DP ZeRO-1 (its reason: no optimizer state), TP, SP, EP, CP
  // (its reason) + (DP×TP, FSDP×TP, DP×SP) for 2×4 and 4×2 + (DP×TP×SP,
  // FSDP×TP×SP) for 2×2×2 + PP (its reason: no layer loops) + HSDP (its
  // reason: the GPUs of a node are not known).
  REQUIRE(plans.size() == 17);
  auto named = [&](const std::string &name) -> const Plan & {
    auto it = std::find_if(plans.begin(), plans.end(),
                           [&](const Plan &p) { return p.name == name; });
    REQUIRE(it != plans.end());
    return *it;
  };
  CHECK(named("DP").args[0] == ArgAxes{{"data"}, {}, {}});
  CHECK(named("DP").args[1] == ArgAxes{{}, {}});
  CHECK(named("DP ZeRO-1").error.find("no optimizer state") !=
        std::string::npos);
  CHECK(named("TP").args[1] == ArgAxes{{}, {"model"}});
  CHECK(named("TP").args[2] == ArgAxes{{"model"}, {}});
  CHECK(named("FSDP").args[1] == ArgAxes{{}, {"data"}});
  // The sequence (8) splits over 8.
  CHECK(named("SP").args[0] == ArgAxes{{}, {"seq"}, {}});
  CHECK(named("SP").error.empty());
  // 3-D: data, sequence, then the tensor axis minor (inside a node).
  const Plan &three = named("FSDP×TP×SP 2×2×2");
  CHECK(three.mesh ==
        std::vector<MeshAxis>{{"data", 2}, {"seq", 2}, {"model", 2}});
  CHECK(three.args[0] == ArgAxes{{"data"}, {"seq"}, {}});
  CHECK(three.args[1] == ArgAxes{{"data"}, {"model"}});
  CHECK(named("DP×TP×SP 2×2×2").args[1] == ArgAxes{{}, {"model"}});
  CHECK(named("PP").error.find("no pipeline: ") == 0);
  CHECK(named("HSDP").error.find("not known") != std::string::npos);
  // Nodes of 8: HSDP 4×2, 2×4 and HSDP×TP 2×2×2, no failed row.
  std::vector<Plan> nodes = candidatePlans(*m, 8, 8);
  CHECK(std::count_if(nodes.begin(), nodes.end(), [](const Plan &p) {
          return p.name.rfind("HSDP", 0) == 0 && p.error.empty();
        }) == 3);
  CHECK(std::none_of(nodes.begin(), nodes.end(),
                     [](const Plan &p) { return p.name == "HSDP"; }));
  // A node of one GPU, or 2 devices (no 2 replicas of a group of 2).
  for (auto [devices, per_node, why] :
       {std::tuple<int64_t, int64_t, const char *>{8, 1, "one GPU"},
        {2, 8, "divides the 2 devices"}}) {
    std::vector<Plan> few = candidatePlans(*m, devices, per_node);
    auto hsdp = std::find_if(few.begin(), few.end(),
                             [](const Plan &p) { return p.name == "HSDP"; });
    REQUIRE(hsdp != few.end());
    CHECK(hsdp->error.find(why) != std::string::npos);
  }
  // 16 devices: the sequence of 8 does not divide.
  std::vector<Plan> sixteen = candidatePlans(*m, 16);
  auto sp = std::find_if(sixteen.begin(), sixteen.end(),
                         [](const Plan &p) { return p.name == "SP"; });
  REQUIRE(sp != sixteen.end());
  CHECK(sp->error.find("dimension 1 of %x (size 8) does not divide by 16") !=
        std::string::npos);
}

TEST_CASE("Candidates: FSDP pads a parameter none of whose dimensions "
          "divides") {
  // 6 devices: the batch of 6 divides, neither 32 nor 20 of w does; FSDP
  // splits w's largest dimension with padding (as FSDP pads its flat
  // shards), where TP's split of 20 still fails.
  Result<ModuleAnalysis> m = analyzeArguments(R"(
func.func @main(%x: tensor<6x32xf32>, %w: tensor<32x20xf32>) -> tensor<6x20xf32> {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<6x32xf32>, tensor<32x20xf32>) -> tensor<6x20xf32>
  return %y : tensor<6x20xf32>
})");
  REQUIRE(m);
  std::vector<Plan> plans = candidatePlans(*m, 6);
  auto named = [&](const std::string &name) -> const Plan & {
    auto it = std::find_if(plans.begin(), plans.end(),
                           [&](const Plan &p) { return p.name == name; });
    REQUIRE(it != plans.end());
    return *it;
  };
  const Plan &fsdp = named("FSDP");
  CHECK(fsdp.error.empty());
  CHECK(fsdp.args[1] == ArgAxes{{"data"}, {}});
  CHECK(fsdp.padded == std::vector<std::pair<size_t, size_t>>{{1, 0}});
  CHECK(named("TP").error.find("does not divide") != std::string::npos);
  CHECK(named("DP").padded.empty());
}

TEST_CASE("Candidates: a weight's optimizer state is split as the weight") {
  // m is updated elementwise with w (Adam's moment): split any other way,
  // every update would reshard it.
  Result<ModuleAnalysis> m = analyzeArguments(R"(
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %m: tensor<16x32xf32>) -> (tensor<8x32xf32>, tensor<16x32xf32>) {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %g = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %n = stablehlo.add %m, %g : tensor<16x32xf32>
  return %y, %n : tensor<8x32xf32>, tensor<16x32xf32>
})");
  REQUIRE(m);
  CHECK(arg(*m, "%m").column_dims == arg(*m, "%w").column_dims);
  CHECK(arg(*m, "%m").info.reason.find("split like %w") != std::string::npos);
  CHECK(arg(*m, "%m").optimizer_state);
  CHECK_FALSE(arg(*m, "%w").optimizer_state);
  for (const Plan &plan : candidatePlans(*m, 4)) {
    CAPTURE(plan.name);
    if (!plan.error.empty())
      continue; // a row with its reason (EP, CP, PP) shards nothing
    if (plan.name.find("ZeRO-1") == std::string::npos) {
      CHECK(plan.args[2] == plan.args[1]);
      continue;
    }
    // ZeRO-1 splits it over "data" too, on its largest free dim.
    if (plan.name == "DP ZeRO-1") {
      CHECK(plan.args[1] == ArgAxes{{}, {}});
      CHECK(plan.args[2] == ArgAxes{{}, {"data"}});
    } else {
      CHECK(plan.name == "DP×TP 2×2 ZeRO-1");
      CHECK(plan.args[1] == ArgAxes{{}, {"model"}});
      CHECK(plan.args[2] == ArgAxes{{"data"}, {"model"}});
    }
  }
}

// One step of a two-matmul layer with a momentum-like optimizer: the
// gradient g = x^T (x w) is added into the state m, and w moves by it.
constexpr const char *kStep = R"(
func.func @main(%x: tensor<1024x512xf32>, %w: tensor<512x2048xf32>, %m: tensor<512x2048xf32>) -> (tensor<512x2048xf32>, tensor<512x2048xf32>) {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<1024x512xf32>, tensor<512x2048xf32>) -> tensor<1024x2048xf32>
  %g = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<1024x512xf32>, tensor<1024x2048xf32>) -> tensor<512x2048xf32>
  %m2 = stablehlo.add %m, %g : tensor<512x2048xf32>
  %w2 = stablehlo.subtract %w, %m2 : tensor<512x2048xf32>
  return %w2, %m2 : tensor<512x2048xf32>, tensor<512x2048xf32>
})";

TEST_CASE("compareStrategies: ZeRO-1 by hand, against DP") {
  Result<ModuleAnalysis> m = analyzeArguments(kStep);
  REQUIRE(m);
  CHECK(arg(*m, "%m").optimizer_state);
  CHECK_FALSE(arg(*m, "%w").optimizer_state);
  // Result 0 is w's new value; result 1 is the state's, no weight's.
  CHECK(m->updates == std::vector<int64_t>{1, -1});
  CompareOptions options;
  options.devices = 4;
  options.pipeline = *schedule::pipelineOptionsFor({});
  Result<Comparison> c = compareStrategies(kStep, options);
  REQUIRE(c);
  auto row = [&](const std::string &name) { return rowThatRan(*c, name); };
  const int64_t w_bytes = 512 * 2048 * 4; // 4 MiB, as g and m
  // DP: g is partial on each device (x split on the batch), all-reduced
  // whole; the update runs replicated.
  const Candidate dp = row("DP");
  CHECK(collectiveTotals(dp) == Totals{{"all-reduce", {1, w_bytes}}});
  // ZeRO-1: m split over "data" on its dim 1 (2048); g reduce-scattered
  // to m's split (a quarter on each device), the update runs on the
  // quarter, and the new w, pinned to w's replicated sharding, is
  // all-gathered whole: the same bytes on the wire as DP's all-reduce.
  const Candidate zero = row("DP ZeRO-1");
  CHECK(zero.shardings[2].sharding == "[{}, {\"data\"}p1]");
  CHECK(collectiveTotals(zero) == Totals{{"all-gather", {1, w_bytes}},
                                         {"reduce-scatter", {1, w_bytes / 4}}});
  // Each device holds a quarter of m: 3 MiB less of its arguments.
  CHECK(dp.argument_bytes - zero.argument_bytes == 3 * w_bytes / 4);
  // Its per-device program, the new w pinned replicated as the plan pins
  // it, computes what the global step does (both results).
  std::string sharded = kStep;
  const std::string results =
      "-> (tensor<512x2048xf32>, tensor<512x2048xf32>) {";
  REQUIRE(sharded.find(results) != std::string::npos);
  sharded.replace(sharded.find(results), results.size(),
                  "-> (tensor<512x2048xf32> {sdy.sharding = "
                  "#sdy.sharding<@mesh, [{}, {}]>}, tensor<512x2048xf32>) {");
  sharded = withRowShardings(sharded, zero, zero.mesh);
  REQUIRE_FALSE(sharded.empty());
  const partition_check::Outcome run =
      partition_check::checkPartitioned(sharded, {});
  CHECK_MESSAGE(run.status == partition_check::Status::Match, run.message);
}

// Every row of kMlp on 8 devices that is a layout only (its shardings on
// the arguments: no pinned ZeRO-1 weights, no split micro-batches, no
// recomputation, no pipeline) is run on 8 simulated devices: what its
// per-device program computes must equal the global module's values.
TEST_CASE("compareStrategies: every layout's per-device program computes "
          "the global values") {
  CompareOptions options;
  options.devices = 8;
  options.pipeline = *schedule::pipelineOptionsFor({});
  Result<Comparison> c = compareStrategies(kMlp, options);
  REQUIRE(c);
  std::vector<std::string> checked;
  for (const Candidate &row : c->rows) {
    if (!row.ok || row.is_user ||
        row.name.find("ZeRO-1") != std::string::npos ||
        row.name.find("mb÷") != std::string::npos ||
        row.name.find("recompute") != std::string::npos)
      continue;
    CAPTURE(row.name);
    const std::string sharded = withRowShardings(kMlp, row, row.mesh);
    REQUIRE_FALSE(sharded.empty());
    const partition_check::Outcome run =
        partition_check::checkPartitioned(sharded, {});
    CHECK_MESSAGE(run.status == partition_check::Status::Match, run.message);
    checked.push_back(row.name);
  }
  // The families, hybrid sharding among them, each checked.
  for (const char *name :
       {"DP", "FSDP", "TP", "SP", "DP×TP 4×2", "FSDP×TP 2×4", "DP×SP 2×4",
        "HSDP 4×2", "HSDP 2×4", "HSDP×TP 2×2×2", "FSDP×TP×SP 2×2×2"}) {
    CAPTURE(name);
    CHECK(std::find(checked.begin(), checked.end(), name) != checked.end());
  }

  SUBCASE("the check fails on a wrong program") {
    // HSDP×TP 2×2×2's program with its first all-reduce dropped (its users
    // read their own device's part of the sum) computes other values.
    const auto hsdp =
        std::find_if(c->rows.begin(), c->rows.end(), [](const Candidate &r) {
          return r.name == "HSDP×TP 2×2×2";
        });
    REQUIRE(hsdp != c->rows.end());
    partition_check::Options faulty;
    int dropped = 0;
    faulty.after_partition = [&](Module &module) {
      Operation *first = nullptr;
      walk(module.op(), [&](Operation &op) {
        if (!first && op.is("stablehlo.all_reduce"))
          first = &op;
      });
      if (!first)
        return;
      first->result(0)->replaceAllUsesWith(first->operand(0));
      first->dropAllUses();
      first->parentBlock()->erase(first);
      ++dropped;
    };
    const partition_check::Outcome run = partition_check::checkPartitioned(
        withRowShardings(kMlp, *hsdp, hsdp->mesh), faulty);
    CHECK(dropped == 1);
    CHECK(run.status == partition_check::Status::Mismatch);
  }
}

TEST_CASE("Candidates: tensor parallelism stays inside a node") {
  Result<ModuleAnalysis> m = analyzeArguments(kMlp);
  REQUIRE(m);
  // 16 devices, nodes of 4: "model" axes of 2 and 4 are tried, 8 and 16
  // are not, with the reason.
  for (const Plan &plan : candidatePlans(*m, 16, 4)) {
    CAPTURE(plan.name);
    const bool tensor = plan.name.find("TP") != std::string::npos;
    int64_t model = 0;
    for (const MeshAxis &axis : plan.mesh)
      model = axis.name == "model" ? axis.size : model;
    const bool spans =
        plan.error.find("would span nodes of 4 GPUs") != std::string::npos;
    if (tensor && model > 4 && plan.error.find("divide") == std::string::npos)
      CHECK(spans);
    else
      CHECK_FALSE(spans);
  }
}

TEST_CASE("compareStrategies: a layout whose arguments alone exceed the "
          "device memory is not scheduled") {
  // kMlp on 8 devices: DP keeps both weights whole (2 x 16 KiB, the bias,
  // x and dy split: 37,380 B per device); FSDP splits them (8,260 B).
  CompareOptions options;
  options.devices = 8;
  Result<schedule::PipelineOptions> pipeline =
      schedule::pipelineOptionsFor(schedule::TargetOptions{});
  REQUIRE(pipeline);
  options.pipeline = *pipeline;
  options.pipeline.device_memory_bytes = 20000;
  options.only = {"DP", "FSDP"};
  Result<Comparison> c = compareStrategies(kMlp, options);
  REQUIRE(c);
  for (const Candidate &row : c->rows) {
    CAPTURE(row.name);
    if (row.name == "FSDP") {
      CHECK(row.ok);
      // Of its peak, the arguments as split: 8,260 B by hand.
      CHECK(row.argument_bytes == 8260);
      CHECK(row.peak_memory_bytes >= row.argument_bytes);
    }
    if (row.name == "DP" || row.name == "as written") {
      CHECK_FALSE(row.ok);
      CHECK(row.stage == "memory");
    }
    if (row.name == "DP")
      CHECK(row.error.find("arguments alone take 37380 B per device, more "
                           "than the 20000 B") != std::string::npos);
  }
}

TEST_CASE("compareStrategies: the user's row, sorted rows, reasons") {
  CompareOptions options;
  options.devices = 8;
  Result<schedule::PipelineOptions> pipeline =
      schedule::pipelineOptionsFor(schedule::TargetOptions{});
  REQUIRE(pipeline);
  options.pipeline = *pipeline;
  Result<Comparison> c = compareStrategies(kMlp, options);
  REQUIRE(c);
  CHECK(c->devices == 8);
  // 15 candidates (CP and DP ZeRO-1 with their reasons), HSDP 4×2, 2×4
  // and HSDP×TP 2×2×2 (8 GPUs a node by default), the pipeline's reason
  // (no layer loops) and the module as written
  CHECK(c->rows.size() == 20);
  CHECK(std::count_if(c->rows.begin(), c->rows.end(),
                      [](const Candidate &r) { return r.is_user; }) == 1);
  double last = 0;
  bool failed_seen = false;
  for (const Candidate &row : c->rows) {
    if (!row.ok) {
      failed_seen = true;
      CHECK_FALSE(row.error.empty());
      continue;
    }
    CHECK_FALSE(failed_seen);
    CHECK(row.step_time_us >= last);
    last = row.step_time_us;
  }
  // DP all-reduces the weight gradient; TP needs no all-reduce of it.
  auto dp = std::find_if(c->rows.begin(), c->rows.end(),
                         [](const Candidate &r) { return r.name == "DP"; });
  REQUIRE(dp != c->rows.end());
  REQUIRE(dp->ok);
  CHECK(std::any_of(dp->collectives.begin(), dp->collectives.end(),
                    [](const CollectiveTotals &t) {
                      return t.kind == "all-reduce" && t.bytes > 0;
                    }));
  CHECK(dp->shardings[0].sharding == "[{\"data\"}p0, {}, {}]");
  // The module as written (one device, no collectives) is the fastest
  // here: nothing to explain.
  REQUIRE(c->rows.front().is_user);
  CHECK(c->why_fastest.empty());
  SUBCASE("a module that does not parse is an error") {
    CHECK_FALSE(compareStrategies("func.func @main(", options));
  }
}

TEST_CASE("whyFastest: each collective kind gone, added or changed, "
          "compute, exposed communication, memory") {
  Candidate user, fast, other;
  user.is_user = user.ok = fast.ok = other.ok = true;
  user.name = "as written";
  fast.name = "DP×SP 2×4";
  user.compute_us = 489, fast.compute_us = 505;
  user.exposed_comm_us = 281, fast.exposed_comm_us = 0;
  user.collectives = {{"all-reduce", 2, 64 << 20, 281, 281},
                      {"all-gather", 4, 8 << 20, 40, 10}};
  fast.collectives = {{"all-gather", 2, 32 << 20, 66, 0},
                      {"reduce-scatter", 1, 1 << 20, 5, 2}};
  user.peak_memory_bytes = 1 << 30, fast.peak_memory_bytes = int64_t(2) << 30;
  user.capacity_bytes = fast.capacity_bytes = int64_t(80) << 30;
  user.fits = fast.fits = true;
  // Sorted: the fastest first, the module as written after it.
  auto whyOf = [](const std::vector<Candidate> &rows) {
    return whyFastest(rows, fastestRow(rows));
  };
  CHECK(whyOf({fast, user, other}) ==
        std::vector<std::string>{
            "all-gather: 4 x 8.0 MiB -> 2 x 32.0 MiB (0.040 ms -> 0.066 ms, "
            "exposed 0.010 ms -> 0.000 ms)",
            "all-reduce: 2 (64.0 MiB, 0.281 ms, 0.281 ms exposed) no longer "
            "needed",
            "reduce-scatter: 1 added (1.0 MiB, 0.005 ms, 0.002 ms exposed)",
            "compute: 0.489 ms -> 0.505 ms",
            "exposed communication: 0.281 ms -> 0.000 ms",
            "peak memory: 1.00 -> 2.00 GiB of 80.00 GiB"});
  // The same calls, less exposed: said as such.
  Candidate hidden = user;
  hidden.is_user = false;
  hidden.collectives[0].exposed_us = 81;
  CHECK(reasons(user, hidden)[0] ==
        "all-reduce: the same 2 x 64.0 MiB (exposed 0.281 ms -> 0.081 ms)");
  // The module as written is the fastest, or did not run: nothing to say.
  CHECK(whyOf({user, fast}).empty());
  user.ok = false;
  CHECK(whyOf({fast, user}).empty());
}

TEST_CASE("The cheap bound: the fastest fitting step, and the least compute "
          "a recomputed or split layout can have") {
  Candidate fits, over, failed;
  fits.ok = over.ok = true;
  fits.fits = true, over.fits = false;
  fits.step_time_us = 900, over.step_time_us = 500, failed.step_time_us = 1;
  CHECK(fittingBound({over, fits, failed}) == 900);
  CHECK(std::isinf(fittingBound({over, failed})));
  Plan flat;
  CHECK(leastDerivedCompute(flat, 1000, 16) == 1000);
  Plan pipeline;
  pipeline.stages = 8;
  // 16 micro-batches over 8 stages: 23 ticks, 16 of them work.
  CHECK(leastDerivedCompute(pipeline, 2300, 16) == doctest::Approx(1600));
  // One micro-batch split in 4 towards the stages: 4 of 11 ticks.
  pipeline.micro_split = 4;
  CHECK(leastDerivedCompute(pipeline, 1100, 1) == doctest::Approx(400));
}

TEST_CASE("Layouts are derived from the rows that do not fit only where "
          "their arguments leave room") {
  auto row = [](double us, bool fits, int64_t arguments) {
    Candidate r;
    r.ok = true;
    r.step_time_us = us;
    r.fits = fits;
    r.argument_bytes = arguments;
    r.capacity_bytes = 100;
    return r;
  };
  // Fastest first: C (20 us), A (30 us); B's arguments alone fill the
  // device; D fits; E failed; the user's and a recomputed row are left out.
  std::vector<Candidate> rows = {row(30, false, 60), row(10, false, 100),
                                 row(20, false, 99), row(40, true, 50),
                                 row(5, false, 10),  row(1, false, 10),
                                 row(2, false, 10)};
  rows[4].ok = false;
  std::vector<Plan> plans(rows.size());
  plans[5].is_user = true;
  plans[6].recompute = "full";
  CHECK(fastestRows(plans, rows, false, false) == std::vector<size_t>{2, 0});
  CHECK(fastestRows(plans, rows, false, true) == std::vector<size_t>{6, 2, 0});
  CHECK(fastestRows(plans, rows, true, false) == std::vector<size_t>{3});
}

TEST_CASE("compareStrategies: a row whose collectives no model could cost "
          "says so") {
  CompareOptions options;
  options.devices = 16; // two nodes of 8
  Result<schedule::PipelineOptions> pipeline =
      schedule::pipelineOptionsFor(schedule::TargetOptions{});
  REQUIRE(pipeline);
  options.pipeline = *pipeline;
  Result<Comparison> costed = compareStrategies(kMlp, options);
  REQUIRE(costed);
  for (const Candidate &row : costed->rows)
    CHECK(row.uncosted_collectives == 0);
  // No NIC speed: a collective across the two nodes has no model, takes
  // XLA's fallback, and the row and the text say so.
  options.pipeline.program.sol.nic_speed_gbps = 0;
  Result<Comparison> c = compareStrategies(kMlp, options);
  REQUIRE(c);
  std::vector<std::string> flagged;
  for (const Candidate &row : c->rows) {
    if (!row.ok || row.uncosted_collectives == 0)
      continue;
    flagged.push_back(row.name);
    CHECK(std::count_if(row.assumptions.begin(), row.assumptions.end(),
                        [&](const std::string &a) {
                          return a.rfind("not costed: " +
                                             std::to_string(
                                                 row.uncosted_collectives) +
                                             " collective",
                                         0) == 0;
                        }) == 1);
  }
  REQUIRE_FALSE(flagged.empty());
  const std::string text = comparisonText(*c);
  CHECK(text.find("not estimates: collectives no model could cost") !=
        std::string::npos);
  for (const std::string &name : flagged)
    CHECK(text.find(name + " (") != std::string::npos);
}

TEST_CASE("compareStrategies: the rows do not depend on how many threads "
          "evaluate them") {
  CompareOptions options;
  options.devices = 8;
  options.pipeline = *schedule::pipelineOptionsFor({});
  options.threads = 1;
  Result<Comparison> one = compareStrategies(kMlp, options);
  options.threads = 3;
  Result<Comparison> three = compareStrategies(kMlp, options);
  REQUIRE(one);
  REQUIRE(three);
  REQUIRE(one->rows.size() == three->rows.size());
  for (size_t i = 0; i < one->rows.size(); ++i) {
    const Candidate &a = one->rows[i], &b = three->rows[i];
    CHECK(a.name == b.name);
    CHECK(a.ok == b.ok);
    CHECK(a.step_time_us == b.step_time_us);
    CHECK(a.peak_memory_bytes == b.peak_memory_bytes);
    CHECK(a.error == b.error);
  }
}

// A mixture-of-experts layer in GShard's form: tokens in 4 groups of 8,
// a router matmul, dispatch to 4 experts of capacity 2, the experts'
// matmuls (batched over the expert dim), the combine.
constexpr const char *kMoe = R"(
func.func @main(%x: tensor<4x8x16xf32>, %dispatch: tensor<4x8x4x2xf32>, %wr: tensor<16x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> (tensor<4x8x16xf32>, tensor<4x8x4xf32>) {
  %logits = stablehlo.dot_general %x, %wr, contracting_dims = [2] x [0] : (tensor<4x8x16xf32>, tensor<16x4xf32>) -> tensor<4x8x4xf32>
  %xe = stablehlo.dot_general %dispatch, %x, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<4x8x4x2xf32>, tensor<4x8x16xf32>) -> tensor<4x4x2x16xf32>
  %h = stablehlo.dot_general %xe, %w1, batching_dims = [1] x [0], contracting_dims = [3] x [1] : (tensor<4x4x2x16xf32>, tensor<4x16x32xf32>) -> tensor<4x4x2x32xf32>
  %a = stablehlo.tanh %h : tensor<4x4x2x32xf32>
  %y = stablehlo.dot_general %a, %w2, batching_dims = [0] x [0], contracting_dims = [3] x [1] : (tensor<4x4x2x32xf32>, tensor<4x32x16xf32>) -> tensor<4x4x2x16xf32>
  %out = stablehlo.dot_general %dispatch, %y, batching_dims = [0] x [1], contracting_dims = [2, 3] x [0, 2] : (tensor<4x8x4x2xf32>, tensor<4x4x2x16xf32>) -> tensor<4x8x16xf32>
  return %out, %logits : tensor<4x8x16xf32>, tensor<4x8x4xf32>
})";

// kMoe with `row`'s shardings on `mesh` (`<[...]>`), and with the
// exchange constraints the comparer adds to an expert-parallel row
// (shardlab-expert-exchange); "" when it does not load.
std::string moeAsRow(const Candidate &row, const std::string &mesh) {
  const std::string sharded = withRowShardings(kMoe, row, mesh);
  if (sharded.empty() || mesh.find("\"expert\"") == std::string::npos)
    return sharded;
  DiagnosticEngine diags;
  LoadedModule loaded = loadModule(sharded, diags);
  if (!loaded.module ||
      !runNestedPass(*loaded.module, "shardlab-expert-exchange", diags))
    return "";
  return printModule(*loaded.module);
}

// Runs moeAsRow(row, mesh) on simulated devices: "" when its per-device
// program computes what the global module does.
std::string moeRowOnDevices(const Candidate &row, const std::string &mesh) {
  const std::string sharded = moeAsRow(row, mesh);
  if (sharded.empty())
    return "the row's module does not load";
  const partition_check::Outcome run =
      partition_check::checkPartitioned(sharded, {});
  return run.status == partition_check::Status::Match
             ? ""
             : run.message + "\n" + sharded;
}

TEST_CASE("compareStrategies: expert parallelism for a mixture of experts") {
  CompareOptions options;
  options.devices = 4;
  options.pipeline = *schedule::pipelineOptionsFor({});
  Result<Comparison> c = compareStrategies(kMoe, options);
  REQUIRE(c);
  auto row = [&](const std::string &name) {
    auto it = std::find_if(c->rows.begin(), c->rows.end(),
                           [&](const Candidate &r) { return r.name == name; });
    REQUIRE(it != c->rows.end());
    return *it;
  };
  // The expert weights are found by their batched matmuls.
  REQUIRE(c->args.size() == 5);
  CHECK(c->args[3].reason.find("expert weight") != std::string::npos);
  CHECK(c->args[4].reason.find("expert weight") != std::string::npos);
  const Candidate ep = row("EP");
  REQUIRE_MESSAGE(ep.ok, ep.error);
  CHECK(ep.shardings[0].sharding == "[{\"expert\"}p0, {}, {}]");
  CHECK(ep.shardings[4].sharding == "[{\"expert\"}p0, {}, {}]");
  // Worked out from the per-device shapes: the dispatched tokens
  // [4, 4, 2, 16] f32 move from the group dim to the expert dim (a device's
  // [1, 4, 2, 16] becomes [4, 1, 2, 16]: 512 B), the experts' outputs, the
  // same shape, come back (512 B): two all-to-alls, 1024 B, nothing else.
  // (With the expert weights' priority below the batch's, propagation kept
  // the first matmul's output on the groups: four, 3072 B.)
  REQUIRE(ep.collectives.size() == 1);
  CHECK(ep.collectives[0].kind == "all-to-all");
  CHECK(ep.collectives[0].count == 2);
  CHECK(ep.collectives[0].bytes == 1024);
  CHECK(ep.shardings[3].sharding == "[{\"expert\"}p0, {}, {}]");
  // And EP's per-device program computes what the global module does
  // (the layer with the EP row's shardings, run on 4 simulated devices).
  CHECK(moeRowOnDevices(ep, "<[\"expert\"=4]>") == "");
  // A module without experts gets the reason, not a row of numbers.
  Result<Comparison> dense = compareStrategies(kMlp, options);
  REQUIRE(dense);
  auto dense_ep =
      std::find_if(dense->rows.begin(), dense->rows.end(),
                   [](const Candidate &r) { return r.name == "EP"; });
  REQUIRE(dense_ep != dense->rows.end());
  CHECK_FALSE(dense_ep->ok);
  CHECK(dense_ep->error.find("expert weight") != std::string::npos);
}

TEST_CASE("compareStrategies: experts and tensor parallelism together") {
  CompareOptions options;
  options.devices = 4;
  options.pipeline = *schedule::pipelineOptionsFor({});
  Result<Comparison> c = compareStrategies(kMoe, options);
  REQUIRE(c);
  auto it =
      std::find_if(c->rows.begin(), c->rows.end(),
                   [](const Candidate &r) { return r.name == "EP×TP 2×2"; });
  REQUIRE(it != c->rows.end());
  const Candidate &row = *it;
  REQUIRE_MESSAGE(row.ok, row.error);
  // Each expert's matmuls split as Megatron's: the first by its output
  // columns, the second by its input rows, the expert dim over "expert".
  // (Only the expert dim takes the batch's priority.)
  CHECK(row.shardings[3].sharding == "[{\"expert\"}p0, {}, {\"model\"}p1]");
  CHECK(row.shardings[4].sharding == "[{\"expert\"}p0, {\"model\"}p1, {}]");
  // By hand, per device: the dispatched tokens [4, 4, 2, 16] f32 go from
  // the 2 group halves to the 2 expert halves and back (two all-to-alls of
  // [2, 4, 2, 16] -> [4, 2, 2, 16], 1024 B each), and the row-parallel
  // matmul's partial [4, 2, 2, 16] sums over "model" (one all-reduce,
  // 1024 B).
  CHECK(collectiveTotals(row) ==
        Totals{{"all-to-all", {2, 2048}}, {"all-reduce", {1, 1024}}});
  // Its per-device program computes what the global module does.
  CHECK(moeRowOnDevices(row, "<[\"expert\"=2, \"model\"=2]>") == "");
}

TEST_CASE("compareStrategies: experts inside data parallelism, by hand") {
  CompareOptions options;
  options.devices = 4;
  options.pipeline = *schedule::pipelineOptionsFor({});
  Result<Comparison> c = compareStrategies(kMoe, options);
  REQUIRE(c);
  auto row = [&](const std::string &name) { return rowThatRan(*c, name); };
  // DP×EP 2×2: the 4 token groups over data × expert, the 4 experts over
  // "expert" (each replicated over "data"), the router replicated. Per
  // device: the dispatched tokens [4, 4, 2, 16] f32 go from a device's
  // group [1, 4, 2, 16] to its 2 experts of its data half's 2 groups
  // ([2, 2, 2, 16], 512 B), the experts' outputs come back the same way
  // (512 B): two all-to-alls over the 2 expert devices, nothing else.
  const Candidate dp = row("DP×EP 2×2");
  CHECK(dp.mesh == "<[\"data\"=2, \"expert\"=2]>");
  CHECK(dp.shardings[0].sharding == "[{\"data\", \"expert\"}p0, {}, {}]");
  CHECK(dp.shardings[2].sharding == "[{}, {}]");
  CHECK(dp.shardings[3].sharding == "[{\"expert\"}p0, {}, {}]");
  CHECK(collectiveTotals(dp) == Totals{{"all-to-all", {2, 1024}}});
  CHECK(moeRowOnDevices(dp, dp.mesh) == "");
  // The exchange as JAX writes it (shardlab-expert-exchange): the first
  // expert matmul reads the dispatched tokens with their expert dim
  // replicated, then on "expert"; the combine reads the experts' output
  // the other way round. Nothing else is constrained.
  const std::string exchanged = moeAsRow(dp, dp.mesh);
  CHECK(exchanged.find("sdy.sharding_constraint %1 <@mesh, [{?}, {}, {?}, "
                       "{?}]>") != std::string::npos);
  CHECK(exchanged.find("<@mesh, [{?}, {\"expert\"}, {?}, {?}]>") !=
        std::string::npos);
  CHECK(exchanged.find("<@mesh, [{\"expert\"}, {?}, {?}, {?}]>") !=
        std::string::npos);
  CHECK(exchanged.find("<@mesh, [{}, {?}, {?}, {?}]>") != std::string::npos);
  size_t constraints = 0;
  for (size_t at = exchanged.find("sdy.sharding_constraint");
       at != std::string::npos;
       at = exchanged.find("sdy.sharding_constraint", at + 1))
    ++constraints;
  CHECK(constraints == 4);
  // FSDP×EP 2×2: the router also over data × expert (dim 0, 16 rows), the
  // experts' weights over "data" on their largest free dim (w1's F, w2's
  // F) at the parameters' p1. Shardy keeps the experts' F split where the
  // matmuls read them and moves the tokens instead, per device:
  //   all-gather the router 16x4 f32 (256 B); all-to-all the tokens to
  //   their experts (512 B), all-gather them over data ([4, 2, 2, 16],
  //   1,024 B); the first matmul's [4, 4, 2, 32] output, F over data, to
  //   the groups over data and back around tanh (2 all-to-alls of
  //   [2, 2, 2, 32] and [2, 4, 2, 16], 1,024 B each); the second's output,
  //   partial over data, reduce-scattered on the groups ([2, 2, 2, 16],
  //   512 B); home by all-to-all (512 B).
  const Candidate fsdp = row("FSDP×EP 2×2");
  CHECK(fsdp.shardings[2].sharding == "[{\"data\", \"expert\"}p1, {}]");
  CHECK(fsdp.shardings[3].sharding == "[{\"expert\"}p0, {}, {\"data\"}p1]");
  CHECK(fsdp.shardings[4].sharding == "[{\"expert\"}p0, {\"data\"}p1, {}]");
  CHECK(collectiveTotals(fsdp) == Totals{{"all-gather", {2, 1280}},
                                         {"all-to-all", {4, 3072}},
                                         {"reduce-scatter", {1, 512}}});
  CHECK(moeRowOnDevices(fsdp, fsdp.mesh) == "");
  // With 4 experts on 4 devices a = 1 is EP itself: no "DP×EP 1×4" row.
  CHECK(std::none_of(c->rows.begin(), c->rows.end(), [](const Candidate &r) {
    return r.name.find("DP×EP 1×") != std::string::npos;
  }));
}

TEST_CASE("compareStrategies: ZeRO-1 inside DP×EP, by hand") {
  // kMoe with a state m1 of the first expert weight, which the step updates
  // (w1 - m1 m1) and returns.
  std::string text = kMoe;
  auto replace = [&](const std::string &from, const std::string &to) {
    text = test::replacedOnce(text, from, to);
  };
  replace("%w2: tensor<4x32x16xf32>)",
          "%w2: tensor<4x32x16xf32>, %m1: tensor<4x16x32xf32>)");
  replace("-> (tensor<4x8x16xf32>, tensor<4x8x4xf32>) {",
          "-> (tensor<4x8x16xf32>, tensor<4x8x4xf32>, tensor<4x16x32xf32>) {");
  replace("  return %out, %logits : tensor<4x8x16xf32>, tensor<4x8x4xf32>",
          "  %sq = stablehlo.multiply %m1, %m1 : tensor<4x16x32xf32>\n"
          "  %w1n = stablehlo.subtract %w1, %sq : tensor<4x16x32xf32>\n"
          "  return %out, %logits, %w1n : tensor<4x8x16xf32>, "
          "tensor<4x8x4xf32>, tensor<4x16x32xf32>");
  CompareOptions options;
  options.devices = 4;
  options.pipeline = *schedule::pipelineOptionsFor({});
  Result<Comparison> c = compareStrategies(text, options);
  REQUIRE(c);
  const Candidate &zero = rowThatRan(*c, "DP×EP 2×2 ZeRO-1");
  // m1 split as w1 (its experts over "expert") and over "data" on its
  // largest free dim (32); w1 written whole over "data".
  CHECK(zero.shardings[3].sharding == "[{\"expert\"}p0, {}, {}]");
  CHECK(zero.shardings[5].sharding == "[{\"expert\"}p0, {}, {\"data\"}p1]");
  // By hand, per device: the tokens to their experts and back (2
  // all-to-alls of 512 B, as DP×EP's), and w1's update, split over "data"
  // as m1 is, gathered back to w1's split ([2, 16, 32] f32: 4,096 B).
  CHECK(collectiveTotals(zero) ==
        Totals{{"all-to-all", {2, 1024}}, {"all-gather", {1, 4096}}});
}

TEST_CASE("suggestShardings: faster than the user's, with changes and why") {
  SuggestOptions options;
  options.compare.devices = 8;
  options.compare.pipeline = *schedule::pipelineOptionsFor({});
  options.budget_ms = 5000;
  // The user's: everything replicated on 8 devices.
  std::string text = std::string("sdy.mesh @mesh = <[\"d\"=8]>\n") + kMlp;
  Result<Suggestions> s = suggestShardings(text, options);
  REQUIRE(s);
  REQUIRE(s->user.ok);
  REQUIRE_FALSE(s->suggestions.empty());
  CHECK(s->evaluated >= 9);
  // Replicated on 8 devices does every device's work 8 times: sharding
  // anything is strictly faster.
  const Suggestion &best = s->suggestions.front();
  CHECK(best.candidate.step_time_us < s->user.step_time_us);
  CHECK(best.speedup > 1.0);
  CHECK_FALSE(best.changes.empty());
  CHECK_FALSE(best.reasons.empty());
}

TEST_CASE("suggestShardings reports its progress after each batch") {
  SuggestOptions options;
  options.compare.devices = 8;
  options.compare.pipeline = *schedule::pipelineOptionsFor({});
  options.budget_ms = 5000;
  std::vector<SearchProgress> seen;
  options.on_progress = [&](const SearchProgress &p) { seen.push_back(p); };
  std::string text = std::string("sdy.mesh @mesh = <[\"d\"=8]>\n") + kMlp;
  Result<Suggestions> s = suggestShardings(text, options);
  REQUIRE(s);
  REQUIRE_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) {
    CHECK(seen[i].evaluated > seen[i - 1].evaluated);
    CHECK(seen[i].elapsed_ms >= seen[i - 1].elapsed_ms);
    // The best only gets better.
    CHECK(seen[i].best_step_us <= seen[i - 1].best_step_us);
  }
  CHECK(seen.back().evaluated == s->evaluated);
  REQUIRE_FALSE(s->suggestions.empty());
  CHECK(seen.back().best_step_us ==
        s->suggestions.front().candidate.step_time_us);
}

TEST_CASE("suggestShardings prefers a layout that fits in device memory") {
  SuggestOptions options;
  options.compare.devices = 8;
  options.compare.pipeline = *schedule::pipelineOptionsFor({});
  options.budget_ms = 5000;
  std::string text = std::string("sdy.mesh @mesh = <[\"d\"=8]>\n") + kMlp;
  Result<Suggestions> roomy = suggestShardings(text, options);
  REQUIRE(roomy);
  REQUIRE_FALSE(roomy->suggestions.empty());
  const Candidate fastest = roomy->suggestions.front().candidate;
  // One byte less than the fastest layout needs: it no longer fits, and
  // the first suggestion is a layout that does.
  options.compare.pipeline.device_memory_bytes = fastest.peak_memory_bytes - 1;
  Result<Suggestions> tight = suggestShardings(text, options);
  REQUIRE(tight);
  REQUIRE_FALSE(tight->suggestions.empty());
  const Suggestion &first = tight->suggestions.front();
  REQUIRE(first.candidate.fits.has_value());
  CHECK(*first.candidate.fits);
  CHECK(first.candidate.peak_memory_bytes < fastest.peak_memory_bytes);
  CHECK(first.candidate.step_time_us >= fastest.step_time_us);
  // Every suggestion that fits comes before every one that does not.
  bool seen_misfit = false;
  for (const Suggestion &s : tight->suggestions) {
    const bool fits = !s.candidate.fits || *s.candidate.fits;
    CHECK_FALSE((fits && seen_misfit));
    seen_misfit = seen_misfit || !fits;
  }
}

// ---------------------------------------------------------------------------
// Answers worked out by hand. A two-matmul step, y = x w, g = x^T y (the
// weight-gradient shape), on 4 devices, costed with a table whose every GEMM
// runs at R FLOP/s and whose every collective of B bytes over G devices
// takes (G - 1) LAT + B / BW (the table is written here; each entry the
// schedule reads is one of its points). Every collective sits on the one
// dependency chain with no independent work beside it (the all-gather of w
// before the first matmul, the all-reduce of g after the last), so nothing
// hides it and a step is its compute plus its collectives.
namespace {

constexpr int64_t kB = 1024, kD = 512, kH = 2048, kDevices = 4;
constexpr double kRate = 1.0e14; // FLOP/s, every shape
constexpr double kLatencyUs = 10.0;
constexpr double kBandwidth = 100.0e9; // bytes/s

constexpr const char *kChain = R"(
func.func @main(%x: tensor<1024x512xf32>, %w: tensor<512x2048xf32>) -> tensor<512x2048xf32> {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<1024x512xf32>, tensor<512x2048xf32>) -> tensor<1024x2048xf32>
  %g = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<1024x512xf32>, tensor<1024x2048xf32>) -> tensor<512x2048xf32>
  return %g : tensor<512x2048xf32>
})";

double collectiveUs(int64_t bytes, int64_t group = 2,
                    double bandwidth = kBandwidth) {
  return double(group - 1) * kLatencyUs + double(bytes) / bandwidth * 1e6;
}

// The table: GEMMs at every power-of-two shape from 128 to 4096 (all at
// kRate), all-gather and all-reduce of 1, 2, 4 and 8 MiB over 2 and 4
// devices.
std::string analyticalTable(double bandwidth = kBandwidth) {
  std::vector<int64_t> sizes;
  for (int64_t size = 128; size <= 4096; size *= 2)
    sizes.push_back(size);
  test::HandTable table(kDevices);
  table.gemms(sizes, "f32", kRate);
  for (const char *op : {"all-gather", "all-reduce"})
    for (int64_t group : {2, 4})
      for (int64_t mib : {1, 2, 4, 8})
        table.collective(op, "single_partition", "f32", mib << 20, group,
                         collectiveUs(mib << 20, group, bandwidth));
  return table.json();
}

struct Expected {
  struct Collectives {
    int64_t count = 0;
    int64_t bytes = 0; ///< each one's per-device output, all of them summed
    int64_t group = 0; ///< the devices of each
  };
  std::string name;
  double compute_us;
  std::map<std::string, Collectives> collectives; ///< by kind
  double stepUs() const {
    double us = compute_us;
    for (const auto &[kind, c] : collectives)
      us += double(c.count) * collectiveUs(c.bytes / c.count, c.group);
    return us;
  }
};

// Each candidate by hand. Both matmuls do 2 * B * D * H FLOPs unsharded;
// every candidate but the module as written splits that work 4 ways.
std::vector<Expected> expectedRows() {
  const double flops = 2.0 * 2.0 * double(kB * kD * kH);
  const double whole = flops / kRate * 1e6, quarter = whole / 4;
  const int64_t w_bytes = kD * kH * 4; // also g's: 512 x 2048 f32, 4 MiB
  return {
      // w column-parallel: y and g sharded on H, no communication.
      {"TP", quarter, {}},
      // data=2 x model=2: g partial over data, sharded on model: half of
      // it all-reduced over the 2 data devices.
      {"DP×TP 2×2", quarter, {{"all-reduce", {1, w_bytes / 2, 2}}}},
      {"as written", whole, {}},
      // w on data and model: gathered over data to its model shard; g as
      // in DP×TP.
      {"FSDP×TP 2×2",
       quarter,
       {{"all-gather", {1, w_bytes / 2, 2}},
        {"all-reduce", {1, w_bytes / 2, 2}}}},
      // x on the batch: g is partial on each device, all of it all-reduced.
      {"DP", quarter, {{"all-reduce", {1, w_bytes, 4}}}},
      // replica=2 x data=2, x's batch over both, w over data: w gathered
      // whole over its group of 2, g all-reduced whole over all 4.
      {"HSDP 2×2",
       quarter,
       {{"all-gather", {1, w_bytes, 2}}, {"all-reduce", {1, w_bytes, 4}}}},
      // w gathered whole over 4 first, g all-reduced whole last.
      {"FSDP",
       quarter,
       {{"all-gather", {1, w_bytes, 4}}, {"all-reduce", {1, w_bytes, 4}}}},
  };
}

schedule::PipelineOptions analyticalPipeline(const cost::PerfTable &table) {
  schedule::TargetOptions target;
  target.table = &table;
  Result<schedule::PipelineOptions> pipeline =
      schedule::pipelineOptionsFor(target);
  REQUIRE(pipeline);
  return *pipeline;
}

} // namespace

// "" when `c`'s rows are `expected`, in order, with their compute, step
// time (0.1%) and collectives; else the first difference.
std::string differsFromHand(const Comparison &c,
                            const std::vector<Expected> &expected) {
  std::vector<const Candidate *> ran;
  for (const Candidate &row : c.rows)
    if (row.ok)
      ran.push_back(&row);
  if (ran.size() != expected.size())
    return std::to_string(ran.size()) + " rows ran";
  auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-3 * b; };
  for (size_t i = 0; i < expected.size(); ++i) {
    const Expected &e = expected[i];
    const Candidate &row = *ran[i];
    const std::string at = "row " + std::to_string(i) + " (" + e.name + "): ";
    if (row.name != e.name)
      return at + "the row is " + row.name;
    if (!near(row.compute_us, e.compute_us))
      return at + "compute " + std::to_string(row.compute_us);
    if (!near(row.step_time_us, e.stepUs()))
      return at + "step " + std::to_string(row.step_time_us) + " us, by hand " +
             std::to_string(e.stepUs());
    std::map<std::string, std::pair<int64_t, int64_t>> got, want;
    for (const CollectiveTotals &t : row.collectives)
      if (t.count)
        got[t.kind] = {t.count, t.bytes};
    for (const auto &[kind, totals] : e.collectives)
      want[kind] = {totals.count, totals.bytes};
    if (got != want)
      return at + "other collectives";
  }
  return "";
}

TEST_CASE("compareStrategies: every row's time and bytes as worked out by "
          "hand, in order") {
  Result<cost::PerfTable> table = cost::parsePerfTable(analyticalTable());
  REQUIRE(table);
  CompareOptions options;
  options.devices = kDevices;
  options.pipeline = analyticalPipeline(*table);
  Result<Comparison> c = compareStrategies(kChain, options);
  REQUIRE(c);
  CHECK(differsFromHand(*c, expectedRows()) == "");
  // The sequence-parallel candidates cannot run: x has no sequence; nor
  // can expert parallelism: no weight is an expert's; nor a pipeline: no
  // loop runs over stacked layers.
  int not_run = 0;
  for (const Candidate &row : c->rows)
    if (!row.ok) {
      ++not_run;
      CHECK(row.error.find(row.name == "EP" ? "no parameter is an expert weight"
                           : row.name == "PP" ? "no pipeline: no loop over "
                                                "stacked layers"
                           : row.name == "DP ZeRO-1"
                               ? "no optimizer state"
                               : "no data argument has a "
                                 "sequence dimension") != std::string::npos);
    }
  CHECK(not_run == 6);

  SUBCASE("the check fails on a wrong answer") {
    // Collectives at twice the bandwidth in the table than by hand: every
    // row with a collective is off.
    Result<cost::PerfTable> faster =
        cost::parsePerfTable(analyticalTable(2 * kBandwidth));
    REQUIRE(faster);
    options.pipeline = analyticalPipeline(*faster);
    Result<Comparison> wrong = compareStrategies(kChain, options);
    REQUIRE(wrong);
    CHECK(differsFromHand(*wrong, expectedRows()) != "");
  }
}

TEST_CASE("compareStrategies explains the fastest layout that fits") {
  Result<cost::PerfTable> table = cost::parsePerfTable(analyticalTable());
  REQUIRE(table);
  CompareOptions options;
  options.devices = kDevices;
  options.pipeline = analyticalPipeline(*table);
  Result<Comparison> roomy = compareStrategies(kChain, options);
  REQUIRE(roomy);
  // By hand (above): TP is the fastest, and it fits.
  REQUIRE(roomy->rows.front().name == "TP");
  CHECK(roomy->why_fastest_row == "TP");
  CHECK_FALSE(roomy->why_fastest.empty());
  // Rows sorted by time whose fastest does not fit: the reasons are
  // those of the fastest that fits (rows go by time, so it is not first).
  auto row = [](std::string name, double us, std::optional<bool> fits) {
    Candidate r;
    r.name = std::move(name);
    r.ok = true;
    r.step_time_us = us;
    r.compute_us = us;
    r.fits = fits;
    r.peak_memory_bytes = fits && !*fits ? 200 : 100;
    r.capacity_bytes = 150;
    return r;
  };
  std::vector<Candidate> rows = {row("A", 10, false), row("B", 20, true),
                                 row("as written", 30, true)};
  rows[2].is_user = true;
  REQUIRE(fastestRow(rows) == &rows[1]);
  const std::vector<std::string> why = whyFastest(rows, fastestRow(rows));
  CHECK_FALSE(why.empty());
  CHECK(std::none_of(why.begin(), why.end(), [](const std::string &w) {
    return w.find("does not fit") != std::string::npos;
  }));
  // None fits: the fastest. Memory unknown (no fits): the fastest.
  rows[1].fits = false;
  rows[2].fits = false;
  CHECK(fastestRow(rows) == &rows[0]);
  rows[0].fits.reset();
  CHECK(fastestRow(rows) == &rows[0]);
  // The fastest that fits is the module as written: nothing to explain.
  rows[0].fits = false;
  rows[2].fits = true;
  CHECK(fastestRow(rows) == &rows[2]);
  CHECK(whyFastest(rows, fastestRow(rows)).empty());
}

TEST_CASE("suggestShardings finds the fastest layout that exists by "
          "construction") {
  Result<cost::PerfTable> table = cost::parsePerfTable(analyticalTable());
  REQUIRE(table);
  SuggestOptions options;
  options.compare.devices = kDevices;
  options.compare.pipeline = analyticalPipeline(*table);
  options.budget_ms = 20000;
  // The user's: data parallel (82.6 us). No layout can beat the matmuls'
  // work split four ways with no communication (10.7 us), and one exists
  // (w column-parallel): the search must end there.
  const std::string user =
      std::string("sdy.mesh @mesh = <[\"d\"=4]>\n") +
      std::string(kChain).replace(
          std::string(kChain).find("%x: tensor<1024x512xf32>"),
          std::string("%x: tensor<1024x512xf32>").size(),
          "%x: tensor<1024x512xf32> {sdy.sharding = #sdy.sharding<@mesh, "
          "[{\"d\"}, {}]>}");
  Result<Suggestions> s = suggestShardings(user, options);
  REQUIRE(s);
  REQUIRE(s->user.ok);
  const std::vector<Expected> rows = expectedRows();
  const auto dp = std::find_if(rows.begin(), rows.end(), [](const Expected &e) {
    return e.name == "DP";
  });
  REQUIRE(dp != rows.end());
  CHECK(s->user.step_time_us == doctest::Approx(dp->stepUs()).epsilon(1e-3));
  REQUIRE_FALSE(s->suggestions.empty());
  const Suggestion &best = s->suggestions.front();
  CHECK(best.candidate.step_time_us ==
        doctest::Approx(rows[0].stepUs()).epsilon(1e-3));
  CHECK(best.candidate.step_time_us < s->user.step_time_us);
  for (const Suggestion &suggestion : s->suggestions)
    CHECK(suggestion.candidate.step_time_us < s->user.step_time_us);
}

// ---------------------------------------------------------------------------
// Context parallelism by hand: one fused attention (no mask) over q, k, v
// [B=1, T=4096, N=8, D=128] bf16 on 2 devices (a batch of one sequence,
// which data parallelism cannot split), with a table whose every GEMM runs
// at R FLOP/s and whose collectives of B bytes take LAT + B / BW. The
// attention's time is its two GEMMs, batched over B N = 8: Q K^T and P V,
// each 2 * 8 * T * S * D FLOPs.
namespace {

constexpr const char *kAttention = R"(
func.func @main(%q: tensor<1x4096x8x128xbf16>, %k: tensor<1x4096x8x128xbf16>, %v: tensor<1x4096x8x128xbf16>) -> tensor<1x4096x8x128xbf16> {
  %a:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"NO_MASK\"}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l])->([i, j, k, l], [i, k, j], [o]) {i=1, j=4096, k=8, l=128, m=4096, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<1x4096x8x128xbf16>, tensor<1x4096x8x128xbf16>, tensor<1x4096x8x128xbf16>) -> (tensor<1x4096x8x128xbf16>, tensor<1x8x4096xf32>, tensor<1xui8>)
  return %a#0 : tensor<1x4096x8x128xbf16>
})";

// What a ring of 2 does between its two calls (shardlab-context-ring, rule
// 4), on the local [1, 2048, 8, 128] chunks: scheduled alone, its cost.
constexpr const char *kRingMerge = R"(
func.func @main(%o: tensor<1x2048x8x128xbf16>, %o2: tensor<1x2048x8x128xbf16>, %l: tensor<1x8x2048xf32>, %l2: tensor<1x8x2048xf32>) -> (tensor<1x2048x8x128xbf16>, tensor<1x8x2048xf32>) {
  %m = stablehlo.maximum %l, %l2 : tensor<1x8x2048xf32>
  %s1 = stablehlo.subtract %l, %m : tensor<1x8x2048xf32>
  %a = stablehlo.exponential %s1 : tensor<1x8x2048xf32>
  %s2 = stablehlo.subtract %l2, %m : tensor<1x8x2048xf32>
  %b = stablehlo.exponential %s2 : tensor<1x8x2048xf32>
  %t = stablehlo.add %a, %b : tensor<1x8x2048xf32>
  %wa = stablehlo.divide %a, %t : tensor<1x8x2048xf32>
  %ca = stablehlo.convert %wa : (tensor<1x8x2048xf32>) -> tensor<1x8x2048xbf16>
  %ba = stablehlo.broadcast_in_dim %ca, dims = [0, 2, 1] : (tensor<1x8x2048xbf16>) -> tensor<1x2048x8x128xbf16>
  %x = stablehlo.multiply %o, %ba : tensor<1x2048x8x128xbf16>
  %wb = stablehlo.divide %b, %t : tensor<1x8x2048xf32>
  %cb = stablehlo.convert %wb : (tensor<1x8x2048xf32>) -> tensor<1x8x2048xbf16>
  %bb = stablehlo.broadcast_in_dim %cb, dims = [0, 2, 1] : (tensor<1x8x2048xbf16>) -> tensor<1x2048x8x128xbf16>
  %y = stablehlo.multiply %o2, %bb : tensor<1x2048x8x128xbf16>
  %out = stablehlo.add %x, %y : tensor<1x2048x8x128xbf16>
  %lg = stablehlo.log %t : tensor<1x8x2048xf32>
  %st = stablehlo.add %m, %lg : tensor<1x8x2048xf32>
  return %out, %st : tensor<1x2048x8x128xbf16>, tensor<1x8x2048xf32>
})";

// GEMMs at kRate (one bf16 point: every shape is costed at its rate),
// all-gathers, reduce-scatters, all-reduces and permutes between 2 devices
// of 2 to 16 MiB (the table's
// sizes are exact; between them XLA's interpolator takes the nearest
// point's throughput).
std::string attentionTable() {
  test::HandTable table(2);
  table.gemms({1024}, "bf16", kRate);
  for (int64_t mib : {2, 4, 6, 8, 16}) {
    for (const char *op : {"all-gather", "reduce-scatter", "all-reduce"})
      table.collective(op, "single_partition", "bf16", mib << 20, 2,
                       collectiveUs(mib << 20));
    table.collective("collective-permute", "intra_partition_two_way_all_mutual",
                     "bf16", mib << 20, 2, collectiveUs(mib << 20));
  }
  return table.json();
}

} // namespace

TEST_CASE("compareStrategies: context parallelism (a ring) by hand") {
  Result<cost::PerfTable> table = cost::parsePerfTable(attentionTable());
  REQUIRE(table);
  CompareOptions options;
  options.devices = 2;
  options.pipeline = analyticalPipeline(*table);
  Result<Comparison> c = compareStrategies(kAttention, options);
  REQUIRE(c);
  // The whole attention, T = S = 4096: 2 GEMMs of 2 * 8 * 4096^2 * 128.
  const double whole_us = 2 * (2.0 * 8 * 4096 * 4096 * 128) / kRate * 1e6;
  const int64_t chunk_bytes = int64_t(1) * 2048 * 8 * 128 * 2; // 4 MiB

  // DP cannot split a batch of one.
  auto dp = std::find_if(c->rows.begin(), c->rows.end(),
                         [](const Candidate &r) { return r.name == "DP"; });
  REQUIRE(dp != c->rows.end());
  CHECK(dp->error.find("(size 1) does not divide") != std::string::npos);

  // CP: each device keeps its 2,048 queries; it attends to its own keys,
  // sends them on (k and v: 2 permutes of a 4 MiB chunk) and attends to
  // the other device's: two calls of a quarter of the work each (T = S =
  // 2048), and the merge between them.
  const Candidate &cp = rowThatRan(*c, "CP");
  CHECK(cp.mesh == "<[\"context\"=2]>");
  CHECK(cp.shardings[0].sharding == "[{}, {\"context\"}p0, {}, {}]");
  CHECK(collectiveTotals(cp) ==
        Totals{{"collective-permute", {2, 2 * chunk_bytes}}});
  schedule::PipelineResult merge =
      schedule::runSchedulePipeline(kRingMerge, options.pipeline);
  REQUIRE(merge.ok);
  const double merge_us = merge.schedule.compute_us;
  CHECK(merge_us > 0);
  CHECK(cp.compute_us ==
        doctest::Approx(2 * (whole_us / 4) + merge_us).epsilon(1e-3));
  // One permute (51.9 us) hides under the first call (171.8 us); the other
  // has nothing to run beside: as XLA's scheduler, one collective-permute
  // is in flight at a time (--overlap-limit), and it overlaps the compute
  // between its start and its done; the second call needs both chunks.
  CHECK(collectiveUs(chunk_bytes) < whole_us / 4);
  CHECK(cp.exposed_comm_us ==
        doctest::Approx(collectiveUs(chunk_bytes)).epsilon(1e-3));
  CHECK(
      cp.step_time_us ==
      doctest::Approx(cp.compute_us + collectiveUs(chunk_bytes)).epsilon(1e-3));

  // SP shards the sequence but cannot take it through attention: q, k and
  // v are gathered (to 8 MiB each, one all-gather once XLA's combiner has
  // joined them) and every device attends over the whole sequence, twice
  // CP's attention.
  const Candidate &sp = rowThatRan(*c, "SP");
  CHECK(collectiveTotals(sp) == Totals{{"all-gather", {1, 6 * chunk_bytes}}});
  CHECK(sp.compute_us >= whole_us);
  CHECK(sp.step_time_us > cp.step_time_us);

  // On 8 devices each would keep 512 of the 4,096 tokens: too few for a
  // ring.
  options.devices = 8;
  Result<Comparison> wide = compareStrategies(kAttention, options);
  REQUIRE(wide);
  auto named = [&](const std::string &name) {
    return std::find_if(wide->rows.begin(), wide->rows.end(),
                        [&](const Candidate &r) { return r.name == name; });
  };
  REQUIRE(named("CP") != wide->rows.end());
  CHECK(named("CP")->error.find("512 tokens of the sequence") !=
        std::string::npos);
  options.devices = 2;

  // A batch of 4 splits over the 2 devices: DP gives each device as many
  // tokens as CP would, with no ring, and the CP row says so.
  const std::string four =
      test::replacedAll(kAttention, {{"1x4096x8x128", "4x4096x8x128"},
                                     {"1x8x4096", "4x8x4096"},
                                     {"{i=1,", "{i=4,"}});
  Result<Comparison> batched = compareStrategies(four, options);
  REQUIRE(batched);
  REQUIRE(rowThatRan(*batched, "DP").collectives.empty());
  auto cp4 = std::find_if(batched->rows.begin(), batched->rows.end(),
                          [](const Candidate &r) { return r.name == "CP"; });
  REQUIRE(cp4 != batched->rows.end());
  CHECK(cp4->error.find("the batch of 4 splits over the 2 devices") !=
        std::string::npos);

  // Without a fused attention call there is no ring to write: the reason.
  Result<Comparison> dense = compareStrategies(kMlp, options);
  REQUIRE(dense);
  auto no_ring =
      std::find_if(dense->rows.begin(), dense->rows.end(),
                   [](const Candidate &r) { return r.name == "CP"; });
  REQUIRE(no_ring != dense->rows.end());
  CHECK_FALSE(no_ring->ok);
  CHECK(no_ring->error.find("no fused attention call") != std::string::npos);
}

namespace {

// The attention of kAttention with its queries, keys and values projected
// from x [1, 4096, 1024] by wq, wk and wv [1024, 8, 128] (2 MiB each in
// bf16): one sequence, and parameters for FSDP to split.
constexpr const char *kProjectedAttention = R"(
func.func @main(%x: tensor<1x4096x1024xbf16>, %wq: tensor<1024x8x128xbf16>, %wk: tensor<1024x8x128xbf16>, %wv: tensor<1024x8x128xbf16>) -> tensor<1x4096x8x128xbf16> {
  %q = stablehlo.dot_general %x, %wq, contracting_dims = [2] x [0] : (tensor<1x4096x1024xbf16>, tensor<1024x8x128xbf16>) -> tensor<1x4096x8x128xbf16>
  %k = stablehlo.dot_general %x, %wk, contracting_dims = [2] x [0] : (tensor<1x4096x1024xbf16>, tensor<1024x8x128xbf16>) -> tensor<1x4096x8x128xbf16>
  %v = stablehlo.dot_general %x, %wv, contracting_dims = [2] x [0] : (tensor<1x4096x1024xbf16>, tensor<1024x8x128xbf16>) -> tensor<1x4096x8x128xbf16>
  %a:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"NO_MASK\"}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l])->([i, j, k, l], [i, k, j], [o]) {i=1, j=4096, k=8, l=128, m=4096, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<1x4096x8x128xbf16>, tensor<1x4096x8x128xbf16>, tensor<1x4096x8x128xbf16>) -> (tensor<1x4096x8x128xbf16>, tensor<1x8x4096xf32>, tensor<1xui8>)
  return %a#0 : tensor<1x4096x8x128xbf16>
})";

// kProjectedAttention with one optimizer state: wq's momentum mq moves by
// a gradient-like x^T o ([1024, 8, 128], summed over the sequence), and wq
// by mq; the new wq and mq are results. Adam's moments in one line.
constexpr const char *kProjectedStep = R"(
func.func @main(%x: tensor<1x4096x1024xbf16>, %wq: tensor<1024x8x128xbf16>, %wk: tensor<1024x8x128xbf16>, %wv: tensor<1024x8x128xbf16>, %mq: tensor<1024x8x128xbf16>) -> (tensor<1x4096x8x128xbf16>, tensor<1024x8x128xbf16>, tensor<1024x8x128xbf16>) {
  %q = stablehlo.dot_general %x, %wq, contracting_dims = [2] x [0] : (tensor<1x4096x1024xbf16>, tensor<1024x8x128xbf16>) -> tensor<1x4096x8x128xbf16>
  %k = stablehlo.dot_general %x, %wk, contracting_dims = [2] x [0] : (tensor<1x4096x1024xbf16>, tensor<1024x8x128xbf16>) -> tensor<1x4096x8x128xbf16>
  %v = stablehlo.dot_general %x, %wv, contracting_dims = [2] x [0] : (tensor<1x4096x1024xbf16>, tensor<1024x8x128xbf16>) -> tensor<1x4096x8x128xbf16>
  %a:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) {backend_config = "{\"cudnn_fmha_backend_config\": {\"mask_type\": \"NO_MASK\"}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l])->([i, j, k, l], [i, k, j], [o]) {i=1, j=4096, k=8, l=128, m=4096, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<1x4096x8x128xbf16>, tensor<1x4096x8x128xbf16>, tensor<1x4096x8x128xbf16>) -> (tensor<1x4096x8x128xbf16>, tensor<1x8x4096xf32>, tensor<1xui8>)
  %g = stablehlo.dot_general %x, %a#0, contracting_dims = [0, 1] x [0, 1] : (tensor<1x4096x1024xbf16>, tensor<1x4096x8x128xbf16>) -> tensor<1024x8x128xbf16>
  %m2 = stablehlo.add %mq, %g : tensor<1024x8x128xbf16>
  %w2 = stablehlo.subtract %wq, %m2 : tensor<1024x8x128xbf16>
  return %a#0, %w2, %m2 : tensor<1x4096x8x128xbf16>, tensor<1024x8x128xbf16>, tensor<1024x8x128xbf16>
})";

} // namespace

TEST_CASE("compareStrategies: CP FSDP by hand") {
  Result<cost::PerfTable> table = cost::parsePerfTable(attentionTable());
  REQUIRE(table);
  CompareOptions options;
  options.devices = 2;
  options.pipeline = analyticalPipeline(*table);
  Result<Comparison> c = compareStrategies(kProjectedAttention, options);
  REQUIRE(c);
  const int64_t chunk_bytes = int64_t(1) * 2048 * 8 * 128 * 2; // 4 MiB
  const int64_t weight_bytes = int64_t(1024) * 8 * 128 * 2;    // 2 MiB
  // Each device projects its 2,048 tokens (3 GEMMs of 2 * 2048 * 1024 *
  // 1024) and runs the ring of the test above: two calls of a quarter of
  // the attention and the merge between them.
  const double projections_us = 3 * (2.0 * 2048 * 1024 * 1024) / kRate * 1e6;
  const double quarter_us = (2.0 * 8 * 4096 * 4096 * 128) / kRate * 1e6 / 2;
  schedule::PipelineResult merge =
      schedule::runSchedulePipeline(kRingMerge, options.pipeline);
  REQUIRE(merge.ok);
  const double compute_us =
      projections_us + 2 * quarter_us + merge.schedule.compute_us;

  // CP: the weights whole on each device. The two 4 MiB permutes (k and
  // v, one in flight at a time) take 2 x 51.9 us and both fit under the
  // first call (171.8 us), which needs only the device's own chunks:
  // nothing is exposed.
  const Candidate &cp = rowThatRan(*c, "CP");
  CHECK(2 * collectiveUs(chunk_bytes) < quarter_us);
  CHECK(collectiveTotals(cp) ==
        Totals{{"collective-permute", {2, 2 * chunk_bytes}}});
  CHECK(cp.compute_us == doctest::Approx(compute_us).epsilon(1e-3));
  CHECK(cp.exposed_comm_us == doctest::Approx(0).epsilon(1e-3));
  CHECK(cp.step_time_us == doctest::Approx(compute_us).epsilon(1e-3));

  // CP FSDP: each weight split over the ring's devices on its largest dim
  // (1,024 rows: 512 each) and gathered where it is used. XLA's combiner
  // joins the three all-gathers into one of 3 x 2 MiB, and it is exposed
  // whole: every op of the step waits for a weight. The ring is CP's.
  const Candidate &fsdp = rowThatRan(*c, "CP FSDP");
  CHECK(fsdp.mesh == "<[\"context\"=2]>");
  for (const ArgSharding &s : fsdp.shardings)
    if (s.name != "%x")
      CHECK(s.sharding == "[{\"context\"}p1, {}, {}]");
  CHECK(collectiveTotals(fsdp) ==
        Totals{{"all-gather", {1, 3 * weight_bytes}},
               {"collective-permute", {2, 2 * chunk_bytes}}});
  CHECK(fsdp.compute_us == doctest::Approx(compute_us).epsilon(1e-3));
  CHECK(fsdp.exposed_comm_us ==
        doctest::Approx(collectiveUs(3 * weight_bytes)).epsilon(1e-3));
  CHECK(fsdp.step_time_us ==
        doctest::Approx(compute_us + collectiveUs(3 * weight_bytes))
            .epsilon(1e-3));
  // Half of each weight stays on a device: 3 MiB fewer argument bytes.
  CHECK(cp.argument_bytes - fsdp.argument_bytes == 3 * weight_bytes / 2);

  // CP ZeRO-1 splits optimizer state (a parameter no matmul reads): with
  // none, there is no such row.
  CHECK(std::none_of(c->rows.begin(), c->rows.end(),
                     [](const Candidate &r) { return r.name == "CP ZeRO-1"; }));
}

TEST_CASE("compareStrategies: CP ZeRO-1 by hand, against CP") {
  Result<cost::PerfTable> table = cost::parsePerfTable(attentionTable());
  REQUIRE(table);
  CompareOptions options;
  options.devices = 2;
  options.pipeline = analyticalPipeline(*table);
  Result<Comparison> c = compareStrategies(kProjectedStep, options);
  REQUIRE(c);
  const int64_t chunk_bytes = int64_t(1) * 2048 * 8 * 128 * 2; // 4 MiB
  const int64_t weight_bytes = int64_t(1024) * 8 * 128 * 2;    // 2 MiB
  // Each device's g is x^T o over its 2,048 tokens: a partial sum. The
  // step's end is serial: g waits for the ring's output, the update for g,
  // and nothing follows; each collective there is exposed but for the few
  // us of elementwise work the scheduler runs beside it.
  auto exposedWhole = [](const CollectiveTotals &t) {
    return t.exposed_us <= t.comm_us && t.exposed_us >= t.comm_us - 2.0;
  };
  auto kind = [](const Candidate &row, const std::string &name) {
    for (const CollectiveTotals &t : row.collectives)
      if (t.kind == name)
        return t;
    return CollectiveTotals{};
  };
  // CP: mq and wq whole on each device: g all-reduced (2 MiB), the ring's
  // two permutes hidden as in the tests above.
  const Candidate &cp = rowThatRan(*c, "CP");
  CHECK(collectiveTotals(cp) ==
        Totals{{"all-reduce", {1, weight_bytes}},
               {"collective-permute", {2, 2 * chunk_bytes}}});
  CHECK(kind(cp, "all-reduce").comm_us ==
        doctest::Approx(collectiveUs(weight_bytes)).epsilon(1e-3));
  CHECK(exposedWhole(kind(cp, "all-reduce")));
  CHECK(kind(cp, "collective-permute").exposed_us == doctest::Approx(0));
  // CP ZeRO-1: mq split over the ring's devices on its 1,024 rows; g
  // reduce-scattered to mq's half (XLA counts a reduce-scatter's input,
  // 2 MiB, so it takes as long as the all-reduce), the update runs on the
  // half, and the new wq, pinned whole, is all-gathered (2 MiB): the
  // all-reduce's bytes, now in two exposed steps.
  const Candidate &zero = rowThatRan(*c, "CP ZeRO-1");
  CHECK(zero.shardings[4].sharding == "[{\"context\"}p1, {}, {}]");
  for (size_t i = 1; i < 4; ++i)
    CHECK(zero.shardings[i].sharding == "[{}, {}, {}]");
  CHECK(collectiveTotals(zero) ==
        Totals{{"all-gather", {1, weight_bytes}},
               {"reduce-scatter", {1, weight_bytes / 2}},
               {"collective-permute", {2, 2 * chunk_bytes}}});
  for (const char *name : {"all-gather", "reduce-scatter"}) {
    CAPTURE(name);
    CHECK(kind(zero, name).comm_us ==
          doctest::Approx(collectiveUs(weight_bytes)).epsilon(1e-3));
    CHECK(exposedWhole(kind(zero, name)));
  }
  CHECK(zero.step_time_us ==
        doctest::Approx(zero.compute_us + zero.exposed_comm_us).epsilon(1e-6));
  // Its half of mq: 1 MiB fewer argument bytes; the update on half the
  // rows: less compute.
  CHECK(cp.argument_bytes - zero.argument_bytes == weight_bytes / 2);
  CHECK(zero.compute_us < cp.compute_us);
  // CP FSDP splits every parameter: the three weights gathered where used
  // (6 MiB, before anything can run) and g reduce-scattered to mq's half.
  const Candidate &fsdp = rowThatRan(*c, "CP FSDP");
  CHECK(collectiveTotals(fsdp) ==
        Totals{{"all-gather", {1, 3 * weight_bytes}},
               {"reduce-scatter", {1, weight_bytes / 2}},
               {"collective-permute", {2, 2 * chunk_bytes}}});
  CHECK(cp.argument_bytes - fsdp.argument_bytes == 4 * weight_bytes / 2);
}
