// The custom syntaxes of the StableHLO and CHLO ops JAX exports: each is read
// and printed back exactly as StableHLO prints it, and its generic form reads
// back to the same op.
#include "shardlab/text/text.h"
#include "verify/verifier.h"

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

TEST_CASE("the generic form of a module, sdy collectives and manual axes") {
  const std::string text =
      "module @m attributes {mhlo.num_partitions = 4 : i32} {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
      "    %0 = sdy.all_gather [{\"a\"}, {}] %arg0 out_sharding=<@mesh, [{}, "
      "{}]> : tensor<8x8xf32>\n"
      "    %1 = sdy.all_reduce {\"b\"} %0 out_sharding=<@mesh, [{}, {}]> : "
      "tensor<8x8xf32>\n"
      "    %2 = sdy.all_to_all [{\"a\"}: 0->1] %1 out_sharding=<@mesh, [{}, "
      "{\"a\"}]> : tensor<8x8xf32>\n"
      "    %3 = sdy.manual_computation(%2) in_shardings=[<@mesh, [{\"a\"}, "
      "{}]>] out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} "
      "(%arg1: tensor<4x8xf32>) {\n"
      "      sdy.return %arg1 : tensor<4x8xf32>\n"
      "    } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "    return %3 : tensor<8x8xf32>\n  }\n}\n";
  Printed first = print(text);
  REQUIRE_MESSAGE(first.error.empty(), first.error);
  CHECK(first.pretty == text);
  CHECK(first.generic.rfind("\"builtin.module\"() <{sym_name = \"m\"}> ({\n",
                            0) == 0);
  CHECK(first.generic.find("}) {mhlo.num_partitions = 4 : i32} : () -> ()\n") !=
        std::string::npos);
  CHECK(first.generic.find("gathering_axes = "
                           "#sdy<list_of_axis_ref_lists[{\"a\"}, {}]>") !=
        std::string::npos);
  CHECK(first.generic.find("reduction_axes = #sdy<axis_ref_list{\"b\"}>") !=
        std::string::npos);
  CHECK(first.generic.find(
            "params = #sdy<all_to_all_param_list[{\"a\"}: 0->1]>") !=
        std::string::npos);
  CHECK(first.generic.find("manual_axes = #sdy<manual_axes{\"a\"}>") !=
        std::string::npos);
  Printed again = print(first.generic);
  REQUIRE_MESSAGE(again.error.empty(), again.error);
  CHECK(again.pretty == text);
  CHECK(again.generic == first.generic);
}

