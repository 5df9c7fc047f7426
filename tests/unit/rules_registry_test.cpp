// Unit tests of the op sharding rule registry: the rules of representative
// ops (reshape in both modes, dot_general, gather/scatter, convolution),
// generic-form attributes, custom rules and the unknown-op warnings. Rules
// are compared in their printed form, as Shardy's tests do.
#include "rules/registry.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include "rules/stablehlo_attrs.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

// The text of the `#sdy.op_sharding_rule<...>` printed on the first line
// that contains `op_name`; "<none>" when that line has no rule.
std::string ruleOnLine(const std::string &printed, std::string_view op_name) {
  size_t line_start = printed.find(op_name);
  REQUIRE(line_start != std::string::npos);
  size_t line_end = printed.find('\n', line_start);
  std::string line = printed.substr(line_start, line_end - line_start);
  size_t start = line.find("#sdy.op_sharding_rule<");
  if (start == std::string::npos)
    return "<none>";
  int depth = 0;
  for (size_t i = start; i < line.size(); ++i) {
    if (line[i] == '-' && i + 1 < line.size() && line[i + 1] == '>') {
      ++i; // the arrow of `->`
    } else if (line[i] == '<') {
      ++depth;
    } else if (line[i] == '>' && --depth == 0) {
      return line.substr(start, i - start + 1);
    }
  }
  return "<unterminated>";
}

struct PassRun {
  std::string printed;
  std::vector<Diagnostic> diags;
};

PassRun populate(std::string_view text, bool conservative = false) {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(text, diags);
  REQUIRE(module);
  REQUIRE(runNestedPass(
      *module, "sdy-populate-op-sharding-rules", diags,
      {{"conservative-propagation", conservative ? "true" : "false"}}));
  return {printModule(*module), diags.diagnostics()};
}

// The rule printed on the first line containing `marker` (the op's name, or
// for ops with regions an attribute printed after the region) once the pass
// ran on `module_text`.
std::string ruleOf(std::string_view marker, const std::string &module_text,
                   bool conservative = false) {
  return ruleOnLine(populate(module_text, conservative).printed, marker);
}

const char *kReshapeTemplate = R"(
func.func @f(%arg0: tensor<IN>) -> tensor<OUT> {
  %0 = stablehlo.reshape %arg0 : (tensor<IN>) -> tensor<OUT>
  return %0 : tensor<OUT>
})";

std::string reshapeRule(const std::string &in, const std::string &out,
                        bool conservative = false) {
  std::string text = kReshapeTemplate;
  for (size_t pos; (pos = text.find("IN")) != std::string::npos;)
    text.replace(pos, 2, in);
  for (size_t pos; (pos = text.find("OUT")) != std::string::npos;)
    text.replace(pos, 3, out);
  return ruleOf("stablehlo.reshape", text, conservative);
}

} // namespace

TEST_CASE("registry: reshape factorizes split and merged dims into compound "
          "factors") {
  CHECK(reshapeRule("8x4x5xf32", "2x16x5xf32") ==
        "#sdy.op_sharding_rule<([ij, k, l])->([i, jk, l]) {i=2, j=4, k=4, "
        "l=5}>");
  CHECK(reshapeRule("6x4xf32", "4x6xf32") ==
        "#sdy.op_sharding_rule<([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, "
        "m=2, n=2}>");
  CHECK(reshapeRule("3x2xf32", "2x3xf32") ==
        "#sdy.op_sharding_rule<([i, l])->([j, k]) {i=3, j=2, k=3, l=2}>");
  CHECK(reshapeRule("1x8x4xf32", "8x1x4x1xf32") ==
        "#sdy.op_sharding_rule<([i, j, l])->([j, k, l, m]) {i=1, j=8, k=1, "
        "l=4, m=1}>");
  CHECK(reshapeRule("4x7x5x8xf32", "14x10x8xf32") ==
        "#sdy.op_sharding_rule<([ij, l, n, o])->([ik, mn, o]) {i=2, j=2, k=7, "
        "l=7, m=2, n=5, o=8}>");
  CHECK(reshapeRule("1x1xf32", "f32") ==
        "#sdy.op_sharding_rule<([i, j])->([]) {i=1, j=1}>");
}

