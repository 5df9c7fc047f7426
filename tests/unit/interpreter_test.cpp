// The interpreter against answers worked by hand from the StableHLO
// specification: rounding to the element type, integer wrap-around,
// division by zero, total-order comparison, dot_general, reduce, scatter
// with repeated indices, gather, and checks that fail when they should;
// one-op reducers folded to the bits of their regions, and the storage
// width of every element type.
#include "shardlab/interpreter/interpreter.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace shardlab;

namespace {

interpreter::RunResult runText(const std::string &body,
                               const std::string &result_types) {
  const std::string text =
      "func.func @main() -> (" + result_types + ") {\n" + body + "\n}\n";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  // The module must outlive the result's types: keep it for the test.
  static std::vector<std::unique_ptr<Module>> keep;
  keep.push_back(std::move(module));
  return interpreter::run(*keep.back());
}

} // namespace

TEST_CASE("Interpreter: floats round to their type, integers wrap") {
  auto r = runText(R"(
  %a = stablehlo.constant dense<1.000000e-01> : tensor<f32>
  %b = stablehlo.convert %a : (tensor<f32>) -> tensor<f16>
  %c = stablehlo.constant dense<127> : tensor<i8>
  %one = stablehlo.constant dense<1> : tensor<i8>
  %d = stablehlo.add %c, %one : tensor<i8>
  %zero = stablehlo.constant dense<0> : tensor<i8>
  %e = stablehlo.divide %c, %zero : tensor<i8>
  %f = stablehlo.remainder %c, %zero : tensor<i8>
  return %b, %d, %e, %f : tensor<f16>, tensor<i8>, tensor<i8>, tensor<i8>)",
                   "tensor<f16>, tensor<i8>, tensor<i8>, tensor<i8>");
  REQUIRE(r.ok);
  CHECK(r.results[0].bits(0) == 0x2E66); // the f16 nearest 0.1
  CHECK(r.results[0].real(0) == 0.0999755859375);
  CHECK(r.results[1].integer(0) == -128);
  CHECK(r.results[2].integer(0) == -1);  // x / 0: all ones (XLA)
  CHECK(r.results[3].integer(0) == 127); // x % 0: x
}

TEST_CASE("Interpreter: TOTALORDER puts -0 before +0 and NaN last") {
  auto r = runText(R"(
  %a = stablehlo.constant dense<[-0.000000e+00, 0x7FC00000, 1.000000e+00]> : tensor<3xf32>
  %b = stablehlo.constant dense<[0.000000e+00, 1.000000e+00, 0x7FC00000]> : tensor<3xf32>
  %t = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %f = stablehlo.compare LT, %a, %b, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %t, %f : tensor<3xi1>, tensor<3xi1>)",
                   "tensor<3xi1>, tensor<3xi1>");
  REQUIRE(r.ok);
  CHECK(r.results[0].integer(0) == 1); // -0 < +0
  CHECK(r.results[0].integer(1) == 0); // NaN is not below 1
  CHECK(r.results[0].integer(2) == 1); // 1 < NaN
  CHECK(r.results[1].integer(0) == 0); // FLOAT: -0 == +0
  CHECK(r.results[1].integer(2) == 0); // FLOAT: nothing is below NaN
}

TEST_CASE("Interpreter: dot_general, reduce, scatter with repeated indices, "
          "gather") {
  auto r =
      runText(R"(
  %a = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %s = stablehlo.reduce(%d init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x2xi32>, tensor<i32>) -> tensor<2xi32>
  %base = stablehlo.constant dense<[10, 20, 30]> : tensor<3xi32>
  %idx = stablehlo.constant dense<[[2], [0], [2]]> : tensor<3x1xi32>
  %upd = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %sc = "stablehlo.scatter"(%base, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %sum = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %sum : tensor<i32>
  }) : (tensor<3xi32>, tensor<3x1xi32>, tensor<3xi32>) -> tensor<3xi32>
  %gi = stablehlo.constant dense<[[1], [5]]> : tensor<2x1xi32>
  %g = "stablehlo.gather"(%base, %gi) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1>}> : (tensor<3xi32>, tensor<2x1xi32>) -> tensor<2xi32>
  return %d, %s, %sc, %g : tensor<2x2xi32>, tensor<2xi32>, tensor<3xi32>, tensor<2xi32>)",
              "tensor<2x2xi32>, tensor<2xi32>, tensor<3xi32>, tensor<2xi32>");
  REQUIRE(r.ok);
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]
  CHECK(r.results[0].integer(0) == 19);
  CHECK(r.results[0].integer(3) == 50);
  CHECK(r.results[1].integer(0) == 41);
  CHECK(r.results[1].integer(1) == 93);
  // Index 2 gets 1 and 3, index 0 gets 2.
  CHECK(r.results[2].integer(0) == 12);
  CHECK(r.results[2].integer(1) == 20);
  CHECK(r.results[2].integer(2) == 34);
  // Start 5 is clamped to 2 (the last valid start for a 1-wide slice).
  CHECK(r.results[3].integer(0) == 20);
  CHECK(r.results[3].integer(1) == 30);
}