// As sdy_opt prints them (-mlir-print-op-generic on the pretty text below):
// value numbers unique across the module, taken region by region from the
// last function up; Shardy's enums as i32 numbers (a sum printed though
// the custom form leaves it out); a custom call's arguments as properties.
TEST_CASE("the generic form numbers, enums and properties as sdy_opt prints "
          "them") {
  const std::string text =
      "sdy.mesh @mesh = <[\"x\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @inner(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  %1 = sdy.propagation_barrier %0 allowed_direction=BACKWARD : "
      "tensor<8xf32>\n"
      "  %2 = stablehlo.custom_call @MoveToHost(%1) {backend_config = \"\", "
      "has_side_effect = true} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %2 : tensor<8xf32>\n"
      "}\n"
      "func.func private @inner(%arg0: tensor<8xf32> {sdy.sharding = "
      "#sdy.sharding<@mesh, [{}], unreduced={\"x\"}>}) -> tensor<8xf32> {\n"
      "  %0 = sdy.all_reduce {\"x\"} %arg0 out_sharding=<@mesh, [{}]> : "
      "tensor<8xf32>\n"
      "  %1 = sdy.all_reduce max {} %0 out_sharding=<@mesh, [{}]> : "
      "tensor<8xf32>\n"
      "  return %1 : tensor<8xf32>\n"
      "}\n";
  Printed first = print(text);
  REQUIRE_MESSAGE(first.error.empty(), first.error);
  const char *expected[] = {
      "  ^bb0(%arg1: tensor<8xf32>):\n"
      "    %2 = \"func.call\"(%arg1) <{callee = @inner}>",
      "%3 = \"sdy.propagation_barrier\"(%2) <{allowed_direction = 2 : i32}>",
      "%4 = \"stablehlo.custom_call\"(%3) <{backend_config = \"\", "
      "call_target_name = \"MoveToHost\", has_side_effect = true}> : "
      "(tensor<8xf32>) -> tensor<8xf32>",
      "  ^bb0(%arg0: tensor<8xf32>):\n"
      "    %0 = \"sdy.all_reduce\"(%arg0) <{out_sharding = "
      "#sdy.sharding<@mesh, [{}]>, reduction_axes = "
      "#sdy<axis_ref_list{\"x\"}>, "
      "reduction_op = 0 : i32}>",
      "reduction_op = 1 : i32}>"};
  for (const char *line : expected) {
    CAPTURE(line);
    CHECK(first.generic.find(line) != std::string::npos);
  }
  // Read back: the numbers are names again, a sum is no attribute at all
  // (the pretty form is in an explicit module now, one indent deeper).
  Printed again = print(first.generic);
  REQUIRE_MESSAGE(again.error.empty(), again.error);
  CHECK(again.generic == first.generic);
  const char *pretty[] = {
      "sdy.propagation_barrier %0 allowed_direction=BACKWARD : tensor<8xf32>",
      "%0 = sdy.all_reduce {\"x\"} %arg0 out_sharding=<@mesh, [{}]>",
      "%1 = sdy.all_reduce max {} %0 out_sharding=<@mesh, [{}]>",
      "stablehlo.custom_call @MoveToHost(%1) {backend_config = \"\", "
      "has_side_effect = true}"};
  for (const char *line : pretty) {
    CAPTURE(line);
    CHECK(first.pretty.find(line) != std::string::npos);
    CHECK(again.pretty.find(line) != std::string::npos);
  }
  // A number past the enum is an error that names it.
  std::string bad = first.generic;
  bad.replace(bad.find("allowed_direction = 2"), 21, "allowed_direction = 7");
  Printed wrong = print(bad);
  CHECK(wrong.error.find("'sdy.propagation_barrier' op property "
                         "'allowed_direction' is 7, not one of 0 to 3") !=
        std::string::npos);
}

TEST_CASE("ops of other dialects in the generic form are kept as written") {
  const std::string text =
      "module {\n"
      "  \"llvm.module_flags\"() <{flags = [#llvm.mlir.module_flag<error, "
      "\"x\", 1 : i32>]}> : () -> ()\n"
      "  func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %0 = \"mydialect.foo\"(%arg0) {k = 1 : i64} : (tensor<4xf32>) -> "
      "tensor<4xf32>\n"
      "    return %0 : tensor<4xf32>\n  }\n}\n";
  Printed out = print(text);
  REQUIRE_MESSAGE(out.error.empty(), out.error);
  CHECK(out.pretty == text);
  CHECK(print(out.generic).pretty == text);
}

TEST_CASE("a constant whose value has no type is an error (fuzz finding)") {
  Printed out = print("func.func @f() -> tensor<i32> {\n"
                      "  %c = stablehlo.constant foo<i32>\n"
                      "  return %c : tensor<i32>\n}\n");
  CHECK(out.error.find("2:27: expected a typed constant value") !=
        std::string::npos);
}

TEST_CASE("a generic func.func without function_type is a diagnostic") {
  // Found by fuzz_parse: the custom form read a missing attribute.
  DiagnosticEngine diags;
  auto module = parseModule("\"func.func\"() <{sym_name = \"f\"}> ({\n"
                            "}) : () -> ()\n",
                            diags);
  REQUIRE(module);
  CHECK_FALSE(verifyModule(*module, diags));
  REQUIRE_FALSE(diags.diagnostics().empty());
  CHECK(diags.diagnostics().back().message.find(
            "requires attribute 'function_type'") != std::string::npos);
}

