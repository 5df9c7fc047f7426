// shardlab-pipeline-stages and the pipeline candidates, on a step worked
// out by hand: 8 linear layers (weights [8, 64, 64]) in a loop over 4
// micro-batches of x [4, 16, 64], each micro-batch's forward loop stacking
// its inputs [8, 16, 64] for the backward loop, which writes the layers'
// gradients [8, 64, 64]; the batch rows split over "data" = 2.
#include "ir/while_loops.h"
#include "passes/strategy/layer_loops.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/schedule/pipeline.h"
#include "shardlab/schedule/report.h"
#include "shardlab/strategy/strategy.h"
#include "strategy/arg_roles.h"
#include "strategy/candidates.h"
#include "verify/verifier.h"

#include "hand_table.h"
#include "text_edit.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

using namespace shardlab;
using nlohmann::json;

namespace {

const char *kStep = R"(
func.func @main(%w: tensor<8x64x64xf32>, %x: tensor<4x16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}, {}]>}) -> tensor<8x64x64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %c8 = stablehlo.constant dense<8> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<8x64x64xf32>
  %mb:2 = stablehlo.while(%j = %c0, %acc = %z) : tensor<i32>, tensor<8x64x64xf32>
  cond {
    %lt = stablehlo.compare LT, %j, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %xs = stablehlo.dynamic_slice %x, %j, %c0, %c0, sizes = [1, 16, 64] : (tensor<4x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
    %h0 = stablehlo.reshape %xs : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
    %s0 = stablehlo.constant dense<0.0> : tensor<8x16x64xf32>
    %fw:3 = stablehlo.while(%i = %c0, %h = %h0, %st = %s0) : tensor<i32>, tensor<16x64xf32>, tensor<8x16x64xf32>
    cond {
      %flt = stablehlo.compare LT, %i, %c8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %flt : tensor<i1>
    } do {
      %ws = stablehlo.dynamic_slice %w, %i, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wi = stablehlo.reshape %ws : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %hr = stablehlo.reshape %h : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
      %st2 = stablehlo.dynamic_update_slice %st, %hr, %i, %c0, %c0 : (tensor<8x16x64xf32>, tensor<1x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x16x64xf32>
      %h2 = stablehlo.dot_general %h, %wi, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
      %i2 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %i2, %h2, %st2 : tensor<i32>, tensor<16x64xf32>, tensor<8x16x64xf32>
    }
    %bw:3 = stablehlo.while(%k = %c0, %g = %fw#1, %dw = %z) : tensor<i32>, tensor<16x64xf32>, tensor<8x64x64xf32>
    cond {
      %blt = stablehlo.compare LT, %k, %c8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %blt : tensor<i1>
    } do {
      %hs = stablehlo.dynamic_slice %fw#2, %k, %c0, %c0, sizes = [1, 16, 64] : (tensor<8x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
      %hk = stablehlo.reshape %hs : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
      %wks = stablehlo.dynamic_slice %w, %k, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wk = stablehlo.reshape %wks : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %dwk = stablehlo.dot_general %hk, %g, contracting_dims = [0] x [0] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
      %dwr = stablehlo.reshape %dwk : (tensor<64x64xf32>) -> tensor<1x64x64xf32>
      %dw2 = stablehlo.dynamic_update_slice %dw, %dwr, %k, %c0, %c0 : (tensor<8x64x64xf32>, tensor<1x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64x64xf32>
      %g2 = stablehlo.dot_general %g, %wk, contracting_dims = [1] x [1] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
      %k2 = stablehlo.add %k, %c1 : tensor<i32>
      stablehlo.return %k2, %g2, %dw2 : tensor<i32>, tensor<16x64xf32>, tensor<8x64x64xf32>
    }
    %acc2 = stablehlo.add %acc, %bw#2 : tensor<8x64x64xf32>
    %j2 = stablehlo.add %j, %c1 : tensor<i32>
    stablehlo.return %j2, %acc2 : tensor<i32>, tensor<8x64x64xf32>
  }
  %new = stablehlo.subtract %w, %mb#1 : tensor<8x64x64xf32>
  return %new : tensor<8x64x64xf32>
}
)";

std::string withMesh(const std::string &mesh) {
  return "sdy.mesh @mesh = <" + mesh + ">\n" + kStep;
}

// The step written with 16 micro-batches of 4 rows instead of 4 of 16.
std::string withSmallerMicroBatches(std::string text) {
  for (const auto &[from, to] :
       std::vector<std::pair<std::string, std::string>>{
           {"4x16x64xf32", "16x4x64xf32"},
           {"1x16x64xf32", "1x4x64xf32"},
           {"8x16x64xf32", "8x4x64xf32"},
           {"tensor<16x64xf32>", "tensor<4x64xf32>"},
           {"sizes = [1, 16, 64]", "sizes = [1, 4, 64]"},
           {"%c4 = stablehlo.constant dense<4>",
            "%c4 = stablehlo.constant dense<16>"}})
    text = test::replacedAll(text, from, to);
  return text;
}

// The per-device program of `text`, cut into stages: shapes by name.
struct Staged {
  bool ok = false;
  std::string error;
  std::vector<int64_t> weights, result, stash;
  std::vector<int64_t> trips; ///< micro-batch loop, then the layer loops
  std::vector<std::vector<std::vector<int64_t>>> pairs;
  int chained = 0; ///< permutes that send on what a permute received
};

std::vector<std::vector<int64_t>> pairsOf(Operation &op) {
  const Attr *attr = op.attrs.get("source_target_pairs");
  const DenseReader r = attr->denseReader();
  std::vector<std::vector<int64_t>> out;
  for (int64_t i = 0; i + 1 < r.size(); i += 2)
    out.push_back({int64_t(r.doubleAt(i)), int64_t(r.doubleAt(i + 1))});
  return out;
}

// `text` made the per-device program and cut by shardlab-pipeline-stages
// with `options`; false (and the errors in `diags`) when the cut fails.
bool cutIntoStages(const std::string &text, const std::string &options,
                   LoadedModule &loaded, DiagnosticEngine &diags) {
  loaded = loadModule(text, diags);
  REQUIRE(loaded.module);
  REQUIRE(schedule::lowerToCollectives(*loaded.module, diags));
  PassPipeline pipeline;
  for (const auto &[flag, o] : perDeviceSteps())
    REQUIRE(appendPass(pipeline, flag, o));
  REQUIRE(appendPass(pipeline, "shardlab-pipeline-stages", options));
  return runPassPipeline(*loaded.module, pipeline, diags);
}

Staged stage(const std::string &text, const std::string &options) {
  Staged s;
  DiagnosticEngine diags;
  LoadedModule loaded;
  if (!cutIntoStages(text, options, loaded, diags)) {
    for (const Diagnostic &d : diags.diagnostics())
      s.error += d.message;
    return s;
  }
  s.ok = true;
  Module &module = *loaded.module;
  Operation &main = *module.mainFunc();
  Block &entry = main.region(0).front();
  s.weights = entry.argument(0)->type->shape;
  s.result = entry.back()->operand(0)->type->shape;
  walk(main, [&](Operation &op) {
    if (op.is("stablehlo.while")) {
      s.trips.push_back(*constantTripCount(op));
      if (op.numResults() == 3 && op.result(2)->type->shape.size() == 3 &&
          op.result(2)->type->shape[2] == 64 &&
          op.result(2)->type->shape[1] == 8)
        s.stash = op.result(2)->type->shape;
    }
    if (op.is("stablehlo.collective_permute")) {
      s.pairs.push_back(pairsOf(op));
      const Operation *from = op.operand(0)->defining_op;
      s.chained += from && from->is("stablehlo.collective_permute");
    }
  });
  return s;
}

schedule::PipelineOptions h100(int64_t stages, bool split = false) {
  schedule::TargetOptions target;
  target.pipeline_stages = stages;
  schedule::PipelineOptions o = *schedule::pipelineOptionsFor(target);
  o.program.split_micro_batches = split;
  return o;
}

json report(const std::string &text, int64_t stages, bool split = false) {
  const schedule::PipelineResult r =
      schedule::runSchedulePipeline(text, h100(stages, split));
  REQUIRE_MESSAGE(r.ok, r.error);
  return json::parse(schedule::reportJson(r.program, r.schedule));
}

} // namespace

TEST_CASE("Layer loops: the forward and backward loops inside the micro-batch "
          "loop") {
  DiagnosticEngine diags;
  auto module = loadModule(withMesh(R"(["stage"=2, "data"=2])"), diags).module;
  REQUIRE(module);
  const LayerLoops loops = findLayerLoops(*module->mainFunc());
  CHECK(loops.error == "");
  CHECK(loops.loops.size() == 2);
  CHECK(loops.layers == 8);
  CHECK(loops.micro_batches == 4);
  CHECK(loops.micro_batch_loop != nullptr);
}

TEST_CASE("Pipeline stages: each stage keeps its layers, the loops tick "
          "M + S - 1 times, activations go stage to stage") {
  // S = 2 stages over mesh ["stage"=2, "data"=2]: device 2s + d.
  const Staged s = stage(withMesh(R"(["stage"=2, "data"=2])"), "");
  CHECK(s.chained == 0);
  REQUIRE_MESSAGE(s.ok, s.error);
  CHECK(s.weights == std::vector<int64_t>{4, 64, 64}); // 8 layers / 2
  CHECK(s.result == std::vector<int64_t>{4, 64, 64});
  // 1F1B: min(S, M) = 2 micro-batches of 4 layers' inputs in flight; the
  // batch's 16 rows split over "data".
  CHECK(s.stash == std::vector<int64_t>{8, 8, 64});
  CHECK(s.trips == std::vector<int64_t>{5, 4, 4}); // 4 + 2 - 1 ticks
  REQUIRE(s.pairs.size() == 2);
  CHECK(s.pairs[0] == std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}});
  CHECK(s.pairs[1] == std::vector<std::vector<int64_t>>{{2, 0}, {3, 1}});
  // GPipe holds all M = 4 micro-batches: 4 x 4 layers.
  const Staged gpipe =
      stage(withMesh(R"(["stage"=2, "data"=2])"), "schedule=gpipe");
  REQUIRE(gpipe.ok);
  CHECK(gpipe.stash == std::vector<int64_t>{16, 8, 64});
  CHECK(gpipe.weights == std::vector<int64_t>{4, 64, 64});
}