TEST_CASE("Interpreter: checks pass and fail, and unknown ops say so") {
  auto pass = runText(R"(
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<[1.0, 2.00000024]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%a, %b) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  stablehlo.custom_call @check.expect_eq(%a, %a) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %a : tensor<2xf32>)",
                      "tensor<2xf32>");
  REQUIRE(pass.ok);
  REQUIRE(pass.checks.size() == 2);
  CHECK(pass.checks[0].passed); // 1 ULP apart: close
  CHECK(pass.checks[1].passed);
  CHECK(pass.allChecksPassed());
  auto fail = runText(R"(
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<[1.0, 2.5]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%a, %b) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %a : tensor<2xf32>)",
                      "tensor<2xf32>");
  REQUIRE(fail.ok);
  REQUIRE(fail.checks.size() == 1);
  CHECK_FALSE(fail.checks[0].passed);
  CHECK(fail.checks[0].detail.find("element 1") == 0);
  CHECK_FALSE(fail.allChecksPassed());
  auto unknown = runText(R"(
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.custom_call @foo(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %b : tensor<2xf32>)",
                         "tensor<2xf32>");
  CHECK_FALSE(unknown.ok);
  CHECK(unknown.error.find("custom_call @foo is not run by the interpreter") !=
        std::string::npos);
}

TEST_CASE("Interpreter: a @Sharding annotation is its operand; a shape-"
          "changing one is not run") {
  // A GSPMD module that was not imported keeps XLA's annotation, an
  // identity; @SPMDFullToShardShape's result depends on the device's shard,
  // which the annotation alone does not say.
  auto r = runText(R"(
  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<2xf32>) -> tensor<2xf32>
  return %b : tensor<2xf32>)",
                   "tensor<2xf32>");
  REQUIRE(r.ok);
  CHECK(r.results[0].real(0) == 1.5);
  CHECK(r.results[0].real(1) == -2.0);
  auto shard = runText(R"(
  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = stablehlo.custom_call @SPMDFullToShardShape(%a) {mhlo.sharding = "{manual}"} : (tensor<2xf32>) -> tensor<1xf32>
  return %b : tensor<1xf32>)",
                       "tensor<1xf32>");
  CHECK_FALSE(shard.ok);
}