TEST_CASE("huge integer widths and element counts are diagnostics (fuzz)") {
  Printed out = print("func.func @f(%a: tensor<9223372036854775807x4xf32>) {\n"
                      "  return\n}\n");
  CHECK(out.error.find("1:45: tensor has more elements than fit in 64 bits") !=
        std::string::npos);
  // An integer type wider than MLIR's widest parses as an unknown width.
  Printed wide = print("func.func @f(%a: tensor<2xi1111111111111111111>) {\n"
                       "  return\n}\n");
  CHECK(wide.error.empty());
}

TEST_CASE("a function body without a terminator is a diagnostic (fuzz)") {
  DiagnosticEngine diags;
  auto module = parseModule("func.func @f() -> tensor<i32> {\n"
                            "  %c = stablehlo.constant dense<0> : tensor<i32>\n"
                            "}\n",
                            diags);
  REQUIRE(module);
  CHECK_FALSE(verifyModule(*module, diags));
  REQUIRE_FALSE(diags.diagnostics().empty());
  CHECK(diags.diagnostics().back().message.find(
            "block with no terminator, has 'stablehlo.constant'") !=
        std::string::npos);
}

TEST_CASE("an unknown bare type and a public declaration are diagnostics") {
  // Found by fuzz_pipeline: `-> C` read as a type, then a bodiless public
  // function reached the passes.
  Printed out = print("func.func private @main() ->C\n");
  CHECK(out.error.find("1:29: expected non-function type, got 'C'") !=
        std::string::npos);
  DiagnosticEngine diags;
  auto module = parseModule("func.func @main() -> f32\n", diags);
  REQUIRE(module);
  CHECK_FALSE(verifyModule(*module, diags));
  CHECK(diags.diagnostics().back().message.find(
            "symbol declaration cannot have public visibility") !=
        std::string::npos);
}

TEST_CASE("a generic slice whose attributes do not fit the custom form prints "
          "generically") {
  // Found by fuzz_parse: limit_indices was not an array, the custom printer
  // indexed past it.
  Printed out =
      print("func.func @f(%a: tensor<2xi32>) -> tensor<1xi32> {\n"
            "  %0 = \"stablehlo.slice\"(%a) {limit_indices = 1 : i64, "
            "start_indices = array<i64: 0>, strides = array<i64: 1>} "
            ": (tensor<2xi32>) -> tensor<1xi32>\n"
            "  return %0 : tensor<1xi32>\n}\n");
  REQUIRE_MESSAGE(out.error.empty(), out.error);
  CHECK(out.pretty.find("\"stablehlo.slice\"(%arg0)") != std::string::npos);
}

TEST_CASE("sdy ops whose passes read an attribute require it (fuzz finding)") {
  // A generic sdy.sharding_group without group_id reached the sharding-group
  // import, which read the missing attribute.
  for (const char *op :
       {"\"sdy.sharding_group\"(%arg0) : (tensor<8xf32>) -> ()",
        "%0 = \"sdy.sharding_constraint\"(%arg0) : (tensor<8xf32>) -> "
        "tensor<8xf32>",
        "%0 = \"sdy.reshard\"(%arg0) : (tensor<8xf32>) -> tensor<8xf32>",
        "%0 = \"sdy.propagation_barrier\"(%arg0) : (tensor<8xf32>) -> "
        "tensor<8xf32>"}) {
    DiagnosticEngine diags;
    auto module = parseModule(
        std::string(
            "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  ") +
            op + "\n  return %arg0 : tensor<8xf32>\n}\n",
        diags);
    REQUIRE(module);
    CHECK_FALSE(verifyModule(*module, diags));
    REQUIRE_FALSE(diags.diagnostics().empty());
    CHECK_MESSAGE(diags.diagnostics().back().message.find(
                      "requires attribute") != std::string::npos,
                  op);
  }
}
