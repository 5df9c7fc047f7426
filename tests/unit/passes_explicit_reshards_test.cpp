// Properties of the Shardy partitioner passes over generated modules
// (elementwise ops, dot_general, transpose with random shardings on a 2x2x2
// mesh): after -sdy-insert-explicit-reshards (full version) every op with a
// rule has one axis list per factor shared by all its tensors;
// -sdy-reshard-to-collectives leaves no sdy.reshard; the result verifies;
// and the export and propagation pipelines are idempotent. (With explicit
// collectives the export pipeline is not, in Shardy either: a second run
// all-reduces a dot over its sharded contracting dim again, since nothing
// marks the already-reduced result.)
#include "propagation/projection.h"
#include "rules/registry.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"
#include "verify/verifier.h"

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace shardlab;

namespace {

bool runFlag(Module &module, const std::string &flag,
             const std::string &options = "") {
  DiagnosticEngine diags;
  PassPipeline pipeline;
  REQUIRE(appendPass(pipeline, flag, options).ok());
  return runPassPipeline(module, pipeline, diags);
}

std::unique_ptr<Module> parse(const std::string &text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  return module;
}

// A random dim sharding text over the axes not used yet.
std::string randomDims(std::mt19937 &rng, int rank) {
  const char *axes[] = {"\"a\"", "\"b\"", "\"c\""};
  bool used[3] = {false, false, false};
  std::string text = "[";
  for (int d = 0; d < rank; ++d) {
    text += d ? ", {" : "{";
    int n = static_cast<int>(rng() % 3);
    for (int k = 0, first = 1; k < n; ++k) {
      int a = static_cast<int>(rng() % 3);
      if (used[a])
        continue;
      used[a] = true;
      text += std::string(first ? "" : ", ") + axes[a];
      first = 0;
    }
    text += "}";
  }
  return text + "]";
}

std::string attr(std::mt19937 &rng) {
  return "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, " +
         randomDims(rng, 2) + ">]>}";
}

// One func of 2-8 ops on tensor<8x8xf32> values.
std::string generateModule(std::mt19937 &rng) {
  const std::string t = "tensor<8x8xf32>";
  std::string text = "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
                     "func.func @main(%arg0: " +
                     t + " {sdy.sharding = #sdy.sharding<@mesh, " +
                     randomDims(rng, 2) + ">}, %arg1: " + t + ") -> (" + t +
                     " {sdy.sharding = #sdy.sharding<@mesh, " +
                     randomDims(rng, 2) + ">}) {\n";
  std::vector<std::string> values = {"%arg0", "%arg1"};
  int ops = 2 + static_cast<int>(rng() % 7);
  for (int i = 0; i < ops; ++i) {
    std::string x = values[rng() % values.size()];
    std::string y = values[rng() % values.size()];
    std::string v = "%v" + std::to_string(i);
    switch (rng() % 4) {
    case 0:
      text += "  " + v + " = stablehlo.add " + x + ", " + y + " " + attr(rng) +
              " : " + t + "\n";
      break;
    case 1:
      text += "  " + v + " = stablehlo.dot_general " + x + ", " + y +
              ", contracting_dims = [1] x [0] " + attr(rng) + " : (" + t +
              ", " + t + ") -> " + t + "\n";
      break;
    case 2:
      text += "  " + v + " = stablehlo.transpose " + x + ", dims = [1, 0] " +
              attr(rng) + " : (" + t + ") -> " + t + "\n";
      break;
    default:
      text += "  " + v + " = stablehlo.negate " + x + " " + attr(rng) + " : " +
              t + "\n";
    }
    values.push_back(v);
  }
  return text + "  return " + values.back() + " : " + t + "\n}\n";
}

// Every factor of every tensor of `op` has the same axes (no overflow).
bool shardingsFitRule(Module &module, Operation &op) {
  std::optional<OpShardingRule> rule =
      getOrCreateShardingRule(op, module.ctx(), false, false);
  if (!rule || rule->is_custom || op.dialect() == "sdy")
    return true;
  std::vector<const TensorSharding *> in, out;
  for (size_t i = 0; i < op.numOperands(); ++i)
    in.push_back(getSharding(op.operand(i)));
  for (size_t i = 0; i < op.numResults(); ++i)
    out.push_back(getSharding(op.result(i)));
  const Mesh *mesh = lookupMesh(module, MeshRef{"mesh", std::nullopt});
  ShardingProjection p = buildProjection(in, out, *rule, *mesh);
  for (size_t f = 0; f < rule->factor_sizes.size(); ++f) {
    const std::vector<AxisRef> *axes = nullptr;
    for (const auto *rows : {&p.operands, &p.results})
      for (const TensorFactorShardings &row : *rows) {
        const FactorSharding *fs = row.find(static_cast<int64_t>(f));
        if (!fs)
          continue;
        if (!fs->overflow.empty() || (axes && *axes != fs->axes))
          return false;
        axes = &fs->axes;
      }
  }
  return true;
}

} // namespace