TEST_CASE("registry: reshape is the same in conservative mode; no rule "
          "without elements") {
  CHECK(reshapeRule("8x4x5xf32", "2x16x5xf32", true) ==
        reshapeRule("8x4x5xf32", "2x16x5xf32", false));
  CHECK(reshapeRule("32xf32", "8x1x4xf32", true) ==
        "#sdy.op_sharding_rule<([ik])->([i, j, k]) {i=8, j=1, k=4}>");
  CHECK(reshapeRule("4x0xf32", "0x8xf32") == "<none>");
  CHECK(reshapeRule("4x?xf32", "8x?xf32") == "<none>");
}

TEST_CASE("registry: dot_general in the pretty and the generic form") {
  const char *pretty = R"(
func.func @f(%arg0: tensor<2x4x8x4x64x32xf32>, %arg1: tensor<16x32x64x4x2xf32>) -> tensor<2x4x8x4x16xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0, 1] x [4, 3], contracting_dims = [5, 4] x [1, 2] : (tensor<2x4x8x4x64x32xf32>, tensor<16x32x64x4x2xf32>) -> tensor<2x4x8x4x16xf32>
  return %0 : tensor<2x4x8x4x16xf32>
})";
  CHECK(ruleOf("stablehlo.dot_general", pretty) ==
        "#sdy.op_sharding_rule<([i, j, k, l, o, n], [m, n, o, j, i])->([i, j, "
        "k, l, m]) {i=2, j=4, k=8, l=4, m=16, n=32, o=64} reduction={n, o}>");
  const char *generic = R"(
func.func @f(%arg0: tensor<4x8x32xf32>, %arg1: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {
  %0 = "stablehlo.dot_general"(%arg0, %arg1) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
})";
  // Checked on the rule itself: printing a generic-form dot_general is not
  // in reach of the printer yet (its pretty printer expects parsed numbers).
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(generic, diags);
  REQUIRE(module);
  Operation *dot = nullptr;
  walk(module->op(), [&](Operation &op) {
    if (op.is("stablehlo.dot_general"))
      dot = &op;
  });
  REQUIRE(dot);
  std::optional<OpShardingRule> rule = createOpShardingRule(*dot, false);
  REQUIRE(rule);
  using Mapping = OpShardingRule::TensorMapping;
  CHECK(rule->operands ==
        std::vector<Mapping>{{{0}, {1}, {3}}, {{0}, {3}, {2}}});
  CHECK(rule->results == std::vector<Mapping>{{{0}, {1}, {2}}});
  CHECK(rule->factor_sizes == std::vector<int64_t>{4, 8, 16, 32});
  CHECK(rule->reduction == std::vector<int64_t>{3});
}

TEST_CASE("registry: gather with batching dims") {
  const char *text = R"(
func.func @f(%arg0: tensor<5x3x7x4xf32>, %arg1: tensor<7x5x3x2xi64>) -> tensor<7x5x3x2xf32> {
  %0 = "stablehlo.gather"(%arg0, %arg1) {dimension_numbers = #stablehlo.gather<offset_dims = [3], collapsed_slice_dims = [1], operand_batching_dims = [0, 2], start_indices_batching_dims = [1, 0], start_index_map = [1, 3], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1, 2>} : (tensor<5x3x7x4xf32>, tensor<7x5x3x2xi64>) -> tensor<7x5x3x2xf32>
  return %0 : tensor<7x5x3x2xf32>
})";
  CHECK(ruleOf("stablehlo.gather", text) ==
        "#sdy.op_sharding_rule<([j, m, i, l], [i, j, k, n])->([i, j, k, l]) "
        "{i=7, j=5, k=3, l=4, m=3, n=2} reduction={m} need_replication={l, n} "
        "blocked_propagation={l}>");
}