TEST_CASE("Pipeline stages: interleaved, V chunks a device, the ring closed") {
  const Staged s =
      stage(withMesh(R"(["stage"=2, "data"=2])"), "virtual-stages=2");
  REQUIRE_MESSAGE(s.ok, s.error);
  CHECK(s.weights == std::vector<int64_t>{4, 64, 64}); // still L / S
  // 4 x 2 + 2 - 1 = 9 chunk ticks of 8 / (2 x 2) = 2 layers: 4 rounds of
  // the stage's 4 layers (two chunks), then a copy of the micro-batch loop
  // for the chunk left over (one trip of 2 layers).
  CHECK(s.trips == std::vector<int64_t>{4, 4, 4, 1, 2, 2});
  // The first stage's residuals: Megatron-LM's interleaved warm-up of
  // 2 (S - 1) + (V - 1) S = 4 chunk forwards and one more, 5 chunks of 2
  // layers (1F1B: 2 micro-batches of 4 layers, 8; GPipe: every chunk, 16).
  CHECK(s.stash == std::vector<int64_t>{10, 8, 64});
  const Staged all = stage(withMesh(R"(["stage"=2, "data"=2])"),
                           "virtual-stages=2 schedule=gpipe");
  REQUIRE_MESSAGE(all.ok, all.error);
  CHECK(all.stash == std::vector<int64_t>{16, 8, 64});
  // A round hands each chunk on: two permutes one after the other each
  // way, one in the last round; 9 each way, as there are chunk ticks.
  REQUIRE(s.pairs.size() == 6);
  CHECK(s.chained == 2);
  for (const auto &pairs : s.pairs)
    CHECK(pairs ==
          std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}, {2, 0}, {3, 1}});
  const Staged three =
      stage(withMesh(R"(["stage"=2, "data"=2])"), "virtual-stages=3");
  CHECK_FALSE(three.ok);
  CHECK(three.error.find("8 layers do not divide into 2 stages of 3 chunks") !=
        std::string::npos);
}