TEST_CASE("Interpreter: uniform quantization, and ops on quantized tensors "
          "through their dequantized values") {
  // scale 0.5, zero point -1, storage i8: 1.0 -> 2 - 1 = 1; 100.0 -> 199
  // clamped to 127; NaN -> 0 (as XLA converts a NaN to an integer).
  auto r = runText(R"(
  %x = stablehlo.constant dense<[1.0, 100.0, 0x7FC00000, -0.25]> : tensor<4xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>
  %s = stablehlo.add %q, %q : (tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>, tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>
  %d = stablehlo.uniform_dequantize %s : (tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<4xf32>
  return %q, %d : tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>, tensor<4xf32>)",
                   "tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>, "
                   "tensor<4xf32>");
  REQUIRE(r.ok);
  CHECK(r.results[0].integer(0) == 1);
  CHECK(r.results[0].integer(1) == 127);
  CHECK(r.results[0].integer(2) == 0);
  CHECK(r.results[0].integer(3) == -1); // -0.5 rounds to even: 0, then -1
  // add: dequantized 1.0 + 1.0 = 2.0 -> quantized 3 -> 2.0;
  // 64.0 + 64.0 = 128.0 -> 255 clamped to 127 -> 64.0.
  CHECK(r.results[1].real(0) == 2.0);
  CHECK(r.results[1].real(1) == 64.0);
  CHECK(r.results[1].real(2) == 1.0); // NaN's 0 dequantizes to 0.5; 0.5 + 0.5
  CHECK(r.results[1].real(3) == 0.0);
}

TEST_CASE("Interpreter: an op whose types do not agree is named, not read "
          "out of bounds") {
  auto reshape = runText(R"(
  %a = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
  %b = stablehlo.reshape %a : (tensor<4xf32>) -> tensor<3xf32>
  return %b : tensor<3xf32>)",
                         "tensor<3xf32>");
  CHECK_FALSE(reshape.ok);
  CHECK(reshape.error.find("reshape of 4 elements to 3") != std::string::npos);
  auto dot = runText(R"(
  %a = stablehlo.constant dense<1.000000e+00> : tensor<2x3xf32>
  %b = stablehlo.constant dense<1.000000e+00> : tensor<4x2xf32>
  %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  return %c : tensor<2x2xf32>)",
                     "tensor<2x2xf32>");
  CHECK_FALSE(dot.ok);
  CHECK(dot.error.find("do not agree") != std::string::npos);
  // An update larger than its operand (a per-device program that wrote a
  // global update into a shard did this) made the clamp's bounds cross.
  auto update = runText(R"(
  %a = stablehlo.constant dense<1.000000e+00> : tensor<1x3xf32>
  %u = stablehlo.constant dense<2.000000e+00> : tensor<3x1xf32>
  %i = stablehlo.constant dense<0> : tensor<i64>
  %d = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<1x3xf32>, tensor<3x1xf32>, tensor<i64>, tensor<i64>) -> tensor<1x3xf32>
  return %d : tensor<1x3xf32>)",
                        "tensor<1x3xf32>");
  CHECK_FALSE(update.ok);
  CHECK(update.error.find("larger than the operand (1) in dimension 0") !=
        std::string::npos);
  auto slice = runText(R"(
  %a = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>
  %i = stablehlo.constant dense<0> : tensor<i64>
  %s = stablehlo.dynamic_slice %a, %i, sizes = [3] : (tensor<2xf32>, tensor<i64>) -> tensor<3xf32>
  return %s : tensor<3xf32>)",
                       "tensor<3xf32>");
  CHECK_FALSE(slice.ok);
  CHECK(slice.error.find("larger than the operand (2)") != std::string::npos);
}

TEST_CASE("Interpreter: triangular_solve by substitution, each side and "
          "transpose") {
  // Lower a = [[2, 0], [1, 1]] (the 9 above the diagonal is ignored):
  // a x = b with b = [[2], [3]] gives x = [[1], [2]]; x a = [[4, 1]]
  // gives x = [[1.5, 1]]; a^T x = [[4], [1]] (a^T upper) gives
  // x = [[1.5], [1]]; with a unit diagonal, a x = [[2], [3]] gives [[2], [1]].
  auto r = runText(R"(
  %a = stablehlo.constant dense<[[2.0, 9.0], [1.0, 1.0]]> : tensor<2x2xf32>
  %b = stablehlo.constant dense<[[2.0], [3.0]]> : tensor<2x1xf32>
  %c = stablehlo.constant dense<[[4.0, 1.0]]> : tensor<1x2xf32>
  %d = stablehlo.constant dense<[[4.0], [1.0]]> : tensor<2x1xf32>
  %left = "stablehlo.triangular_solve"(%a, %b) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %right = "stablehlo.triangular_solve"(%a, %c) <{left_side = false, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %trans = "stablehlo.triangular_solve"(%a, %d) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose TRANSPOSE>, unit_diagonal = false}> : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %unit = "stablehlo.triangular_solve"(%a, %b) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = true}> : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  return %left, %right, %trans, %unit : tensor<2x1xf32>, tensor<1x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>)",
                   "tensor<2x1xf32>, tensor<1x2xf32>, tensor<2x1xf32>, "
                   "tensor<2x1xf32>");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.results[0].real(0) == 1.0);
  CHECK(r.results[0].real(1) == 2.0);
  CHECK(r.results[1].real(0) == 1.5);
  CHECK(r.results[1].real(1) == 1.0);
  CHECK(r.results[2].real(0) == 1.5);
  CHECK(r.results[2].real(1) == 1.0);
  CHECK(r.results[3].real(0) == 2.0);
  CHECK(r.results[3].real(1) == 1.0);
}