namespace {

std::string scatterText(const char *reducer) {
  std::string text = R"(
func.func @f(%arg0: tensor<3x4x2xf32>, %arg1: tensor<2x3x2xi64>, %arg2: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32> {
  %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %1 = REDUCER %arg3, %arg4 : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>, unique_indices = false} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
})";
  text.replace(text.find("REDUCER"), 7, reducer);
  return text;
}

} // namespace

TEST_CASE("registry: scatter batch dims reduce only with a supported body") {
  CHECK(ruleOf("}) {sdy.sharding_rule", scatterText("stablehlo.add")) ==
        "#sdy.op_sharding_rule<([n, k, m], [i, j, o], [i, j, l, m])->([n, k, "
        "m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=2} reduction={i, j} "
        "need_replication={k, l, o}>");
  CHECK(ruleOf("}) {sdy.sharding_rule", scatterText("stablehlo.subtract")) ==
        "#sdy.op_sharding_rule<([n, k, m], [i, j, o], [i, j, l, m])->([n, k, "
        "m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=2} need_replication={i, j, k, "
        "l, o}>");
}

namespace {

std::string convText(const char *dim_numbers_form) {
  std::string text = R"(
func.func @f(%arg0: tensor<2x224x224x192xf32>, %arg1: tensor<3x3x192x64xf32>) -> tensor<2x112x112x64xf32> {
  %0 = FORM : (tensor<2x224x224x192xf32>, tensor<3x3x192x64xf32>) -> tensor<2x112x112x64xf32>
  return %0 : tensor<2x112x112x64xf32>
})";
  text.replace(text.find("FORM"), 4, dim_numbers_form);
  return text;
}

const char *kPrettyConv =
    "stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, "
    "o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} "
    "{batch_group_count = 1 : i64, feature_group_count = 1 : i64}";

} // namespace

TEST_CASE("registry: convolution spatial dims, and none when conservative") {
  CHECK(ruleOf("stablehlo.convolution", convText(kPrettyConv)) ==
        "#sdy.op_sharding_rule<([i, jk, lm, n], [k, m, n, o])->([i, j, l, o]) "
        "{i=2, j=112, k=2, l=112, m=2, n=192, o=64} reduction={k, m, n} "
        "permutation={j, l}>");
  CHECK(ruleOf("stablehlo.convolution", convText(kPrettyConv), true) ==
        "#sdy.op_sharding_rule<([i, l, m, j], [n, o, j, k])->([i, p, q, k]) "
        "{i=2, j=192, k=64, l=1, m=1, n=1, o=1, p=1, q=1} reduction={j}>");
}

TEST_CASE("registry: convolution in the generic form") {
  const char *generic =
      "\"stablehlo.convolution\"(%arg0, %arg1) {batch_group_count = 1 : i64, "
      "dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, "
      "input_feature_dimension = 3, input_spatial_dimensions = [1, 2], "
      "kernel_input_feature_dimension = 2, kernel_output_feature_dimension = "
      "3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, "
      "output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, "
      "feature_group_count = 1 : i64}";
  CHECK(ruleOf("stablehlo.convolution", convText(generic)) ==
        ruleOf("stablehlo.convolution", convText(kPrettyConv)));
}

TEST_CASE("registry: concatenate of slices permutes; conservative drops the "
          "concat dim") {
  const char *text = R"(
func.func @f(%arg0: tensor<4x40x256xf32>, %arg1: tensor<4x60x256xf32>) -> tensor<4x80x256xf32> {
  %0 = stablehlo.slice %arg0 [0:4, 0:32, 0:256] : (tensor<4x40x256xf32>) -> tensor<4x32x256xf32>
  %1 = stablehlo.slice %arg1 [0:4, 0:48, 0:256] : (tensor<4x60x256xf32>) -> tensor<4x48x256xf32>
  %2 = stablehlo.concatenate %0, %1, dim = 1 : (tensor<4x32x256xf32>, tensor<4x48x256xf32>) -> tensor<4x80x256xf32>
  return %2 : tensor<4x80x256xf32>
})";
  CHECK(ruleOf("stablehlo.concatenate", text) ==
        "#sdy.op_sharding_rule<([i, j, k], [i, j, k])->([i, j, k]) {i=4, "
        "j=80, k=256} permutation={j}>");
  CHECK(ruleOf("stablehlo.concatenate", text, true) ==
        "#sdy.op_sharding_rule<([i, k, j], [i, l, j])->([i, m, j]) {i=4, "
        "j=256, k=1, l=1, m=1}>");
}

