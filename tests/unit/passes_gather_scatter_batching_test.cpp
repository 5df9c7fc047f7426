// -sdy-explicit-gather-scatter-batching run through the pass registry: which
// gathers and scatters get explicit batching dims, how their indices are
// rebuilt, and the dimension numbers it prints.
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

std::string runBatching(const std::string &text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  const PassInfo *pass = lookupPass("sdy-explicit-gather-scatter-batching");
  REQUIRE(pass);
  REQUIRE(static_cast<bool>(pass->run));
  REQUIRE(pass->run(*module, {}, diags));
  return printModule(*module);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// A func gathering rows of a 4x8 operand with `indices` (of `type`),
// computed by `body`.
std::string gatherFunc(const std::string &body, const std::string &type,
                       const std::string &dims) {
  return "func.func @f(%arg0: tensor<4x8xf32>, %arg1: tensor<4x1xi32>) -> "
         "tensor<4x1xf32> {\n" +
         body + "  %r = \"stablehlo.gather\"(%arg0, %indices) " +
         "{dimension_numbers = #stablehlo.gather<" + dims +
         ">, slice_sizes = array<i64: 1, 1>} : (tensor<4x8xf32>, " + type +
         ") -> tensor<4x1xf32>\n  return %r : tensor<4x1xf32>\n}\n";
}

const char *kRowColumnDims = "offset_dims = [1], collapsed_slice_dims = [0], "
                             "start_index_map = [0, 1], index_vector_dim = 1";

} // namespace

TEST_CASE("explicit batching: an iota concatenated with a column index") {
  std::string out = runBatching(
      gatherFunc("  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>\n"
                 "  %indices = stablehlo.concatenate %iota, %arg1, dim = 1 : "
                 "(tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>\n",
                 "tensor<4x2xi32>", kRowColumnDims));
  CHECK(contains(out,
                 "\"stablehlo.gather\"(%arg0, %arg1) <{dimension_numbers "
                 "= #stablehlo.gather<offset_dims = [1], "
                 "operand_batching_dims = [0], "
                 "start_indices_batching_dims = [0], start_index_map = "
                 "[1], index_vector_dim = 1>, indices_are_sorted = false"));
  // The iota and the concatenate are dead and erased.
  CHECK_FALSE(contains(out, "stablehlo.iota"));
  CHECK_FALSE(contains(out, "stablehlo.concatenate"));
}

TEST_CASE("explicit batching: indices that are an iota are sliced") {
  std::string out = runBatching(
      gatherFunc("  %indices = stablehlo.iota dim = 0 : tensor<4x2xi32>\n",
                 "tensor<4x2xi32>", kRowColumnDims));
  CHECK(contains(out, "stablehlo.slice %0 [0:4, 1:2] : (tensor<4x2xi32>) -> "
                      "tensor<4x1xi32>"));
  CHECK(contains(out, "\"stablehlo.gather\"(%arg0, %1)"));
  CHECK(contains(out, "start_indices_batching_dims = [0]"));
}

TEST_CASE("explicit batching: a middle component is cut out by two slices") {
  std::string out = runBatching(gatherFunc(
      "  %indices = stablehlo.iota dim = 0 : tensor<4x3xi32>\n",
      "tensor<4x3xi32>",
      "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = "
      "[1, 0, 1], index_vector_dim = 1"));
  CHECK(contains(out, "stablehlo.slice %0 [0:4, 0:1]"));
  CHECK(contains(out, "stablehlo.slice %0 [0:4, 2:3]"));
  CHECK(contains(out, "stablehlo.concatenate %1, %2, dim = 1 : "
                      "(tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>"));
  CHECK(contains(out, "start_index_map = [1, 1]"));
}

TEST_CASE("explicit batching: the iota may pass through select and clamp") {
  std::string out = runBatching(gatherFunc(
      "  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>\n"
      "  %p = stablehlo.compare LT, %arg1, %arg1 : (tensor<4x1xi32>, "
      "tensor<4x1xi32>) -> tensor<4x1xi1>\n"
      "  %s = stablehlo.select %p, %arg1, %iota : tensor<4x1xi1>, "
      "tensor<4x1xi32>\n"
      "  %c = stablehlo.clamp %arg1, %s, %arg1 : tensor<4x1xi32>\n"
      "  %indices = stablehlo.concatenate %c, %arg1, dim = 1 : "
      "(tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>\n",
      "tensor<4x2xi32>", kRowColumnDims));
  CHECK(contains(out, "operand_batching_dims = [0]"));
}

TEST_CASE("explicit batching: left alone without an iota along dim 0") {
  std::string module =
      gatherFunc("  %iota = stablehlo.iota dim = 1 : tensor<4x2xi32>\n"
                 "  %indices = stablehlo.add %iota, %iota : tensor<4x2xi32>\n",
                 "tensor<4x2xi32>", kRowColumnDims);
  std::string out = runBatching(module);
  CHECK_FALSE(contains(out, "batching_dims"));
  CHECK(contains(out, "stablehlo.iota dim = 1"));
  CHECK_FALSE(contains(out, "indices_are_sorted"));
}

TEST_CASE("explicit batching: a scatter keeps its body and flags") {
  std::string out = runBatching(
      "func.func @f(%arg0: tensor<32x8xi32>, %arg1: tensor<32x1xi32>, %arg2: "
      "tensor<32xi32>) -> tensor<32x8xi32> {\n"
      "  %iota = stablehlo.iota dim = 0 : tensor<32x1xi32>\n"
      "  %indices = stablehlo.concatenate %iota, %arg1, dim = 1 : "
      "(tensor<32x1xi32>, tensor<32x1xi32>) -> tensor<32x2xi32>\n"
      "  %r = \"stablehlo.scatter\"(%arg0, %indices, %arg2) <{"
      "scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = "
      "[0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, "
      "unique_indices = true}> ({\n"
      "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
      "    stablehlo.return %b : tensor<i32>\n"
      "  }) : (tensor<32x8xi32>, tensor<32x2xi32>, tensor<32xi32>) -> "
      "tensor<32x8xi32>\n"
      "  return %r : tensor<32x8xi32>\n}\n");
  CHECK(contains(out, "\"stablehlo.scatter\"(%arg0, %arg1, %arg2)"));
  CHECK(contains(out, "#stablehlo.scatter<inserted_window_dims = [1], "
                      "input_batching_dims = [0], "
                      "scatter_indices_batching_dims = [0], "
                      "scatter_dims_to_operand_dims = [1], index_vector_dim = "
                      "1>"));
  CHECK(contains(out, "indices_are_sorted = false"));
  CHECK(contains(out, "unique_indices = true"));
  CHECK(contains(out, "stablehlo.return"));
}

TEST_CASE("the import pipeline runs the pass only when asked to") {
  std::string module =
      gatherFunc("  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>\n"
                 "  %indices = stablehlo.concatenate %iota, %arg1, dim = 1 : "
                 "(tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>\n",
                 "tensor<4x2xi32>", kRowColumnDims);
  auto run = [&](const std::string &options) {
    DiagnosticEngine diags;
    auto parsed = parseModule(module, diags);
    REQUIRE(parsed);
    PassPipeline pipeline;
    REQUIRE(appendPass(pipeline, "sdy-import-pipeline", options).ok());
    REQUIRE(runPassPipeline(*parsed, pipeline, diags));
    return printModule(*parsed);
  };
  CHECK_FALSE(contains(run(""), "operand_batching_dims"));
  CHECK(contains(run("enable-explicit-gather-scatter-batching=true"),
                 "operand_batching_dims = [0]"));
}