// kStep written with two layers a trip (jax.lax.scan's unroll=2): layer
// loops of 4 trips, each slicing rows 2i and 2i + 1 of the 8-layer stacks.
std::string unrolledTwice() {
  std::string text = withMesh(R"(["stage"=2, "data"=2])");
  const std::string fw_body =
      R"(      %ws = stablehlo.dynamic_slice %w, %i, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wi = stablehlo.reshape %ws : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %hr = stablehlo.reshape %h : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
      %st2 = stablehlo.dynamic_update_slice %st, %hr, %i, %c0, %c0 : (tensor<8x16x64xf32>, tensor<1x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x16x64xf32>
      %h2 = stablehlo.dot_general %h, %wi, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
)";
  const std::string fw_unrolled =
      R"(      %c2 = stablehlo.constant dense<2> : tensor<i32>
      %ia = stablehlo.multiply %i, %c2 : tensor<i32>
      %ib = stablehlo.add %ia, %c1 : tensor<i32>
      %wsa = stablehlo.dynamic_slice %w, %ia, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wia = stablehlo.reshape %wsa : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %hra = stablehlo.reshape %h : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
      %sta = stablehlo.dynamic_update_slice %st, %hra, %ia, %c0, %c0 : (tensor<8x16x64xf32>, tensor<1x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x16x64xf32>
      %ha = stablehlo.dot_general %h, %wia, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
      %ws = stablehlo.dynamic_slice %w, %ib, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wi = stablehlo.reshape %ws : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %hr = stablehlo.reshape %ha : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
      %st2 = stablehlo.dynamic_update_slice %sta, %hr, %ib, %c0, %c0 : (tensor<8x16x64xf32>, tensor<1x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x16x64xf32>
      %h2 = stablehlo.dot_general %ha, %wi, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
)";
  const std::string bw_body =
      R"(      %hs = stablehlo.dynamic_slice %fw#2, %k, %c0, %c0, sizes = [1, 16, 64] : (tensor<8x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
      %hk = stablehlo.reshape %hs : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
      %wks = stablehlo.dynamic_slice %w, %k, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wk = stablehlo.reshape %wks : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %dwk = stablehlo.dot_general %hk, %g, contracting_dims = [0] x [0] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
      %dwr = stablehlo.reshape %dwk : (tensor<64x64xf32>) -> tensor<1x64x64xf32>
      %dw2 = stablehlo.dynamic_update_slice %dw, %dwr, %k, %c0, %c0 : (tensor<8x64x64xf32>, tensor<1x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64x64xf32>
      %g2 = stablehlo.dot_general %g, %wk, contracting_dims = [1] x [1] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
)";
  const std::string bw_unrolled =
      R"(      %d2 = stablehlo.constant dense<2> : tensor<i32>
      %ka = stablehlo.multiply %k, %d2 : tensor<i32>
      %kb = stablehlo.add %ka, %c1 : tensor<i32>
      %hsa = stablehlo.dynamic_slice %fw#2, %ka, %c0, %c0, sizes = [1, 16, 64] : (tensor<8x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
      %hka = stablehlo.reshape %hsa : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
      %wksa = stablehlo.dynamic_slice %w, %ka, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wka = stablehlo.reshape %wksa : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %dwka = stablehlo.dot_general %hka, %g, contracting_dims = [0] x [0] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
      %dwra = stablehlo.reshape %dwka : (tensor<64x64xf32>) -> tensor<1x64x64xf32>
      %dwa = stablehlo.dynamic_update_slice %dw, %dwra, %ka, %c0, %c0 : (tensor<8x64x64xf32>, tensor<1x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64x64xf32>
      %ga = stablehlo.dot_general %g, %wka, contracting_dims = [1] x [1] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
      %hs = stablehlo.dynamic_slice %fw#2, %kb, %c0, %c0, sizes = [1, 16, 64] : (tensor<8x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
      %hk = stablehlo.reshape %hs : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
      %wks = stablehlo.dynamic_slice %w, %kb, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wk = stablehlo.reshape %wks : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %dwk = stablehlo.dot_general %hk, %ga, contracting_dims = [0] x [0] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
      %dwr = stablehlo.reshape %dwk : (tensor<64x64xf32>) -> tensor<1x64x64xf32>
      %dw2 = stablehlo.dynamic_update_slice %dwa, %dwr, %kb, %c0, %c0 : (tensor<8x64x64xf32>, tensor<1x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64x64xf32>
      %g2 = stablehlo.dot_general %ga, %wk, contracting_dims = [1] x [1] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
)";
  text = test::replacedAll(text, fw_body, fw_unrolled);
  text = test::replacedAll(text, bw_body, bw_unrolled);
  // The layer loops' bound: 4 trips (the micro-batch loop's %c4 too).
  text = test::replacedAll(text, "LT, %i, %c8", "LT, %i, %c4");
  text = test::replacedAll(text, "LT, %k, %c8", "LT, %k, %c4");
  REQUIRE(text.find("%ib") != std::string::npos);
  REQUIRE(text.find("%kb") != std::string::npos);
  return text;
}

TEST_CASE("Pipeline stages: layer loops of two layers a trip are cut into "
          "whole trips") {
  DiagnosticEngine diags;
  auto module = loadModule(unrolledTwice(), diags).module;
  REQUIRE(module);
  const LayerLoops loops = findLayerLoops(*module->mainFunc());
  CHECK(loops.error == "");
  CHECK(loops.loops.size() == 2);
  CHECK(loops.layers == 8);
  CHECK(loops.trips == 4);
  CHECK(loops.micro_batches == 4);
  // S = 2: each stage's 4 layers are 2 trips of 2; everything else as
  // with one layer a trip (weights, residuals of 2 micro-batches of 4
  // layers, 5 ticks, one permute each way a tick).
  const Staged s = stage(unrolledTwice(), "");
  REQUIRE_MESSAGE(s.ok, s.error);
  CHECK(s.weights == std::vector<int64_t>{4, 64, 64});
  CHECK(s.result == std::vector<int64_t>{4, 64, 64});
  CHECK(s.stash == std::vector<int64_t>{8, 8, 64});
  CHECK(s.trips == std::vector<int64_t>{5, 2, 2});
  CHECK(s.pairs.size() == 2);
  // Interleaved V = 2: chunks of 2 layers, one trip: 4 rounds of two
  // chunks, then the round of the chunk left over.
  const Staged v2 = stage(unrolledTwice(), "virtual-stages=2");
  REQUIRE_MESSAGE(v2.ok, v2.error);
  CHECK(v2.trips == std::vector<int64_t>{4, 2, 2, 1, 1, 1});
  CHECK(v2.stash == std::vector<int64_t>{10, 8, 64});
  // V = 4 would be chunks of one layer, half a trip.
  const Staged v4 = stage(unrolledTwice(), "virtual-stages=4");
  CHECK_FALSE(v4.ok);
  CHECK(v4.error.find("8 layers (4 trips of 2) do not divide into 2 stages "
                      "of 4 chunks") != std::string::npos);
  // The schedule: the same layers' work as the step of one layer a trip
  // cut the same way, the same sends.
  const json one = report(withMesh(R"(["stage"=2, "data"=2])"), 2),
             two = report(unrolledTwice(), 2);
  CHECK(two["per_kind"]["collective-permute"]["count"] ==
        one["per_kind"]["collective-permute"]["count"]);
  CHECK(two["parameter_bytes"] == one["parameter_bytes"]);
  // 5 ticks x 4 layers x 3 GEMMs a layer either way; the loops' own ops
  // (counter, bound) run half as often, so the compute is a little less.
  auto gemms = [](const json &r) {
    int n = 0;
    for (const json &op : r["ops"])
      n += op["name"].get<std::string>().rfind("stablehlo.dot_general", 0) == 0;
    return n;
  };
  CHECK(gemms(one) == 5 * 4 * 3);
  CHECK(gemms(two) == 5 * 4 * 3);
  CHECK(two["compute_us"].get<double>() < one["compute_us"].get<double>());
  CHECK(two["compute_us"].get<double>() >
        0.8 * one["compute_us"].get<double>());
}

TEST_CASE("Pipeline stages: what cannot be cut says why") {
  const Staged three = stage(withMesh(R"(["stage"=3, "data"=2])"), "");
  CHECK_FALSE(three.ok);
  CHECK(three.error.find("8 layers do not divide into 3 stages") !=
        std::string::npos);
  const Staged no_axis = stage(withMesh(R"(["x"=2, "data"=2])"), "");
  CHECK_FALSE(no_axis.ok);
  CHECK(no_axis.error.find("no mesh has an axis \"stage\"") !=
        std::string::npos);
  const Staged wrong = stage(withMesh(R"(["stage"=2, "data"=2])"), "stages=4");
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.error.find("stages=4 but mesh axis \"stage\" has 2") !=
        std::string::npos);
}

TEST_CASE("Pipeline stages: the schedule's collectives, counted by hand") {
  const std::string text = withMesh(R"(["stage"=2, "data"=2])");
  const json flat = report(text, 0), piped = report(text, 2);
  // Without stages: 4 micro-batches x 8 layers, each backward layer
  // all-reducing its [64, 64] f32 gradient over "data" (16 KiB).
  CHECK(flat["per_kind"]["all-reduce"]["count"] == 32);
  CHECK(flat["per_kind"]["all-reduce"]["bytes"] == 32 * 16384);
  CHECK_FALSE(flat["per_kind"].contains("collective-permute"));
  // Two stages: 5 ticks x 4 layers; per tick one activation [8, 64] f32
  // (2 KiB) sent forward and one gradient sent back.
  CHECK(piped["per_kind"]["all-reduce"]["count"] == 20);
  CHECK(piped["per_kind"]["all-reduce"]["bytes"] == 20 * 16384);
  CHECK(piped["per_kind"]["collective-permute"]["count"] == 10);
  CHECK(piped["per_kind"]["collective-permute"]["bytes"] == 10 * 2048);
  // A stage's weights: half of 8 x 64 x 64 f32.
  CHECK(piped["parameter_bytes"].get<int64_t>() ==
        flat["parameter_bytes"].get<int64_t>() - 4 * 64 * 64 * 4);
  // 20 layer-iterations of work a device instead of 32.
  CHECK(piped["compute_us"].get<double>() < flat["compute_us"].get<double>());
  bool said = false;
  for (const json &a : piped["assumptions"])
    said |= a.get<std::string>().rfind("pipeline: 2 pipeline stages (1F1B)",
                                       0) == 0;
  CHECK(said);
}

TEST_CASE("Pipeline candidates: S dividing the layers, micro-batches split "
          "where there are fewer than S, the reason where there is no "
          "pipeline") {
  Result<strategy::ModuleAnalysis> analysis =
      strategy::analyzeArguments(withMesh(R"(["data"=8])"));
  REQUIRE(analysis);
  CHECK(analysis->layers.layers == 8);
  CHECK(analysis->layers.micro_batches == 4);
  std::vector<std::string> names;
  for (const strategy::Plan &p : strategy::candidatePlans(*analysis, 8, 8))
    if (p.stages > 0)
      names.push_back(p.name);
  // S in {2, 4, 8} (8 layers, 8 devices); the rest of the devices split
  // into data x tensor, the data axis with or without FSDP. S = 8 has more
  // stages than the 4 micro-batches: each is split towards 4 S = 32 in all, as
  // far as its 16 rows allow: 16 rows over 1 device, split 8 ways (4 x 16 = 64
  // > 32, so 16 halves once).
  std::vector<int64_t> splits;
  for (const strategy::Plan &p : strategy::candidatePlans(*analysis, 8, 8))
    if (p.stages > 0)
      splits.push_back(p.micro_split);
  CHECK(names ==
        std::vector<std::string>{"PP×DP 2×4", "PP×FSDP 2×4", "PP×DP×TP 2×2×2",
                                 "PP×FSDP×TP 2×2×2", "PP×TP 2×4", "PP×DP 4×2",
                                 "PP×FSDP 4×2", "PP×TP 4×2", "PP 8 mb÷8"});
  CHECK(splits == std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 8});
  // A split pipeline is split again from its plan before the split, as
  // far as its rows allow (16 rows: 64 micro-batches of 1), never on top of
  // the first split; a recomputation row keeps its policy.
  strategy::Plan pp8;
  for (const strategy::Plan &p : strategy::candidatePlans(*analysis, 8, 8))
    if (p.name == "PP 8 mb÷8")
      pp8 = p;
  REQUIRE(pp8.unsplit);
  CHECK(pp8.unsplit->name == "PP 8");
  const std::optional<strategy::Plan> again = strategy::splitMicroBatchesPlan(
      pp8, analysis->args, 4, 512, strategy::kMostSplitLoweredDevices);
  REQUIRE(again);
  CHECK(again->name == "PP 8 mb÷16");
  CHECK(again->micro_split == 16);
  CHECK(strategy::meshText(again->mesh) == R"(<["stage"=8, "micro"=16]>)");
  CHECK(strategy::planKey(*again) ==
        strategy::planKey(*strategy::splitMicroBatchesPlan(
            *pp8.unsplit, analysis->args, 4, 512,
            strategy::kMostSplitLoweredDevices)));
  CHECK_FALSE(strategy::splitMicroBatchesPlan(
      *again, analysis->args, 4, 512, strategy::kMostSplitLoweredDevices));
  const std::optional<strategy::Plan> recomputed =
      strategy::splitMicroBatchesPlan(strategy::recomputePlan(pp8, "full"),
                                      analysis->args, 4, 512,
                                      strategy::kMostSplitLoweredDevices);
  REQUIRE(recomputed);
  CHECK(recomputed->name == "PP 8 recompute full mb÷16");
  CHECK(recomputed->recompute == "full");
  strategy::ModuleAnalysis unlooped = *analysis;
  unlooped.layers = strategy::LayerStack{};
  unlooped.layers.error = "no loop over stacked layers";
  bool reason = false;
  for (const strategy::Plan &p : strategy::candidatePlans(unlooped, 8, 8))
    reason |=
        p.name == "PP" && p.error == "no pipeline: " + unlooped.layers.error;
  CHECK(reason);
}