TEST_CASE("Interpreter: rng_bit_generator THREE_FRY is Threefry-2x32 with "
          "20 rounds") {
  // Random123's known answer for threefry2x32_20: key (0, 0), counter
  // (0, 0) -> (0x6b200159, 0x99ba4efe); the low word first. The counter
  // advances by the number of counters used.
  auto r = runText(R"(
  %s = stablehlo.constant dense<[0, 0]> : tensor<2xui64>
  %n, %bits = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>)
  %n2, %words = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui32>)
  %n3, %default = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>)
  return %n, %bits, %n2, %words, %default : tensor<2xui64>, tensor<ui64>, tensor<2xui64>, tensor<3xui32>, tensor<ui64>)",
                   "tensor<2xui64>, tensor<ui64>, tensor<2xui64>, "
                   "tensor<3xui32>, tensor<ui64>");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(uint64_t(r.results[1].integer(0)) == 0x99ba4efe6b200159ull);
  CHECK(r.results[0].integer(1) == 1);
  // 3 words from 2 counters: both low words, then the first high word.
  CHECK(uint64_t(r.results[3].integer(0)) == 0x6b200159ull);
  CHECK(uint64_t(r.results[3].integer(2)) == 0x99ba4efeull);
  CHECK(r.results[2].integer(1) == 2);
  // DEFAULT is this implementation's choice: THREE_FRY.
  CHECK(r.results[4] == r.results[1]);
}

TEST_CASE("Interpreter: bessel_i1e against mpmath") {
  // exp(-|x|) I1(x) from mpmath at 30 digits: the series below exp's
  // range, the asymptotic series above it.
  auto r = runText(R"(
  %x = stablehlo.constant dense<[1.0, -30.0, 700.0, 0.25, 0.0]> : tensor<5xf64>
  %y = chlo.bessel_i1e %x : tensor<5xf64> -> tensor<5xf64>
  return %y : tensor<5xf64>)",
                   "tensor<5xf64>");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.results[0].real(0) ==
        doctest::Approx(0.20791041534970844887).epsilon(1e-14));
  CHECK(r.results[0].real(1) ==
        doctest::Approx(-0.071916330598647554706).epsilon(1e-14));
  CHECK(r.results[0].real(2) ==
        doctest::Approx(0.015070519444716846949).epsilon(1e-14));
  CHECK(r.results[0].real(3) ==
        doctest::Approx(0.098112628697368246674).epsilon(1e-14));
  CHECK(r.results[0].real(4) == 0.0);
}

TEST_CASE("Interpreter: a complex product is XLA's, each part one fused "
          "multiply-add") {
  // (0.1 + 0.1i)(1.1 + 2.9i) in f32: fma(0.1, 1.1, -(0.1 x 2.9)) and
  // fma(0.1, 2.9, 0.1 x 1.1), each rounded once, not the four products
  // rounded and then summed (-0.18000000715 + 0.40000003576i).
  auto r = runText(R"(
  %a = stablehlo.constant dense<(1.000000e-01,1.000000e-01)> : tensor<complex<f32>>
  %b = stablehlo.constant dense<(1.100000e+00,2.900000e+00)> : tensor<complex<f32>>
  %c = stablehlo.multiply %a, %b : tensor<complex<f32>>
  return %c : tensor<complex<f32>>)",
                   "tensor<complex<f32>>");
  REQUIRE(r.ok);
  const float a = 0.1f, c = 1.1f, d = 2.9f;
  CHECK(float(r.results[0].real(0)) == std::fma(a, c, -(a * d)));
  CHECK(float(r.results[0].imag(0)) == std::fma(a, d, a * c));
  CHECK(float(r.results[0].real(0)) == -0.18000002205371857f);
  CHECK(float(r.results[0].imag(0)) == 0.4000000059604645f);
}

