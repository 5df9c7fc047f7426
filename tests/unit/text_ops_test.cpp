// The custom syntaxes of the StableHLO and CHLO ops JAX exports: each is read
// and printed back exactly as StableHLO prints it, and its generic form reads
// back to the same op.
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

struct Printed {
  std::string pretty, generic, error;
};

Printed print(const std::string &text) {
  Printed out;
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  if (!module) {
    for (const Diagnostic &diag : diags.diagnostics())
      out.error += std::to_string(diag.loc.line) + ":" +
                   std::to_string(diag.loc.col) + ": " + diag.message + "\n";
    return out;
  }
  out.pretty = printModule(*module);
  PrintOptions generic;
  generic.generic = true;
  out.generic = printModule(*module, generic);
  return out;
}

/// `body` (ops of a function of the given signature) prints back as
/// written, its generic form reads back to the same module, and both forms
/// are fixed points.
void checkOps(const std::string &args, const std::string &body) {
  const std::string text = "module {\n  func.func @f(" + args + ") {\n" + body +
                           "    return\n  }\n}\n";
  Printed first = print(text);
  REQUIRE_MESSAGE(first.error.empty(), first.error);
  CHECK(first.pretty == text);
  Printed from_generic = print(first.generic);
  REQUIRE_MESSAGE(from_generic.error.empty(), from_generic.error);
  CHECK(from_generic.pretty == text);
  CHECK(from_generic.generic == first.generic);
}

} // namespace

TEST_CASE("StableHLO ops with a syntax of their own") {
  checkOps(
      "%arg0: tensor<3x4xf32>, %arg1: tensor<3x4xf32>",
      "    %0 = stablehlo.complex %arg0, %arg1 : tensor<3x4xcomplex<f32>>\n"
      "    %1 = stablehlo.reduce_precision %arg0, format = e5m10 : "
      "tensor<3x4xf32>\n"
      "    %2 = stablehlo.tuple %arg0, %arg1 : tuple<tensor<3x4xf32>, "
      "tensor<3x4xf32>>\n"
      "    %3 = stablehlo.get_tuple_element %2[1] : (tuple<tensor<3x4xf32>, "
      "tensor<3x4xf32>>) -> tensor<3x4xf32>\n"
      "    %4 = stablehlo.broadcast %arg0, sizes = [2] : (tensor<3x4xf32>) -> "
      "tensor<2x3x4xf32>\n"
      "    %5 = stablehlo.tan %arg0 : tensor<3x4xf32>\n");
}

TEST_CASE("quantized types and uniform_quantize") {
  checkOps("%arg0: tensor<3x4xf32>",
           "    %0 = stablehlo.uniform_quantize %arg0 : (tensor<3x4xf32>) -> "
           "tensor<3x4x!quant.uniform<i8:f32, 0.0039215482917486456:-128>>\n"
           "    %1 = stablehlo.uniform_quantize %0 : "
           "tensor<3x4x!quant.uniform<i8:f32, 0.0039215482917486456:-128>>\n"
           "    %2 = stablehlo.uniform_dequantize %1 : "
           "(tensor<3x4x!quant.uniform<i8:f32, 0.0039215482917486456:-128>>) "
           "-> tensor<3x4xf32>\n");
}

TEST_CASE("dynamic shape ops parse, print and re-read") {
  checkOps(
      "%arg0: tensor<?x4xf32>, %arg1: tensor<3xi32>",
      "    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : "
      "(tensor<?x4xf32>) -> tensor<i32>\n"
      "    %1 = stablehlo.dynamic_iota %arg1, dim = 0 : (tensor<3xi32>) -> "
      "tensor<?x2x2xi32>\n"
      "    %2 = stablehlo.dynamic_reshape %arg0, %arg1 : (tensor<?x4xf32>, "
      "tensor<3xi32>) -> tensor<?x2x2xf32>\n"
      "    %3 = stablehlo.dynamic_broadcast_in_dim %arg0, %arg1, dims = [1, "
      "2] : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<?x?x4xf32>\n");
}

TEST_CASE("CHLO unary, binary and top_k ops") {
  checkOps("%arg0: tensor<5x3xf32>, %arg1: tensor<5x3xf32>",
           "    %0 = chlo.tan %arg0 : tensor<5x3xf32> -> tensor<5x3xf32>\n"
           "    %1 = chlo.next_after %0, %arg1 : tensor<5x3xf32>, "
           "tensor<5x3xf32> -> tensor<5x3xf32>\n"
           "    %values, %indices = chlo.top_k(%1, k = 2) : tensor<5x3xf32> "
           "-> (tensor<5x2xf32>, tensor<5x2xi32>)\n"
           "    %2 = chlo.is_inf %arg0 : tensor<5x3xf32> -> tensor<5x3xi1>\n");
}

TEST_CASE("symbol names that are not identifiers are quoted") {
  const std::string text = "module {\n"
                           "  func.func private @\"<lambda>\"() {\n"
                           "    return\n  }\n"
                           "  func.func @f() {\n"
                           "    call @\"<lambda>\"() : () -> ()\n"
                           "    return\n  }\n}\n";
  CHECK(print(text).pretty == text);
}

TEST_CASE("a bad reduce_precision format names what was expected") {
  Printed out = print("func.func @f(%a: tensor<2xf32>) {\n"
                      "  %0 = stablehlo.reduce_precision %a, format = f5 : "
                      "tensor<2xf32>\n  return\n}\n");
  CHECK(out.error.find("2:48: expected a format 'e<exponent bits>m<mantissa "
                       "bits>'") != std::string::npos);
}