TEST_CASE("Pipeline candidates with FSDP: a stage's parameters over "
          "\"data\", never their layer dim; collectives by hand") {
  // The weights [8, 64, 64]: FSDP splits dim 1 (the largest that divides),
  // the pipeline dim 0.
  Result<strategy::ModuleAnalysis> analysis =
      strategy::analyzeArguments(withMesh(R"(["data"=4])"));
  REQUIRE(analysis);
  const std::vector<strategy::Plan> plans =
      strategy::candidatePlans(*analysis, 4, 8);
  const auto named = [&](const std::string &name) {
    for (const strategy::Plan &p : plans)
      if (p.name == name)
        return p;
    FAIL("no plan " << name);
    return strategy::Plan{};
  };
  const strategy::Plan fsdp = named("PP×FSDP 2×2");
  CHECK(fsdp.error.empty());
  CHECK(fsdp.stages == 2);
  CHECK(fsdp.args[0] == strategy::ArgAxes{{}, {"data"}, {}});
  CHECK(named("PP×DP 2×2").args[0] == strategy::ArgAxes{{}, {}, {}});
  // A stack of 128 layers of [64, 32]: the layer dim is the largest, which
  // FSDP alone splits, but a pipeline cuts it into stages.
  strategy::ArgAnalysis tall = analysis->args[0];
  tall.info.shape = {128, 64, 32};
  strategy::LayerStack deep = analysis->layers;
  deep.layers = 128;
  strategy::ModuleAnalysis stacked = *analysis;
  stacked.args = {tall, analysis->args[1]};
  stacked.layers = deep;
  for (const strategy::Plan &p : strategy::candidatePlans(stacked, 4, 8)) {
    if (p.name == "FSDP")
      CHECK(p.args[0] == strategy::ArgAxes{{"data"}, {}, {}});
    if (p.name == "PP×FSDP 2×2")
      CHECK(p.args[0] == strategy::ArgAxes{{}, {"data"}, {}});
  }
  // Estimated as the comparer runs it: on the two "data" devices of a
  // stage, each of its 5 ticks x 4 layers runs what a layer of the flat
  // FSDP step over 2 devices runs (Shardy moves the 8-row activations
  // rather than gather the 16 KiB weight: per layer 3 all-to-alls, one
  // all-gather, one reduce-scatter), and each tick sends one activation and
  // one gradient of [8, 64] f32 (2 KiB) between the stages.
  strategy::CompareOptions options;
  options.devices = 4;
  options.only = {"PP×FSDP 2×2"};
  options.threads = 1;
  options.pipeline = h100(0);
  Result<strategy::Comparison> c =
      strategy::compareStrategies(withMesh(R"(["data"=4])"), options);
  REQUIRE(c);
  const strategy::Candidate *row = nullptr;
  for (const strategy::Candidate &r : c->rows)
    if (r.name == "PP×FSDP 2×2")
      row = &r;
  REQUIRE(row);
  REQUIRE_MESSAGE(row->ok, row->error);
  std::map<std::string, int64_t> counts, bytes;
  for (const strategy::CollectiveTotals &u : row->collectives) {
    counts[u.kind] = u.count;
    bytes[u.kind] = u.bytes;
  }
  CHECK(counts == std::map<std::string, int64_t>{{"all-gather", 20},
                                                 {"all-to-all", 60},
                                                 {"collective-permute", 10},
                                                 {"reduce-scatter", 20}});
  CHECK(bytes["collective-permute"] == 10 * 2048);
  // A device holds its stage's 4 layers, half of each: [4, 32, 64] f32,
  // and its half of the batch's rows (4 x 8 x 64 f32: every stage reads
  // the batch).
  CHECK(row->argument_bytes == 4 * 32 * 64 * 4 + 4 * 8 * 64 * 4);
  // ... which is the flat FSDP step over 2 devices (8 x 4 layer-iterations),
  // 5/8 of each of its collectives.
  const json flat = report(
      test::replacedAll(
          test::replacedAll(
              withMesh(R"(["data"=2])"),
              "func.func @main(%w: tensor<8x64x64xf32>,",
              R"(func.func @main(%w: tensor<8x64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}, {}]>},)"),
          ") -> tensor<8x64x64xf32> {\n  %c0",
          R"() -> (tensor<8x64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}, {}]>}) {)"
          "\n  %c0"),
      0);
  for (const char *kind : {"all-gather", "all-to-all", "reduce-scatter"}) {
    CHECK(flat["per_kind"][kind]["count"].get<int64_t>() * 5 ==
          counts[kind] * 8);
    CHECK(flat["per_kind"][kind]["bytes"].get<int64_t>() * 5 ==
          bytes[kind] * 8);
  }
}

// kStep with a momentum: m gathers the accumulated gradient and w moves by
// it, both returned (optimizer state for ZeRO-1).
std::string withMomentum(const std::string &mesh) {
  std::string text = withMesh(mesh);
  auto replace = [&](const std::string &from, const std::string &to) {
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("func.func @main(%w: tensor<8x64x64xf32>, %x:",
          "func.func @main(%w: tensor<8x64x64xf32>, %m: "
          "tensor<8x64x64xf32>, %x:");
  replace(") -> tensor<8x64x64xf32> {",
          ") -> (tensor<8x64x64xf32>, tensor<8x64x64xf32>) {");
  replace("  %new = stablehlo.subtract %w, %mb#1 : tensor<8x64x64xf32>\n"
          "  return %new : tensor<8x64x64xf32>",
          "  %m2 = stablehlo.add %m, %mb#1 : tensor<8x64x64xf32>\n"
          "  %new = stablehlo.subtract %w, %m2 : tensor<8x64x64xf32>\n"
          "  return %new, %m2 : tensor<8x64x64xf32>, tensor<8x64x64xf32>");
  return text;
}

TEST_CASE("Pipeline candidates with ZeRO-1: a stage's optimizer state over "
          "its data axis, the weights whole, the new weights pinned") {
  const std::string text = withMomentum(R"(["data"=8])");
  Result<strategy::ModuleAnalysis> analysis = strategy::analyzeArguments(text);
  REQUIRE(analysis);
  REQUIRE(analysis->args.size() == 3);
  CHECK(analysis->args[1].optimizer_state);
  CHECK_FALSE(analysis->args[0].optimizer_state);
  CHECK(analysis->updates == std::vector<int64_t>{0, -1});
  std::map<std::string, strategy::Plan> plans;
  for (strategy::Plan &p : strategy::candidatePlans(*analysis, 8, 8))
    plans.emplace(p.name, std::move(p));
  // Beside every pipeline whose data axis is 2 or more; never the layer
  // dim, which the stages cut.
  for (const char *name :
       {"PP×DP 2×4 ZeRO-1", "PP×DP×TP 2×2×2 ZeRO-1", "PP×DP 4×2 ZeRO-1"})
    CHECK_MESSAGE(plans.count(name), name);
  CHECK_FALSE(plans.count("PP×TP 2×4 ZeRO-1"));
  const strategy::Plan &z = plans.at("PP×DP 2×4 ZeRO-1");
  CHECK(z.stages == 2);
  CHECK(z.args[0] == strategy::ArgAxes{{}, {}, {}});
  CHECK(z.args[1] == strategy::ArgAxes{{}, {"data"}, {}});
  CHECK(z.write_unsharded);
  CHECK(z.pinned_results == std::vector<std::pair<size_t, size_t>>{{0, 0}});
  // It runs: the stage's state is a quarter of its 4 layers' (4 x 64 x 64
  // f32), 48 KiB less than PP×DP 2×4's arguments.
  strategy::CompareOptions options;
  options.devices = 8;
  options.pipeline = *schedule::pipelineOptionsFor({});
  options.only = {"PP×DP 2×4", "PP×DP 2×4 ZeRO-1"};
  Result<strategy::Comparison> c = strategy::compareStrategies(text, options);
  REQUIRE(c);
  std::map<std::string, strategy::Candidate> rows;
  for (const strategy::Candidate &row : c->rows)
    rows.emplace(row.name, row);
  REQUIRE(rows.count("PP×DP 2×4"));
  REQUIRE(rows.count("PP×DP 2×4 ZeRO-1"));
  const strategy::Candidate &dp = rows.at("PP×DP 2×4");
  const strategy::Candidate &zero = rows.at("PP×DP 2×4 ZeRO-1");
  REQUIRE_MESSAGE(dp.ok, dp.error);
  REQUIRE_MESSAGE(zero.ok, zero.error);
  CHECK(dp.argument_bytes - zero.argument_bytes == 3 * 4 * 64 * 64 * 4 / 4);
}

TEST_CASE("Split micro-batches: the step as if written with smaller "
          "micro-batches") {
  // 4 micro-batches of 16 rows, split in 4 over a "micro" axis on the
  // rows, against the same step written with 16 micro-batches of 4 rows:
  // each device runs the same 16 iterations on the same 2 rows.
  const std::string split = test::replacedAll(
      withMesh(R"(["data"=2, "micro"=4])"), R"([{}, {"data"}, {}])",
      R"([{}, {"data", "micro"}, {}])");
  const std::string written =
      withSmallerMicroBatches(withMesh(R"(["data"=2])"));
  const json a = report(split, 0, true), b = report(written, 0);
  CHECK(a["step_time_us"].get<double>() ==
        doctest::Approx(b["step_time_us"].get<double>()).epsilon(1e-9));
  CHECK(a["peak_memory_bytes"] == b["peak_memory_bytes"]);
  CHECK(a["per_kind"] == b["per_kind"]);
  CHECK(a["topology"]["num_devices"] == 2); // the "micro" devices are time
  CHECK(a["loops"][0]["trip_count"] == 16);
  // Each backward layer all-reduces its gradient over "data" only: 16
  // iterations x 8 layers.
  CHECK(a["per_kind"]["all-reduce"]["count"] == 128);
  bool said = false;
  for (const json &line : a["assumptions"])
    said |=
        line.get<std::string>().rfind("micro-batches: each of the 4", 0) == 0;
  CHECK(said);
  // With pipeline stages too: split first, then cut.
  const std::string both = test::replacedAll(
      withMesh(R"(["stage"=2, "data"=2, "micro"=4])"), R"([{}, {"data"}, {}])",
      R"([{}, {"data", "micro"}, {}])");
  const json c = report(both, 2, true);
  CHECK(c["loops"][0]["trip_count"] == 16 + 2 - 1);
  CHECK(c["per_kind"]["collective-permute"]["count"] == 2 * 17);
  // ...which is the pipeline of the step written with 16 micro-batches of 4
  // rows, to the microsecond and the byte (the comparer's PP rows for a
  // step with fewer micro-batches than stages).
  const json d =
      report(withSmallerMicroBatches(withMesh(R"(["stage"=2, "data"=2])")), 2);
  CHECK(c["step_time_us"].get<double>() ==
        doctest::Approx(d["step_time_us"].get<double>()).epsilon(1e-9));
  CHECK(c["per_kind"] == d["per_kind"]);
  CHECK(c["peak_memory_bytes"] == d["peak_memory_bytes"]);
}

TEST_CASE("Split micro-batches: a sharded weight's gradient is still "
          "reduce-scattered, as in the step written with smaller "
          "micro-batches") {
  // FSDP: the weight's rows over "data"; micro-batches of `rows` rows, so
  // that gathering the weight is cheaper than moving the activations.
  // Lowered with the split, Shardy sums the gradient over ("data",
  // "micro") and keeps a part by "data" (all_reduce, then all_slice);
  // without "micro" that is the reduce-scatter the step written with
  // smaller micro-batches has (XLA's ReduceScatterCreator,
  // shardlab-reduce-scatter-creator).
  auto step = [](const std::string &mesh, const std::string &batch_axes,
                 int64_t micro_batches, int64_t rows) {
    std::string text = withMesh(mesh);
    const std::string r = std::to_string(rows);
    for (
        const auto &[from, to] :
        std::vector<std::pair<std::string, std::string>>{
            {"4x16x64xf32",
             std::to_string(micro_batches) + "x" + r + "x64xf32"},
            {"1x16x64xf32", "1x" + r + "x64xf32"},
            {"8x16x64xf32", "8x" + r + "x64xf32"},
            {"tensor<16x64xf32>", "tensor<" + r + "x64xf32>"},
            {"sizes = [1, 16, 64]", "sizes = [1, " + r + ", 64]"},
            {"%c4 = stablehlo.constant dense<4>",
             "%c4 = stablehlo.constant dense<" + std::to_string(micro_batches) +
                 ">"},
            {R"([{}, {"data"}, {}]>}) -> tensor<8x64x64xf32> {)",
             "[{}, {" + batch_axes +
                 R"(}, {}]>}) -> (tensor<8x64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}, {}]>}) {)"},
            {"func.func @main(%w: tensor<8x64x64xf32>,",
             R"(func.func @main(%w: tensor<8x64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}, {}]>},)"}})
      text = test::replacedAll(text, from, to);
    return text;
  };
  // Micro-batches of 16 rows: moving the activations is cheaper than
  // gathering the weight, and Shardy moves them across "micro" too (a
  // collective_permute and an all-to-all of the batch): not a split of the
  // loop, and the row says so.
  const schedule::PipelineResult crossing = schedule::runSchedulePipeline(
      step(R"(["data"=2, "micro"=4])", R"("data", "micro")", 4, 16),
      h100(0, true));
  CHECK_FALSE(crossing.ok);
  CHECK(crossing.error.find("crosses the micro-batch split (the batch "
                            "gathered back)") != std::string::npos);
  const std::string split =
      step(R"(["data"=2, "micro"=4])", R"("data", "micro")", 4, 512);
  const std::string written = step(R"(["data"=2])", R"("data")", 16, 128);
  REQUIRE(split.find(R"({"data", "micro"})") != std::string::npos);
  const json a = report(split, 0, true), b = report(written, 0);
  REQUIRE(b["per_kind"].contains("reduce-scatter"));
  CHECK(a["per_kind"] == b["per_kind"]);
  CHECK_FALSE(a["per_kind"].contains("all-reduce"));
  CHECK(a["step_time_us"].get<double>() ==
        doctest::Approx(b["step_time_us"].get<double>()).epsilon(1e-9));
  CHECK(a["peak_memory_bytes"] == b["peak_memory_bytes"]);
}

TEST_CASE("Split micro-batches: a step with no loop over micro-batches "
          "says why") {
  const std::string flat = R"(
sdy.mesh @mesh = <["micro"=2]>
func.func @main(%x: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"micro"}, {}]>}, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
)";
  const schedule::PipelineResult r =
      schedule::runSchedulePipeline(flat, h100(0, true));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("no loop over stacked layers") != std::string::npos);
}