TEST_CASE("Interpreter: a budget of work stops the run before the op that "
          "passes it") {
  const std::string text = R"(
func.func @main() -> tensor<64x64xf32> {
  %a = stablehlo.constant dense<1.0> : tensor<64x64xf32>
  %b = stablehlo.add %a, %a : tensor<64x64xf32>
  %c = stablehlo.dot_general %b, %b, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
})";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  interpreter::RunOptions options;
  const interpreter::RunResult whole = interpreter::run(*module, options);
  REQUIRE(whole.ok);
  // The dot is 64 x 64 results of 64 multiply-adds each: most of the work.
  CHECK(whole.work > 64 * 64 * 64);
  CHECK(whole.work < 2 * 64 * 64 * 64);
  options.max_work = whole.work - 1;
  const interpreter::RunResult stopped = interpreter::run(*module, options);
  CHECK_FALSE(stopped.ok);
  CHECK(stopped.over_budget);
  CHECK(stopped.error.find("stablehlo.dot_general") != std::string::npos);
  CHECK(stopped.ops_run == 3); // the dot counted, not run
  options.max_work = whole.work;
  CHECK(interpreter::run(*module, options).ok);
}

namespace {

// `reduce` of `x` (one row per output element) with the reducer `body`
// (the block's arguments are %acc and %x).
std::string reduceOf(const std::string &x, const std::string &type,
                     const std::string &result, const std::string &init,
                     const std::string &body) {
  const std::string scalar = "tensor<" + type + ">";
  return "  %r = stablehlo.reduce(" + x + " init: " + init +
         ") across dimensions = [1] : (" + result + ", " + scalar +
         ") -> tensor<2x" + type + ">\n" + "   reducer(%acc: " + scalar +
         ", %x: " + scalar + ") {\n" + body + "\n  }\n";
}

} // namespace

TEST_CASE("Interpreter: a one-op reducer is folded without running its "
          "region, step by step to the same bits") {
  // Each case is run three ways: the body as JAX writes it (folded), with
  // its operands swapped (folded), and with an identity convert after the
  // op, which is not one op and so runs as a region for every element.
  struct Case {
    const char *type, *values, *init, *op;
    double expected0, expected1;
  };
  const Case cases[] = {
      // 2^24 + 1 rounds back to 2^24 at each step: the fold keeps rounding
      // to f32 after each element, it does not sum in double.
      {"f32", "[[1.6777216e+07, 1.0, 1.0], [1.0, 2.0, 3.0]]", "0.0", "add",
       16777216.0, 6.0},
      // bf16 keeps 8 significant bits: 1 + 2^-8 is a tie, to even: 1.
      {"bf16", "[[1.0, 3.906250e-03, 3.906250e-03], [1.0, 2.0, 4.0]]", "0.0",
       "add", 1.0, 7.0},
      {"i8", "[[100, 100, 100], [-128, -1, 1]]", "0", "add", 44.0, -128.0},
      {"f32", "[[1.0, 0x7FC00000, 2.0], [-3.0, -1.0, -2.0]]", "-1.0e+09",
       "maximum", NAN, -1.0},
      {"i32", "[[6, 3, 5], [14, 10, 11]]", "-1", "and", 0.0, 10.0}};
  for (const Case &c : cases) {
    const std::string what = std::string(c.op) + " of " + c.type;
    CAPTURE(what);
    const std::string scalar = std::string("tensor<") + c.type + ">";
    const std::string input = std::string("tensor<2x3x") + c.type + ">";
    const std::string result = std::string("tensor<2x") + c.type + ">";
    const std::string op = std::string("stablehlo.") + c.op;
    const std::string head = std::string("  %v = stablehlo.constant dense<") +
                             c.values + "> : " + input +
                             "\n  %z = stablehlo.constant dense<" + c.init +
                             "> : " + scalar + "\n";
    const std::string bodies[] = {
        "    %0 = " + op + " %acc, %x : " + scalar +
            "\n    stablehlo.return %0 : " + scalar,
        "    %0 = " + op + " %x, %acc : " + scalar +
            "\n    stablehlo.return %0 : " + scalar,
        "    %0 = " + op + " %acc, %x : " + scalar +
            "\n    %1 = " + "stablehlo.convert %0 : " + scalar +
            "\n    stablehlo.return %1 : " + scalar};
    std::vector<interpreter::RunResult> runs;
    for (const std::string &body : bodies)
      runs.push_back(runText(head + reduceOf("%v", c.type, input, "%z", body) +
                                 "  return %r : " + result,
                             result));
    for (const interpreter::RunResult &r : runs)
      REQUIRE(r.ok);
    CHECK(runs[0].ops_run == 3); // two constants and the reduce: no region
    CHECK(runs[1].ops_run == 3);
    CHECK(runs[2].ops_run == 3 + 6 * 2); // the region: two ops per element
    for (int64_t i = 0; i < 2; ++i) {    // modules apart: compare the bits
      CHECK(runs[0].results[0].bits(i) == runs[2].results[0].bits(i));
      CHECK(runs[1].results[0].bits(i) == runs[2].results[0].bits(i));
    }
    const interpreter::Tensor &folded = runs[0].results[0];
    if (std::isnan(c.expected0))
      CHECK(std::isnan(folded.real(0)));
    else
      CHECK(folded.real(0) == c.expected0);
    CHECK(folded.real(1) == c.expected1);
  }
}