TEST_CASE("explicit reshards: rules hold, no reshard survives, verifies, "
          "pipelines idempotent (generated modules)") {
  std::mt19937 rng(7);
  for (int i = 0; i < 1000; ++i) {
    std::string text = generateModule(rng);
    CAPTURE(text);
    auto module = parse(text);
    REQUIRE(runFlag(*module, "sdy-insert-explicit-reshards",
                    "enable-full-version=true"));
    bool fits = true;
    walk(module->op(),
         [&](Operation &op) { fits = fits && shardingsFitRule(*module, op); });
    CHECK(fits);
    REQUIRE(runFlag(*module, "sdy-reshard-to-collectives"));
    std::string lowered = printModule(*module);
    CHECK(lowered.find("sdy.reshard") == std::string::npos);
    DiagnosticEngine diags;
    CHECK(verifyModule(*module, diags));
    for (const char *flag :
         {"sdy-export-pipeline", "sdy-propagation-pipeline"}) {
      CAPTURE(flag);
      auto once = parse(text);
      REQUIRE(runFlag(*once, flag));
      std::string once_text = printModule(*once);
      auto twice = parse(once_text);
      REQUIRE(runFlag(*twice, flag));
      CHECK(printModule(*twice) == once_text);
    }
  }
}

TEST_CASE("replicate-need-replication-factors: a rule's need_replication "
          "factors are read whole, and the result sliced back") {
  const std::string op =
      R"(stablehlo.custom_call @attention(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b"}, {"s"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} need_replication={j}CUSTOM>} : (tensor<8x16xf32>) -> tensor<8x16xf32>)";
  auto text = [&](const std::string &custom) {
    std::string call = op;
    call.replace(call.find("CUSTOM"), 6, custom);
    return R"(sdy.mesh @mesh = <["b"=2, "s"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {"s"}]>}) -> tensor<8x16xf32> {
  %0 = )" + call +
           R"(
  return %0 : tensor<8x16xf32>
})";
  };
  auto module = parse(text(", custom"));
  REQUIRE(runFlag(*module, "sdy-replicate-need-replication-factors"));
  REQUIRE(runFlag(*module, "sdy-reshard-to-collectives"));
  const std::string out = printModule(*module);
  CAPTURE(out);
  // The sequence ("s", factor j) is gathered before, sliced after; the
  // batch ("b", factor i) stays split throughout.
  CHECK(
      out.find(
          R"(sdy.all_gather [{}, {"s"}] %arg0 out_sharding=<@mesh, [{"b"}, {}]>)") !=
      std::string::npos);
  CHECK(out.find(R"(sdy.sharding_per_value<[<@mesh, [{"b"}, {}]>]>)") !=
        std::string::npos);
  CHECK(out.find(R"(sdy.all_slice [{}, {"s"}])") != std::string::npos);
  CHECK(out.find(R"(return %2)") != std::string::npos);
  DiagnosticEngine diags;
  CHECK(verifyModule(*module, diags));

  SUBCASE("a rule that is not custom: the same (Shardy leaves it to XLA)") {
    auto plain = parse(text(""));
    REQUIRE(runFlag(*plain, "sdy-replicate-need-replication-factors"));
    CHECK(
        printModule(*plain).find(R"(sdy.reshard %arg0 <@mesh, [{"b"}, {}]>)") !=
        std::string::npos);
  }
  SUBCASE("a rule whose factors all split: untouched") {
    std::string no_need = text("");
    no_need.erase(no_need.find(" need_replication={j}"),
                  std::string(" need_replication={j}").size());
    auto plain = parse(no_need);
    const std::string before = printModule(*plain);
    runFlag(*plain, "sdy-replicate-need-replication-factors");
    CHECK(printModule(*plain) == before);
  }
}

TEST_CASE("replicate-need-replication-factors: a broadcast's expanded "
          "dimension is gathered, its one row being on the first shard") {
  auto module = parse(R"(sdy.mesh @mesh = <["a"=4]>
func.func @main(%arg0: tensor<1x20xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<20x20xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x20xf32>) -> tensor<20x20xf32>
  return %0 : tensor<20x20xf32>
})");
  REQUIRE(runFlag(*module, "sdy-replicate-need-replication-factors"));
  const std::string out = printModule(*module);
  CAPTURE(out);
  CHECK(out.find(R"(%0 = sdy.reshard %arg0 <@mesh, [{}, {}]>)") !=
        std::string::npos);
  CHECK(out.find("stablehlo.broadcast_in_dim %0") != std::string::npos);

  SUBCASE("a dimension that keeps its size is split as it is") {
    auto kept = parse(R"(sdy.mesh @mesh = <["a"=4]>
func.func @main(%arg0: tensor<20x1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<20x20xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<20x1xf32>) -> tensor<20x20xf32>
  return %0 : tensor<20x20xf32>
})");
    const std::string before = printModule(*kept);
    runFlag(*kept, "sdy-replicate-need-replication-factors");
    CHECK(printModule(*kept) == before);
  }
}