TEST_CASE("Pipeline stages: layer loops with no loop over micro-batches "
          "say why") {
  // kStep's forward and backward layer loops, run once on the whole batch.
  const std::string once = R"(
sdy.mesh @mesh = <["stage"=2]>
func.func @main(%w: tensor<8x64x64xf32>, %x: tensor<16x64xf32>) -> tensor<8x64x64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c8 = stablehlo.constant dense<8> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<8x64x64xf32>
  %s0 = stablehlo.constant dense<0.0> : tensor<8x16x64xf32>
  %fw:3 = stablehlo.while(%i = %c0, %h = %x, %st = %s0) : tensor<i32>, tensor<16x64xf32>, tensor<8x16x64xf32>
  cond {
    %flt = stablehlo.compare LT, %i, %c8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %flt : tensor<i1>
  } do {
    %ws = stablehlo.dynamic_slice %w, %i, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
    %wi = stablehlo.reshape %ws : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
    %hr = stablehlo.reshape %h : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
    %st2 = stablehlo.dynamic_update_slice %st, %hr, %i, %c0, %c0 : (tensor<8x16x64xf32>, tensor<1x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x16x64xf32>
    %h2 = stablehlo.dot_general %h, %wi, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %h2, %st2 : tensor<i32>, tensor<16x64xf32>, tensor<8x16x64xf32>
  }
  %bw:3 = stablehlo.while(%k = %c0, %g = %fw#1, %dw = %z) : tensor<i32>, tensor<16x64xf32>, tensor<8x64x64xf32>
  cond {
    %blt = stablehlo.compare LT, %k, %c8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %blt : tensor<i1>
  } do {
    %hs = stablehlo.dynamic_slice %fw#2, %k, %c0, %c0, sizes = [1, 16, 64] : (tensor<8x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
    %hk = stablehlo.reshape %hs : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
    %dwk = stablehlo.dot_general %hk, %g, contracting_dims = [0] x [0] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
    %dwr = stablehlo.reshape %dwk : (tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %dw2 = stablehlo.dynamic_update_slice %dw, %dwr, %k, %c0, %c0 : (tensor<8x64x64xf32>, tensor<1x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64x64xf32>
    %k2 = stablehlo.add %k, %c1 : tensor<i32>
    stablehlo.return %k2, %g, %dw2 : tensor<i32>, tensor<16x64xf32>, tensor<8x64x64xf32>
  }
  return %bw#2 : tensor<8x64x64xf32>
}
)";
  const schedule::PipelineResult r =
      schedule::runSchedulePipeline(once, h100(2));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("not inside a loop over micro-batches (gradient "
                     "accumulation): a pipeline needs micro-batches") !=
        std::string::npos);
  // The comparer gives the same reason for its pipeline row.
  const Result<strategy::ModuleAnalysis> analysis =
      strategy::analyzeArguments(once);
  REQUIRE(analysis);
  CHECK(analysis->layers.error.find("not inside a loop over micro-batches") !=
        std::string::npos);
}

namespace {

// Every field of two rows but the time it took to evaluate them.
void checkSameRow(const strategy::Candidate &a, const strategy::Candidate &b) {
  INFO(a.name);
  CHECK(a.name == b.name);
  CHECK(a.description == b.description);
  CHECK(a.mesh == b.mesh);
  CHECK(a.ok == b.ok);
  CHECK(a.error == b.error);
  CHECK(a.step_time_us == b.step_time_us);
  CHECK(a.compute_us == b.compute_us);
  CHECK(a.exposed_comm_us == b.exposed_comm_us);
  CHECK(a.peak_memory_bytes == b.peak_memory_bytes);
  CHECK(a.fits == b.fits);
  CHECK(a.collectives.size() == b.collectives.size());
  CHECK(a.assumptions == b.assumptions);
}

// The phases of a comparison run as `shares` instances would run them,
// each phase's shares merged by plan index.
strategy::Comparison phasesShared(const std::string &text,
                                  const strategy::CompareOptions &options,
                                  int shares, int64_t &evaluated) {
  using strategy::ComparePhase;
  strategy::PhaseRequest request;
  request.shares = shares;
  int64_t pruned = 0;
  for (ComparePhase phase : {ComparePhase::Base, ComparePhase::Recompute,
                             ComparePhase::Split, ComparePhase::Interleave}) {
    request.phase = phase;
    std::map<int64_t, strategy::Candidate> merged;
    for (int share = 0; share < shares; ++share) {
      request.share = share;
      Result<strategy::Comparison> part =
          strategy::comparePhase(text, options, request);
      REQUIRE_MESSAGE(part, part.error().message);
      REQUIRE(part->rows.size() == part->plan_indices.size());
      for (size_t k = 0; k < part->rows.size(); ++k) {
        CHECK(part->plan_indices[k] % shares == share);
        merged[part->plan_indices[k]] = part->rows[k];
      }
      if (share == 0)
        pruned += part->pruned_by_bound;
    }
    evaluated += int64_t(merged.size());
    for (auto &[index, row] : merged)
      request.earlier.push_back(row);
  }
  request.phase = ComparePhase::Finish;
  request.pruned_by_bound = pruned;
  Result<strategy::Comparison> out =
      strategy::comparePhase(text, options, request);
  REQUIRE_MESSAGE(out, out.error().message);
  return *out;
}

} // namespace

TEST_CASE("comparePhase: the phases run in shares and merged are "
          "compareStrategies") {
  // 300,000 bytes a device: PP×DP 2×4 does not fit and is split (a row of
  // the split phase); the fastest that fits is recomputed as it already is
  // (no row: the recompute phase drops it) and interleaved (a row of the
  // interleave phase; the bubble of the next pipeline that fits could not
  // save enough to beat it, and the bound prunes it).
  strategy::CompareOptions options;
  options.devices = 8;
  options.threads = 1;
  options.pipeline = h100(0);
  options.pipeline.device_memory_bytes = 300000;
  const std::string text = withMesh(R"(["data"=4])");
  Result<strategy::Comparison> whole =
      strategy::compareStrategies(text, options);
  REQUIRE(whole);
  bool split = false, interleaved = false;
  for (const strategy::Candidate &row : whole->rows) {
    split |= row.name == "PP×DP 2×4 mb÷4";
    interleaved |= row.name.find("interleaved") != std::string::npos;
  }
  CHECK(split);
  CHECK(interleaved);
  for (int shares : {1, 2, 3}) {
    INFO("shares: " << shares);
    int64_t evaluated = 0;
    const strategy::Comparison merged =
        phasesShared(text, options, shares, evaluated);
    CHECK(evaluated == int64_t(whole->rows.size()));
    REQUIRE(merged.rows.size() == whole->rows.size());
    for (size_t i = 0; i < merged.rows.size(); ++i)
      checkSameRow(merged.rows[i], whole->rows[i]);
    CHECK(merged.why_fastest == whole->why_fastest);
    CHECK(merged.pruned_by_bound == whole->pruned_by_bound);
    CHECK(merged.devices == whole->devices);
    CHECK(merged.args.size() == whole->args.size());
  }
}

TEST_CASE("comparePhase: rows that are not this module's phases' say which") {
  strategy::CompareOptions options;
  options.devices = 8;
  options.threads = 1;
  options.pipeline = h100(0);
  const std::string text = withMesh(R"(["data"=4])");
  strategy::PhaseRequest request;
  request.phase = strategy::ComparePhase::Recompute;
  Result<strategy::Comparison> none =
      strategy::comparePhase(text, options, request);
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("expected the 28 rows of the base phase, "
                                  "got 0") != std::string::npos);
  request.phase = strategy::ComparePhase::Base;
  Result<strategy::Comparison> base =
      strategy::comparePhase(text, options, request);
  REQUIRE(base);
  request.earlier = base->rows;
  std::swap(request.earlier[1], request.earlier[2]);
  request.phase = strategy::ComparePhase::Split;
  Result<strategy::Comparison> swapped =
      strategy::comparePhase(text, options, request);
  REQUIRE_FALSE(swapped);
  CHECK(swapped.error().message.find("row 1 is \"" + base->rows[2].name +
                                     "\", expected \"" + base->rows[1].name +
                                     "\"") != std::string::npos);
  request.earlier = base->rows;
  request.earlier.push_back(base->rows[3]);
  Result<strategy::Comparison> stranger =
      strategy::comparePhase(text, options, request);
  REQUIRE_FALSE(stranger);
  CHECK(stranger.error().message.find(
            "is no recomputation choice of the base rows") !=
        std::string::npos);
  request.phase = strategy::ComparePhase::Interleave;
  Result<strategy::Comparison> late =
      strategy::comparePhase(text, options, request);
  REQUIRE_FALSE(late);
  CHECK(late.error().message.find("is no recomputation or split choice of "
                                  "the rows before it") != std::string::npos);
  request.phase = strategy::ComparePhase::Split;
  request.share = 2;
  request.shares = 2;
  CHECK_FALSE(strategy::comparePhase(text, options, request));
}