TEST_CASE("Interpreter: reduce_window, scatter and all_reduce fold a one-op "
          "body to the bits of its region") {
  // Each body twice: one op (folded), and with an identity convert after
  // it (run as a region).
  const std::string one_op = R"(
    %0 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %0 : tensor<f32>)";
  const std::string region = R"(
    %0 = stablehlo.add %a, %b : tensor<f32>
    %1 = stablehlo.convert %0 : tensor<f32>
    stablehlo.return %1 : tensor<f32>)";
  SUBCASE("reduce_window: the init value stands for the padding") {
    for (const std::string &body : {one_op, region}) {
      const interpreter::RunResult r = runText(R"(
  %v = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %z = stablehlo.constant dense<10.0> : tensor<f32>
  %r = "stablehlo.reduce_window"(%v, %z) <{padding = dense<[[1, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):)" + body +
                                                   R"(
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>)",
                                               "tensor<4xf32>");
      REQUIRE(r.ok);
      // [pad, 1] is 10 + 10 + 1; then 10 + 1 + 2, 10 + 2 + 3, 10 + 3 + 4.
      CHECK(r.results[0].real(0) == 21.0);
      CHECK(r.results[0].real(1) == 13.0);
      CHECK(r.results[0].real(3) == 17.0);
      CHECK(r.ops_run == (body == one_op ? 3 : 3 + 4 * 2 * 2));
    }
  }
  SUBCASE("scatter: repeated indices added in update order") {
    for (const std::string &body : {one_op, region}) {
      const interpreter::RunResult r = runText(R"(
  %base = stablehlo.constant dense<[1.6777216e+07, 0.0]> : tensor<2xf32>
  %idx = stablehlo.constant dense<[[0], [1], [0]]> : tensor<3x1xi32>
  %upd = stablehlo.constant dense<[1.0, 5.0, 1.0]> : tensor<3xf32>
  %r = "stablehlo.scatter"(%base, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):)" + body +
                                                   R"(
  }) : (tensor<2xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>)",
                                               "tensor<2xf32>");
      REQUIRE(r.ok);
      CHECK(r.results[0].real(0) == 16777216.0); // each + 1 rounds away
      CHECK(r.results[0].real(1) == 5.0);
      CHECK(r.ops_run == (body == one_op ? 4 : 4 + 3 * 2));
    }
  }
  SUBCASE("all_reduce: members in group order, rounded at each step") {
    for (const std::string &body : {one_op, region}) {
      DiagnosticEngine diags;
      auto module = parseModule(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %s = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):)" +
                                    body + R"(
  }) : (tensor<2xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
})",
                                diags);
      REQUIRE(module);
      TypeContext &types = module->ctx().types;
      const Type f32x2 = types.rankedTensor({2}, types.element("f32"));
      std::vector<std::vector<interpreter::Tensor>> args;
      for (double first : {16777216.0, 1.0, 1.0}) {
        interpreter::Tensor t = interpreter::Tensor::zeros(f32x2);
        t.setReal(0, first);
        t.setReal(1, first == 1.0 ? 2.0 : 3.0);
        args.push_back({t});
      }
      const interpreter::DevicesRunResult r =
          interpreter::runOnDevices(*module, args);
      REQUIRE(r.ok);
      for (const std::vector<interpreter::Tensor> &device : r.results) {
        CHECK(device[0].real(0) == 16777216.0); // each + 1 rounds away
        CHECK(device[0].real(1) == 7.0);
      }
      if (body == one_op)
        CHECK(r.ops_run == 1);
      else
        CHECK(r.ops_run > 1);
    }
  }
}