TEST_CASE("registry: a rule already on the op wins") {
  const char *text = R"(
func.func @f(%arg0: tensor<4x2xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.custom_call @foo(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j, i]) {i=4, j=2}, custom>} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
})";
  PassRun run = populate(text);
  CHECK(ruleOnLine(run.printed, "stablehlo.custom_call") ==
        "#sdy.op_sharding_rule<([i, j])->([j, i]) {i=4, j=2}, custom>");
  CHECK(run.diags.empty());
}

TEST_CASE("registry: unknown custom calls and ops are warned about once") {
  const char *text = R"(
func.func @f(%arg0: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %0 = stablehlo.custom_call @unknown_a(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>
  %1 = stablehlo.custom_call @unknown_b(%0) : (tensor<8x2xf32>) -> tensor<8x2xf32>
  %2 = "stablehlo.mystery"(%1) : (tensor<8x2xf32>) -> tensor<8x2xf32>
  %3 = "stablehlo.mystery2"(%2) : (tensor<8x2xf32>) -> tensor<8x2xf32>
  %4 = stablehlo.iota dim = 0 : tensor<8x2xf32>
  return %3 : tensor<8x2xf32>
})";
  PassRun run = populate(text);
  REQUIRE(run.diags.size() == 2);
  CHECK(run.diags[0].severity == Severity::Warning);
  CHECK(run.diags[0].message ==
        "custom call @unknown_a is unknown to SDY sharding rule registry");
  CHECK(run.diags[0].loc.line == 3);
  CHECK(run.diags[1].message ==
        "op 'stablehlo.mystery' is unknown to SDY sharding rule registry");
  CHECK(ruleOnLine(run.printed, "stablehlo.custom_call @unknown_a") ==
        "<none>");
  CHECK(ruleOnLine(run.printed, "stablehlo.iota") == "<none>");
}

TEST_CASE("stablehlo attrs: dimension-number fields and convolution layouts") {
  using namespace shardlab::rules;
  std::optional<DimNumberFields> fields = parseDimNumberFields(
      "#stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [], "
      "index_vector_dim = 2>");
  REQUIRE(fields);
  CHECK(fields->at("offset_dims") == std::vector<int64_t>{2, 3});
  CHECK(fields->at("collapsed_slice_dims").empty());
  CHECK(fields->at("index_vector_dim") == std::vector<int64_t>{2});
  CHECK_FALSE(parseDimNumberFields("#stablehlo.gather<offset_dims = [2,>"));
  CHECK_FALSE(parseDimNumberFields("#stablehlo.gather<offset_dims [2]>"));

  std::optional<ConvDims> conv =
      parseConvDims("[f, 1, b, 0]x[o, i, 1, 0]->[0, 1, b, f]");
  REQUIRE(conv);
  CHECK(conv->input_batch == 2);
  CHECK(conv->input_feature == 0);
  CHECK(conv->input_spatial == std::vector<int64_t>{3, 1});
  CHECK(conv->kernel_input_feature == 1);
  CHECK(conv->kernel_output_feature == 0);
  CHECK(conv->kernel_spatial == std::vector<int64_t>{3, 2});
  CHECK(conv->output_spatial == std::vector<int64_t>{0, 1});
  CHECK_FALSE(parseConvDims("[b, 0, 0, f]x[0, 1, i, o]->[b, 0, 1, f]"));
  CHECK_FALSE(parseConvDims("[b, 0, f]x[0, 1, i, o]->[b, 0, 1, f]"));
}