TEST_CASE("Pipeline candidates with ZeRO-1: the collectives by hand") {
  // withMomentum with 1,024 rows a micro-batch (256 a device over "data"
  // = 4): activations [256, 64] f32 (64 KiB) outweigh a layer's weight
  // [64, 64] f32 (16 KiB), so the gradient is reduced, not the
  // activations moved.
  std::string text = test::replacedAll(withMomentum(R"(["data"=8])"),
                                       "16x64xf32", "1024x64xf32");
  text =
      test::replacedAll(text, "sizes = [1, 16, 64]", "sizes = [1, 1024, 64]");
  strategy::CompareOptions options;
  options.devices = 8;
  options.pipeline = *schedule::pipelineOptionsFor({});
  options.only = {"PP×DP 2×4", "PP×DP 2×4 ZeRO-1"};
  Result<strategy::Comparison> c = strategy::compareStrategies(text, options);
  REQUIRE(c);
  std::map<std::string, strategy::Candidate> rows;
  for (const strategy::Candidate &row : c->rows)
    rows.emplace(row.name, row);
  const strategy::Candidate &dp = rows.at("PP×DP 2×4");
  const strategy::Candidate &zero = rows.at("PP×DP 2×4 ZeRO-1");
  REQUIRE_MESSAGE(dp.ok, dp.error);
  REQUIRE_MESSAGE(zero.ok, zero.error);
  using Totals = std::map<std::string, std::pair<int64_t, int64_t>>;
  auto totals = [](const strategy::Candidate &row) {
    Totals out;
    for (const strategy::CollectiveTotals &t : row.collectives)
      out[t.kind] = {t.count, t.bytes};
    return out;
  };
  const int64_t layer = 64 * 64 * 4, activation = 256 * 64 * 4;
  // Both: 5 ticks x 4 layers a stage; each tick one activation forward and
  // one gradient back. PP×DP all-reduces each layer's gradient over
  // "data"; ZeRO-1 reduce-scatters it to the momentum's quarter (the
  // accumulator carries the state's split: each micro-batch's gradients
  // are scattered, as ZeRO-2's are) and gathers the stage's new weights
  // [4, 64, 64] once at the end, exposed: nothing follows it.
  CHECK(totals(dp) == Totals{{"all-reduce", {20, 20 * layer}},
                             {"collective-permute", {10, 10 * activation}}});
  CHECK(totals(zero) == Totals{{"reduce-scatter", {20, 20 * layer / 4}},
                               {"all-gather", {1, 4 * layer}},
                               {"collective-permute", {10, 10 * activation}}});
  for (const strategy::CollectiveTotals &t : zero.collectives)
    if (t.kind == "all-gather")
      CHECK(t.exposed_us == doctest::Approx(t.comm_us));
  // A quarter of the stage's momentum: 3/4 of [4, 64, 64] f32 less.
  CHECK(dp.argument_bytes - zero.argument_bytes == 3 * 4 * layer / 4);
}

namespace {

// kStep at a size where a tick's GEMMs outweigh the rest: layers of
// [1024, 1024] f32, micro-batches of 4,096 rows.
std::string scaledStep(const std::string &mesh) {
  std::string text = withMesh(mesh);
  for (const auto &[from, to] :
       std::vector<std::pair<std::string, std::string>>{
           {"64x64", "1024x1024"},
           {"16x64", "4096x1024"},
           {"[1, 16, 64]", "[1, 4096, 1024]"},
           {"[1, 64, 64]", "[1, 1024, 1024]"}})
    text = test::replacedAll(text, from, to);
  return text;
}

constexpr double kGemmRate = 1e14;       // FLOP/s, every shape
constexpr double kPermuteLatencyUs = 10; // a collective_permute: LAT + B / BW
constexpr double kPermuteBandwidth = 100e9;

using Totals = std::map<std::string, std::pair<int64_t, int64_t>>;
Totals collectiveTotals(const strategy::Candidate &row) {
  Totals out;
  for (const strategy::CollectiveTotals &t : row.collectives)
    out[t.kind] = {t.count, t.bytes};
  return out;
}

double permuteUs(int64_t bytes) {
  return kPermuteLatencyUs + double(bytes) / kPermuteBandwidth * 1e6;
}

// GEMMs of the scaled step's shapes at kGemmRate; collective_permutes of 4
// to 64 MiB between 2 devices at permuteUs.
std::string pipelineTable() {
  test::HandTable table(2);
  table.gemms({1024, 4096}, "f32", kGemmRate);
  for (int64_t mib : {4, 8, 16, 32, 64})
    for (const char *type :
         {"intra_partition_one_way", "intra_partition_two_way_all_mutual"})
      table.collective("collective-permute", type, "f32", mib << 20, 2,
                       permuteUs(mib << 20));
  return table.json();
}

} // namespace