TEST_CASE("Interpreter: a tensor stores each part in its width rounded up to "
          "1, 2, 4 or 8 bytes, every bit kept") {
  DiagnosticEngine diags;
  auto module = parseModule("func.func @main() {\n  return\n}\n", diags);
  REQUIRE(module);
  TypeContext &types = module->ctx().types;
  struct Case {
    const char *element;
    size_t bytes; // for 3 elements
    uint64_t top; // the largest bits the element has
  };
  const Case cases[] = {{"i1", 3, 1},
                        {"ui4", 3, 0xF},
                        {"f8E4M3FN", 3, 0xFF},
                        {"bf16", 6, 0xFFFF},
                        {"f32", 12, 0xFFFFFFFF},
                        {"i48", 24, 0xFFFFFFFFFFFF},
                        {"i64", 24, ~uint64_t{0}},
                        {"complex<f32>", 24, 0xFFFFFFFF}};
  for (const Case &c : cases) {
    CAPTURE(std::string(c.element));
    const Type type = types.rankedTensor({3}, types.element(c.element));
    interpreter::Tensor t = interpreter::Tensor::zeros(type);
    CHECK(t.storageBytes() == c.bytes);
    t.setBits(1, ~uint64_t{0}, t.parts() - 1); // masked to the width
    CHECK(t.bits(1, t.parts() - 1) == c.top);
    CHECK(t.bits(0, 0) == 0); // the neighbours untouched
    CHECK(t.bits(2, 0) == 0);
  }
}

TEST_CASE("Interpreter: Shardy's markers keep their values in a global run; "
          "its reductions are not run") {
  // A module read before or during propagation holds edges, barriers,
  // sharding groups and named computations; in the global view each keeps
  // its operand's value (the named computation is its body called).
  const std::string text = R"(sdy.mesh @mesh = <["x"=2]>
func.func @main() -> (tensor<2xf32>, tensor<2xf32>) {
  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = sdy.propagation_barrier %a allowed_direction=BACKWARD : tensor<2xf32>
  sdy.sharding_group %b group_id=3 : tensor<2xf32>
  %c = sdy.named_computation<"twice">(%b) (%arg0: tensor<2xf32>) {
    %d = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    sdy.return %d : tensor<2xf32>
  } : (tensor<2xf32>) -> tensor<2xf32>
  %e = sdy.data_flow_edge %c : tensor<2xf32>
  %f = stablehlo.custom_call @MoveToDevice(%e) {backend_config = ""} : (tensor<2xf32>) -> tensor<2xf32>
  return %b, %f : tensor<2xf32>, tensor<2xf32>
}
)";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  const interpreter::RunResult r = interpreter::run(*module);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.results[0].real(0) == 1.5);
  CHECK(r.results[0].real(1) == -2.0);
  CHECK(r.results[1].real(0) == 3.0);
  CHECK(r.results[1].real(1) == -4.0);

  // An all_reduce's operand holds partial sums the global value does not
  // show: not run, and said so.
  const std::string reduce = R"(sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"x"}>}) -> tensor<2xf32> {
  %0 = sdy.all_reduce {"x"} %arg0 out_sharding=<@mesh, [{}]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
)";
  auto reducing = parseModule(reduce, diags);
  REQUIRE(reducing);
  const std::vector<interpreter::Tensor> inputs = {interpreter::Tensor::zeros(
      reducing->lookupSymbol("main")->region(0).front().argument(0)->type)};
  const interpreter::RunResult partial = interpreter::run(*reducing, inputs);
  CHECK_FALSE(partial.ok);
  CHECK(partial.error.find("sdy.all_reduce: not run by the interpreter") !=
        std::string::npos);
}
