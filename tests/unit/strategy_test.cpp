// Strategy comparison: argument roles, Megatron dims, candidate plans and
// their evaluation (shardlab/strategy/strategy.h).
#include "shardlab/strategy/strategy.h"
#include "strategy/arg_roles.h"
#include "strategy/candidates.h"

#include <doctest/doctest.h>

#include <algorithm>

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

TEST_CASE("Candidates: every family and split, with non-dividing ones failed") {
  Result<ModuleAnalysis> m = analyzeArguments(kMlp);
  REQUIRE(m);
  std::vector<Plan> plans = candidatePlans(m->args, 8);
  // DP, FSDP, TP, SP + (DP×TP, FSDP×TP, DP×SP) for 2×4 and 4×2.
  REQUIRE(plans.size() == 10);
  auto named = [&](const std::string &name) -> const Plan & {
    auto it = std::find_if(plans.begin(), plans.end(),
                           [&](const Plan &p) { return p.name == name; });
    REQUIRE(it != plans.end());
    return *it;
  };
  CHECK(named("DP").args[0] == ArgAxes{{"data"}, {}, {}});
  CHECK(named("DP").args[1] == ArgAxes{{}, {}});
  CHECK(named("TP").args[1] == ArgAxes{{}, {"model"}});
  CHECK(named("TP").args[2] == ArgAxes{{"model"}, {}});
  CHECK(named("FSDP").args[1] == ArgAxes{{}, {"data"}});
  // The sequence (8) splits over 8.
  CHECK(named("SP").args[0] == ArgAxes{{}, {"seq"}, {}});
  CHECK(named("SP").error.empty());
  // 16 devices: the sequence of 8 does not divide.
  std::vector<Plan> sixteen = candidatePlans(m->args, 16);
  auto sp = std::find_if(sixteen.begin(), sixteen.end(),
                         [](const Plan &p) { return p.name == "SP"; });
  REQUIRE(sp != sixteen.end());
  CHECK(sp->error.find("dimension 1 of %x (size 8) does not divide by 16") !=
        std::string::npos);
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
  CHECK(c->rows.size() == 11);
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
  SUBCASE("a module that does not parse is an error") {
    CHECK_FALSE(compareStrategies("func.func @main(", options));
  }
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
  const Suggestion &best = s->suggestions.front();
  CHECK(best.candidate.step_time_us <= s->user.step_time_us);
  CHECK(best.speedup >= 1.0);
  CHECK_FALSE(best.changes.empty());
  CHECK_FALSE(best.reasons.empty());
}