TEST_CASE("Pipeline candidates: a pipeline's step time by hand") {
  // PP 2 on 2 devices, 1F1B: each stage keeps 4 of the 8 layers and the
  // micro-batch loop runs M + S - 1 = 5 ticks, each a micro-batch's forward
  // and backward through the stage's layers (the bubble: the idle ticks
  // compute too, on padding, as a JAX pipeline does).
  Result<cost::PerfTable> table = cost::parsePerfTable(pipelineTable());
  REQUIRE(table);
  schedule::TargetOptions target;
  target.table = &*table;
  strategy::CompareOptions options;
  options.devices = 2;
  options.threads = 1;
  options.only = {"PP 2"};
  options.pipeline = *schedule::pipelineOptionsFor(target);
  // As written, every device runs the whole step (x replicated): slower
  // than the pipeline, which is then the fastest row that fits.
  const std::string text = test::replacedAll(
      scaledStep(R"(["data"=2])"), R"([{}, {"data"}, {}])", "[{}, {}, {}]");
  Result<strategy::Comparison> c = strategy::compareStrategies(text, options);
  REQUIRE(c);
  const auto rowNamed = [&](const std::string &name) {
    const strategy::Candidate *found = nullptr;
    for (const strategy::Candidate &row : c->rows)
      if (row.name == name)
        found = &row;
    REQUIRE_MESSAGE(found, name);
    REQUIRE_MESSAGE(found->ok, found->error);
    return found;
  };
  const strategy::Candidate *pp = rowNamed("PP 2");
  CHECK(pp->mesh == R"(<["stage"=2]>)");

  // Every kernel but the GEMMs moves its bytes at the device's memory
  // bandwidth and pays one launch. X: a micro-batch's activation [4096,
  // 1024] f32 (16 MiB); W: a layer's weight [1024, 1024] f32 (4 MiB).
  const cost::HardwarePreset &hw = options.pipeline.program.hardware;
  const auto kernel = [&](double bytes) {
    return bytes / hw.hbm_bytes_per_s * 1e6 + hw.kernel_launch_us;
  };
  const double X = 4096.0 * 1024 * 4, W = 1024.0 * 1024 * 4;
  const double gemm = 2.0 * 4096 * 1024 * 1024 / kGemmRate * 1e6;
  // The tail of a tick: the loop counter and the stage's gradients [4,
  // 1024, 1024] added to the accumulator (read two, write one).
  const double tail = hw.kernel_launch_us + kernel(3 * 4 * W);
  // Forward, a layer: slice its weight (read W, write W), save its input
  // in place (the update's X read and written), the counter, h W.
  const double forward = kernel(2 * W) + kernel(2 * X) + hw.kernel_launch_us;
  // Backward, a layer: slice the saved input and the weight, the counter,
  // two GEMMs (the weight's gradient and the input's), the gradient
  // written in place.
  const double backward =
      kernel(2 * X) + kernel(2 * W) + hw.kernel_launch_us + kernel(2 * W);
  // A tick: the micro-batch's slice of x (read X, write X), 4 layers each
  // way, the tail; once at the end, the update w - acc. (Left out: the
  // elementwise arithmetic, one FLOP an element at the peak, under 0.1%.)
  const auto computeUs = [&](int ticks, int layers) {
    return ticks * (kernel(2 * X) + layers * (forward + backward) + tail) +
           kernel(3 * 4 * W) + ticks * layers * 3 * gemm;
  };
  CHECK(pp->compute_us == doctest::Approx(computeUs(5, 4)).epsilon(1e-3));
  // Each tick sends the stage's activation on (s -> s + 1) and the
  // gradient back (s -> s - 1), X each; the forward's waits for the
  // backward, which reads it, and the next tick waits for the backward's,
  // under which only the tail runs.
  CHECK(collectiveTotals(*pp) ==
        Totals{{"collective-permute", {10, int64_t(10 * X)}}});
  const double permute = permuteUs(int64_t(X));
  CHECK(pp->exposed_comm_us ==
        doctest::Approx(10 * permute - 5 * tail).epsilon(1e-4));
  CHECK(pp->step_time_us ==
        doctest::Approx(pp->compute_us + pp->exposed_comm_us).epsilon(1e-9));

  // Interleaved, V = 2 chunks of 2 layers a device (the comparer's choice
  // for the fastest pipeline that fits): M V + S - 1 = 9 chunk ticks of 2
  // layers (54 layer-ticks of work instead of 60), in 4 rounds of the
  // stage's 4 layers and one of 2; a tick's slice of x and its tail run
  // once a round (5 times, as 1F1B's 5 ticks), the update once. A round
  // sends two permutes each way, one after the other, the last one each
  // (18): the tail overlaps the backward's last permute of each round.
  const strategy::Candidate *v2 = rowNamed("PP 2 interleaved×2");
  CHECK(v2->compute_us ==
        doctest::Approx(computeUs(4, 4) + computeUs(1, 2) - kernel(3 * 4 * W))
            .epsilon(1e-3));
  CHECK(collectiveTotals(*v2) ==
        Totals{{"collective-permute", {18, int64_t(18 * X)}}});
  CHECK(v2->exposed_comm_us ==
        doctest::Approx(18 * permute - 5 * tail).epsilon(1e-4));
  // Here the permutes cost more than the shorter bubble saves.
  CHECK(v2->step_time_us > pp->step_time_us);

  target.pipeline_stages = 2;
  const std::string staged = test::replacedAll(
      scaledStep(R"(["stage"=2])"), R"([{}, {"data"}, {}])", "[{}, {}, {}]");
  // GPipe takes as long as 1F1B and holds all 4 micro-batches' inputs to
  // the stage's 4 layers where 1F1B holds 2: 8 X more.
  const schedule::PipelineResult one = schedule::runSchedulePipeline(
      staged, *schedule::pipelineOptionsFor(target));
  target.pipeline_schedule = "gpipe";
  const schedule::PipelineResult all = schedule::runSchedulePipeline(
      staged, *schedule::pipelineOptionsFor(target));
  REQUIRE(one.ok);
  REQUIRE(all.ok);
  CHECK(one.schedule.step_time_us ==
        doctest::Approx(pp->step_time_us).epsilon(1e-9));
  CHECK(all.schedule.step_time_us ==
        doctest::Approx(one.schedule.step_time_us).epsilon(1e-4));
  CHECK(all.schedule.peak_memory_bytes - one.schedule.peak_memory_bytes ==
        int64_t(8 * X));
  // 1F1B's peak, by hand: the stage's weights [4, 1024, 1024] and the
  // batch x [4, 4096, 1024] as arguments (4 W + 4 X); at a backward layer's
  // GEMM, the saved inputs (2 micro-batches x 4 layers, 8 X), the
  // accumulated gradients and this tick's (4 W each), the gradient coming
  // in, the saved input read back and the gradient going out (X each), the
  // layer's weight and its gradient (W each); and a few 4-byte counters.
  const int64_t by_hand =
      int64_t(4 * W + 4 * X + 8 * X + 8 * W + 3 * X + 2 * W);
  CHECK(one.schedule.peak_memory_bytes >= by_hand);
  CHECK(one.schedule.peak_memory_bytes < by_hand + 64);
}

namespace {

// kStep with the ends of a model around its layers: an "embedding" GEMM
// (weight %e) before the forward loop, a "head" (weight %hd), a loss and
// the head's backward between the loops, and the embedding's gradient
// summed over the micro-batches beside the layers'.
const char *kStepWithEnds = R"(
sdy.mesh @mesh = <["stage"=2, "data"=2]>
func.func @main(%w: tensor<8x64x64xf32>, %x: tensor<4x16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}, {}]>}, %e: tensor<64x64xf32>, %hd: tensor<64x64xf32>) -> (tensor<8x64x64xf32>, tensor<64x64xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %c8 = stablehlo.constant dense<8> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<8x64x64xf32>
  %ze = stablehlo.constant dense<0.0> : tensor<64x64xf32>
  %zl = stablehlo.constant dense<0.0> : tensor<f32>
  %mb:4 = stablehlo.while(%j = %c0, %acc = %z, %eacc = %ze, %loss = %zl) : tensor<i32>, tensor<8x64x64xf32>, tensor<64x64xf32>, tensor<f32>
  cond {
    %lt = stablehlo.compare LT, %j, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %xs = stablehlo.dynamic_slice %x, %j, %c0, %c0, sizes = [1, 16, 64] : (tensor<4x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
    %x0 = stablehlo.reshape %xs : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
    %h0 = stablehlo.dot_general %x0, %e, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %s0 = stablehlo.constant dense<0.0> : tensor<8x16x64xf32>
    %fw:3 = stablehlo.while(%i = %c0, %h = %h0, %st = %s0) : tensor<i32>, tensor<16x64xf32>, tensor<8x16x64xf32>
    cond {
      %flt = stablehlo.compare LT, %i, %c8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %flt : tensor<i1>
    } do {
      %ws = stablehlo.dynamic_slice %w, %i, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wi = stablehlo.reshape %ws : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %hr = stablehlo.reshape %h : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
      %st2 = stablehlo.dynamic_update_slice %st, %hr, %i, %c0, %c0 : (tensor<8x16x64xf32>, tensor<1x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x16x64xf32>
      %h2 = stablehlo.dot_general %h, %wi, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
      %i2 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %i2, %h2, %st2 : tensor<i32>, tensor<16x64xf32>, tensor<8x16x64xf32>
    }
    %y = stablehlo.dot_general %fw#1, %hd, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %l = stablehlo.reduce(%y init: %zl) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64xf32>, tensor<f32>) -> tensor<f32>
    %g0 = stablehlo.dot_general %y, %hd, contracting_dims = [1] x [1] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %bw:3 = stablehlo.while(%k = %c0, %g = %g0, %dw = %z) : tensor<i32>, tensor<16x64xf32>, tensor<8x64x64xf32>
    cond {
      %blt = stablehlo.compare LT, %k, %c8 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %blt : tensor<i1>
    } do {
      %hs = stablehlo.dynamic_slice %fw#2, %k, %c0, %c0, sizes = [1, 16, 64] : (tensor<8x16x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x64xf32>
      %hk = stablehlo.reshape %hs : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
      %wks = stablehlo.dynamic_slice %w, %k, %c0, %c0, sizes = [1, 64, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x64xf32>
      %wk = stablehlo.reshape %wks : (tensor<1x64x64xf32>) -> tensor<64x64xf32>
      %dwk = stablehlo.dot_general %hk, %g, contracting_dims = [0] x [0] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
      %dwr = stablehlo.reshape %dwk : (tensor<64x64xf32>) -> tensor<1x64x64xf32>
      %dw2 = stablehlo.dynamic_update_slice %dw, %dwr, %k, %c0, %c0 : (tensor<8x64x64xf32>, tensor<1x64x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64x64xf32>
      %g2 = stablehlo.dot_general %g, %wk, contracting_dims = [1] x [1] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
      %k2 = stablehlo.add %k, %c1 : tensor<i32>
      stablehlo.return %k2, %g2, %dw2 : tensor<i32>, tensor<16x64xf32>, tensor<8x64x64xf32>
    }
    %de = stablehlo.dot_general %x0, %bw#1, contracting_dims = [0] x [0] : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
    %eacc2 = stablehlo.add %eacc, %de : tensor<64x64xf32>
    %acc2 = stablehlo.add %acc, %bw#2 : tensor<8x64x64xf32>
    %loss2 = stablehlo.add %loss, %l : tensor<f32>
    %j2 = stablehlo.add %j, %c1 : tensor<i32>
    stablehlo.return %j2, %acc2, %eacc2, %loss2 : tensor<i32>, tensor<8x64x64xf32>, tensor<64x64xf32>, tensor<f32>
  }
  %new = stablehlo.subtract %w, %mb#1 : tensor<8x64x64xf32>
  %newe = stablehlo.subtract %e, %mb#2 : tensor<64x64xf32>
  return %new, %newe, %mb#3 : tensor<8x64x64xf32>, tensor<64x64xf32>, tensor<f32>
}
)";

// What a staged kStepWithEnds holds, op by op.
struct EndsStaged {
  std::vector<int64_t> carried; ///< values each micro-batch loop carries
  std::vector<int64_t> trips;   ///< every loop's, in program order
  int outer_dots = 0;           ///< GEMMs outside the layer loops
  int permutes = 0;
  int chained = 0; ///< permutes that send on what a permute received
  std::vector<std::string> results;      ///< what defines each result
  size_t arguments = 0;                  ///< the step's, after the cut
  std::vector<std::string> layer_inputs; ///< what defines each loop's h / g
};

EndsStaged stageEnds(const std::string &options) {
  DiagnosticEngine diags;
  LoadedModule loaded;
  REQUIRE(cutIntoStages(kStepWithEnds, options, loaded, diags));
  Module &module = *loaded.module;
  EndsStaged s;
  Operation &main = *module.mainFunc();
  Block &entry = main.region(0).front();
  s.arguments = entry.numArguments();
  for (size_t i = 0; i < entry.back()->numOperands(); ++i)
    s.results.push_back(
        std::string(entry.back()->operand(i)->defining_op->name));
  walk(main, [&](Operation &op) {
    if (op.is("stablehlo.while")) {
      s.trips.push_back(*constantTripCount(op));
      const bool layer_loop =
          op.parentOp() && op.parentOp()->is("stablehlo.while");
      if (layer_loop)
        s.layer_inputs.push_back(std::string(op.operand(1)->defining_op->name));
      else
        s.carried.push_back(int64_t(op.numOperands()));
    }
    s.permutes += op.is("stablehlo.collective_permute");
    const Operation *from =
        op.numOperands() ? op.operand(0)->defining_op : nullptr;
    s.chained += op.is("stablehlo.collective_permute") && from &&
                 from->is("stablehlo.collective_permute");
    const Operation *parent = op.parentOp();
    s.outer_dots += op.is("stablehlo.dot_general") && parent &&
                    parent->is("stablehlo.while") && parent->parentOp() &&
                    parent->parentOp()->is("func.func");
  });
  return s;
}

} // namespace

TEST_CASE("Pipeline stages: a middle stage runs its layers only") {
  // Every stage (the default): the embedding, head, loss and the
  // embedding's gradient each tick, beside 4 layers.
  const EndsStaged every = stageEnds("");
  CHECK(every.outer_dots == 4);
  CHECK(every.arguments == 4);
  CHECK(every.carried == std::vector<int64_t>{4});
  CHECK(every.trips == std::vector<int64_t>{5, 4, 4});
  CHECK(every.permutes == 2);
  CHECK(every.results == std::vector<std::string>{"stablehlo.subtract",
                                                  "stablehlo.subtract",
                                                  "stablehlo.while"});
  // A middle stage: the same ticks, layer loops and sends; the layers'
  // inputs come as zeros (received), the ends' weights and the batch are
  // no longer arguments (only %w is), the loop no longer carries their
  // gradient sum or the loss, and the step's results without a layer
  // dimension are zeros.
  const EndsStaged middle = stageEnds("stage-kind=middle");
  CHECK(middle.outer_dots == 0);
  CHECK(middle.arguments == 1);
  CHECK(middle.carried == std::vector<int64_t>{2});
  CHECK(middle.trips == every.trips);
  CHECK(middle.permutes == 2);
  CHECK(middle.layer_inputs ==
        std::vector<std::string>{"stablehlo.constant", "stablehlo.constant"});
  CHECK(middle.results == std::vector<std::string>{"stablehlo.subtract",
                                                   "stablehlo.constant",
                                                   "stablehlo.constant"});
  // Interleaved, the round left over (the loop's copy) is cut the same way,
  // and a round's two hand-overs each way are two chunks' outputs, not one
  // sent on twice (every stage's feed the ends one after the other).
  CHECK(stageEnds("virtual-stages=2").chained == 2);
  const EndsStaged rounds = stageEnds("virtual-stages=2 stage-kind=middle");
  CHECK(rounds.chained == 0);
  CHECK(rounds.trips == std::vector<int64_t>{4, 4, 4, 1, 2, 2});
  CHECK(rounds.carried == std::vector<int64_t>{2, 2});
  CHECK(rounds.outer_dots == 0);
  CHECK(rounds.permutes == 6);
  CHECK(rounds.arguments == 1);
}

TEST_CASE("Pipeline stages: a middle stage's step is the layers' share") {
  // The estimate of a middle stage drops the ends' kernels and keeps the
  // layers': shorter than every stage's, by less than half (a tick's 12
  // layer GEMMs stay, 3 for each of 4 layers; the ends' 4 of the same size
  // go).
  schedule::PipelineOptions options = h100(2);
  const schedule::PipelineResult every =
      schedule::runSchedulePipeline(kStepWithEnds, options);
  options.program.pipeline_stage_kind = "middle";
  const schedule::PipelineResult middle =
      schedule::runSchedulePipeline(kStepWithEnds, options);
  REQUIRE_MESSAGE(every.ok, every.error);
  REQUIRE_MESSAGE(middle.ok, middle.error);
  CHECK(middle.schedule.step_time_us < every.schedule.step_time_us);
  CHECK(middle.schedule.step_time_us > 0.5 * every.schedule.step_time_us);
  const json report =
      json::parse(schedule::reportJson(middle.program, middle.schedule));
  CHECK(report.dump().find("a middle stage: its layers only") !=
        std::string::npos);
  // By hand: a stage's 4 layers' weights [4, 64, 64] f32 are a middle
  // stage's only parameters; every stage also holds the ends' two [64, 64]
  // and its batch [4, 8, 64] (16 rows split over "data").
  const json every_report =
      json::parse(schedule::reportJson(every.program, every.schedule));
  CHECK(report["parameter_bytes"] == 4 * 64 * 64 * 4);
  CHECK(every_report["parameter_bytes"] ==
        4 * 64 * 64 * 4 + 2 * 64 * 64 * 4 + 4 * 8 * 64 * 4);
}

TEST_CASE("Pipeline stages: a slice that keeps every layer keeps the stage's "
          "(ZeRO-1's shard of a stack)") {
  // kStep returning half of each layer's gradient sum, sliced statically
  // and dynamically as ZeRO-1 takes a device's shard of a stacked state:
  // each keeps all 8 layers, so each keeps the stage's 4, sizes included.
  std::string text = withMesh(R"(["stage"=2, "data"=2])");
  text = test::replacedAll(text, "-> tensor<8x64x64xf32> {",
                           "-> (tensor<8x32x64xf32>, tensor<8x32x64xf32>) {");
  text = test::replacedAll(
      text, "  return %new : tensor<8x64x64xf32>",
      "  %half = stablehlo.slice %new [0:8, 0:32, 0:64] : "
      "(tensor<8x64x64xf32>) -> tensor<8x32x64xf32>\n"
      "  %dhalf = stablehlo.dynamic_slice %new, %c0, %c1, %c0, sizes = [8, "
      "32, 64] : (tensor<8x64x64xf32>, tensor<i32>, tensor<i32>, "
      "tensor<i32>) -> tensor<8x32x64xf32>\n"
      "  return %half, %dhalf : tensor<8x32x64xf32>, tensor<8x32x64xf32>");
  DiagnosticEngine diags;
  LoadedModule loaded;
  REQUIRE(cutIntoStages(text, "", loaded, diags));
  Module &module = *loaded.module;
  Operation *ret = module.mainFunc()->region(0).front().back();
  REQUIRE(ret->numOperands() == 2);
  for (size_t i = 0; i < 2; ++i)
    CHECK(ret->operand(i)->type->shape == std::vector<int64_t>{4, 32, 64});
  const Operation *slice = ret->operand(0)->defining_op;
  const Operation *dynamic = ret->operand(1)->defining_op;
  REQUIRE(slice->is("stablehlo.slice"));
  REQUIRE(dynamic->is("stablehlo.dynamic_slice"));
  CHECK(slice->attrs.get("limit_indices")->ints() ==
        std::vector<int64_t>{4, 32, 64});
  CHECK(dynamic->attrs.get("slice_sizes")->ints() ==
        std::vector<int64_t>{4, 32, 64});
  // The program a stage runs still verifies (sizes match the types).
  CHECK(verifyModule(module, diags));
}
