// Parser and printer: round trips of every construct the printer knows,
// canonical spelling, SSA naming, and diagnostics for bad input.
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

std::string roundTrip(const std::string &text, std::string *errors = nullptr) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  if (!module) {
    if (errors)
      for (const Diagnostic &diag : diags.diagnostics())
        *errors += std::to_string(diag.loc.line) + ":" +
                   std::to_string(diag.loc.col) + ": " + diag.message + "\n";
    return "<parse error>";
  }
  return printModule(*module);
}

/// Parses and prints twice; the second print must equal the first.
void checkFixedPoint(const std::string &text) {
  std::string first = roundTrip(text);
  REQUIRE(first != "<parse error>");
  CHECK(roundTrip(first) == first);
}

std::string firstError(const std::string &text) {
  std::string errors;
  roundTrip(text, &errors);
  return errors.substr(0, errors.find('\n'));
}

} // namespace

TEST_CASE("meshes print canonically and drop iota device ids") {
  std::string out =
      roundTrip("sdy.mesh @m = <[\"a\"=2, \"b\"=2], device_ids=[0, 1, 2, 3]>\n"
                "sdy.mesh @p = <[\"a\"=2], device_ids=[1, 0]>\n"
                "sdy.mesh @max = <[], device_ids=[3]>\n");
  CHECK(out == "module {\n"
               "  sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
               "  sdy.mesh @p = <[\"a\"=2], device_ids=[1, 0]>\n"
               "  sdy.mesh @max = <[], device_ids=[3]>\n"
               "}\n");
}

TEST_CASE("shardings: open dims, priorities, sub-axes, replicated first") {
  std::string out = roundTrip(
      "sdy.mesh @m = <[\"a\"=4, \"b\"=2]>\n"
      "func.func @f(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, "
      "[{\"a\":(1)2, ?}p1, {?}], unreduced=max{\"b\"}, "
      "replicated={\"a\":(2)2}>}) -> tensor<8x8xf32> {\n"
      "  return %x : tensor<8x8xf32>\n}\n");
  CHECK(out.find("#sdy.sharding<@m, [{\"a\":(1)2, ?}p1, {?}], "
                 "replicated={\"a\":(2)2}, unreduced=max{\"b\"}>") !=
        std::string::npos);
}

TEST_CASE("SSA names follow MLIR: args, results, nested regions, %c/%cst") {
  std::string out = roundTrip(
      "func.func @f(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {\n"
      "  %k = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %f = stablehlo.constant dense<2.0> : tensor<f32>\n"
      "  %r:2 = stablehlo.while(%x = %a, %y = %i) : tensor<4xf32>, "
      "tensor<i32>\n"
      "   cond {\n"
      "    %c = stablehlo.compare LT, %y, %k : (tensor<i32>, tensor<i32>) -> "
      "tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %n = stablehlo.add %y, %k : tensor<i32>\n"
      "    stablehlo.return %x, %n : tensor<4xf32>, tensor<i32>\n"
      "  }\n"
      "  return %r#0 : tensor<4xf32>\n}\n");
  CHECK(out.find("%c = stablehlo.constant dense<1> : tensor<i32>") !=
        std::string::npos);
  CHECK(out.find("%cst = stablehlo.constant dense<2.000000e+00>") !=
        std::string::npos);
  CHECK(out.find("%0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = "
                 "%arg1)") != std::string::npos);
  CHECK(out.find("%1 = stablehlo.compare  LT, %iterArg_0, %c") !=
        std::string::npos);
  CHECK(out.find("return %0#0 : tensor<4xf32>") != std::string::npos);
  checkFixedPoint(out);
}

TEST_CASE("SSA name conflicts number from each isolated scope, past the "
          "printer's name storage chunks") {
  // 120 funcs of 60 constants: each func names %cst, %cst_0 .. %cst_58
  // afresh, and the names (~50 KB) outgrow one chunk of the printer's
  // name storage, whose earlier chunks must stay valid.
  std::string text;
  for (int f = 0; f < 120; ++f) {
    text += "func.func @f" + std::to_string(f) + "() -> tensor<f32> {\n";
    for (int c = 0; c < 60; ++c)
      text += "  %v" + std::to_string(c) +
              " = stablehlo.constant dense<1.0> : tensor<f32>\n";
    text += "  return %v59 : tensor<f32>\n}\n";
  }
  std::string out = roundTrip(text);
  REQUIRE(out != "<parse error>");
  size_t funcs = 0, at = 0;
  while ((at = out.find("func.func", at)) != std::string::npos) {
    ++funcs;
    size_t end = out.find("\n  }", at);
    std::string body = out.substr(at, end - at);
    CHECK(body.find("%cst = stablehlo.constant") != std::string::npos);
    CHECK(body.find("%cst_58 = stablehlo.constant") != std::string::npos);
    CHECK(body.find("%cst_59") == std::string::npos);
    CHECK(body.find("return %cst_58 : tensor<f32>") != std::string::npos);
    at = end;
  }
  CHECK(funcs == 120);
  checkFixedPoint(out);
}

TEST_CASE("stablehlo pretty forms round trip") {
  checkFixedPoint(
      "func.func @f(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> "
      "tensor<4xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
      "(tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<8x4xf32>) -> "
      "tensor<4x8xf32>\n"
      "  %2 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %3 = stablehlo.reduce(%1 init: %2) applies stablehlo.add across "
      "dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  %4 = stablehlo.slice %3 [0:4:2] : (tensor<4xf32>) -> tensor<2xf32>\n"
      "  %5 = stablehlo.concatenate %4, %4, dim = 0 : (tensor<2xf32>, "
      "tensor<2xf32>) -> tensor<4xf32>\n"
      "  return %5 : tensor<4xf32>\n}\n");
}

TEST_CASE("unknown ops and attributes are kept in generic form") {
  std::string text = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %0 = \"foo.bar\"(%a) <{p = 1 : i32}> {q = "
                     "#foo.thing<1, [2]>, r} : (tensor<4xf32>) -> "
                     "tensor<4xf32>\n"
                     "  return %0 : tensor<4xf32>\n}\n";
  std::string out = roundTrip(text);
  CHECK(out.find("\"foo.bar\"(%arg0) <{p = 1 : i32}> {q = #foo.thing<1, "
                 "[2]>, r} : (tensor<4xf32>) -> tensor<4xf32>") !=
        std::string::npos);
  checkFixedPoint(text);
}

TEST_CASE("dense literals and floats print as MLIR does") {
  std::string out =
      roundTrip("func.func @f() {\n"
                "  %0 = sdy.constant dense<[[1.0, 2.5], [3.0, 4.0]]> : "
                "tensor<2x2xf32>\n"
                "  %1 = sdy.constant dense<[7, 7]> : tensor<2xi32>\n"
                "  func.return\n}\n");
  CHECK(out.find("dense<[[1.000000e+00, 2.500000e+00], [3.000000e+00, "
                 "4.000000e+00]]>") != std::string::npos);
  CHECK(out.find("dense<7> : tensor<2xi32>") != std::string::npos);
}

TEST_CASE("bad input gives a diagnostic with line and column") {
  CHECK(firstError("func.func @f() {\n  %0 = stablehlo.add %x, %x : "
                   "tensor<f32>\n}\n") ==
        "2:22: use of undeclared SSA value name");
  CHECK(firstError("sdy.mesh @m = <[\"a\"=99999999999999999999]>") ==
        "1:21: integer value too large");
  CHECK(firstError("func.func @f() {\n  %0 = foo.bar\n}\n")
            .rfind("2:8: custom op 'foo.bar' is unknown; shardlab reads ops it "
                   "does not model only in the generic form, e.g. "
                   "\"foo.bar\"(%a)",
                   0) == 0);
  // Found by the fuzzer: a typed element inside a dense literal threw
  // std::bad_variant_access instead of failing to parse.
  // `0x` without digits is the integer 0 and then `x`, as MLIR reads it.
  CHECK(firstError("func.func @f() {\n  %0 = stablehlo.constant dense<0x : "
                   "tensor<i32>\n}\n") == "2:34: expected '>'");
  CHECK(firstError("func.func @f() {\n  %0 = stablehlo.constant dense<[1.0, "
                   "0x17C]> : tensor<2xf8E4M3FN>\n}\n") ==
        "2:39: hexadecimal float constant out of range for type");
  CHECK(firstError("func.func @f() {\n  %0 = stablehlo.constant dense<1 : "
                   "i32> : tensor<i32>\n}\n") != "");
  CHECK(firstError("func.func @f(") != "");
  CHECK(firstError("\xff\xfe") != "");
}

TEST_CASE("diagnostics count lines right after lines of every length") {
  // The parser finds newlines 16 bytes at a time; comment lines of 0 to 40
  // characters put newlines at every offset of a stride before the error.
  std::string text;
  for (int length = 0; length <= 40; ++length)
    text += length == 0 ? "\n" : "//" + std::string(length - 1, 'c') + "\n";
  text += "func.func @f() {\n  %0 = stablehlo.add %x, %x : tensor<f32>\n}";
  CHECK(firstError(text) == "43:22: use of undeclared SSA value name");
  std::string tail;
  for (int length = 0; length <= 40; ++length)
    tail += length == 0 ? "\n" : "//" + std::string(length - 1, 'c') + "\n";
  CHECK(
      firstError(tail + "func.func @f() {\n}" + std::string(37, '\n') + "junk")
          .rfind("80:1: custom op 'junk' is unknown", 0) == 0);
}

TEST_CASE("deep nesting is a diagnostic, not a stack overflow") {
  std::string deep = "func.func @f() attributes {a = ";
  for (int i = 0; i < 10000; ++i)
    deep += '[';
  CHECK(firstError(deep).find("nesting is deeper than") != std::string::npos);
  std::string deep_types = "func.func @f(%a: ";
  for (int i = 0; i < 10000; ++i)
    deep_types += "tuple<";
  CHECK(firstError(deep_types).find("nesting") != std::string::npos);
}

TEST_CASE("split chunks keep their line numbers") {
  DiagnosticEngine diags;
  ParseOptions options;
  options.line_offset = 40;
  parseModule("\n  %0 = foo.bar\n", diags, options);
  REQUIRE(!diags.diagnostics().empty());
  CHECK(diags.diagnostics()[0].loc.line == 42);
}

namespace {

std::string printDebug(const std::string &text, std::string *errors = nullptr,
                       const std::string &file = "in.mlir") {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  if (!module) {
    if (errors)
      for (const Diagnostic &diag : diags.diagnostics())
        *errors += std::to_string(diag.loc.line) + ":" +
                   std::to_string(diag.loc.col) + ": " + diag.message + "\n";
    return "<parse error>";
  }
  PrintOptions options;
  options.debuginfo = true;
  options.file = file;
  return printModule(*module, options);
}

// As jax.jit(...).lower(...).as_text(debug_info=True) writes a module:
// aliases before and after the module, some used before they are defined.
const char *kJaxLocations = R"(#loc1 = loc("x")
#loc2 = loc("/tmp/f.py":10:5 to :17)
#loc3 = loc("jit(f)/dot_general"(#loc2))
module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32> {jax.arg_info = "x"} loc("x"), %arg1: tensor<16x4xf32> loc(unknown)) -> (tensor<8x4xf32> {jax.result_info = ""}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32> loc(#loc3)
    %1 = stablehlo.sine %0 : tensor<8x4xf32> loc(fused<"meta">[#loc1, #loc4])
    %2 = stablehlo.cosine %1 : tensor<8x4xf32> loc(callsite(#loc1 at #loc4))
    return %2 : tensor<8x4xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc4 = loc("/tmp/f.py":11:3 to 12:9)
)";

} // namespace

TEST_CASE("locations of every kind are kept and printed with debuginfo") {
  // sdy_opt -mlir-print-debuginfo on the module with #loc4 defined first
  // (sdy_opt does not take a fused location's forward reference; shardlab
  // does): a block argument's location written out and its alias before the
  // module, an op's as its alias after it, each part of a location an alias
  // of its own, numbered by depth and then in the order printed.
  const std::string expected = R"(#loc = loc(unknown)
#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32> {jax.arg_info = "x"} loc("x"), %arg1: tensor<16x4xf32> loc(unknown)) -> (tensor<8x4xf32> {jax.result_info = ""}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32> loc(#loc4)
    %1 = stablehlo.sine %0 : tensor<8x4xf32> loc(#loc5)
    %2 = stablehlo.cosine %1 : tensor<8x4xf32> loc(#loc6)
    return %2 : tensor<8x4xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("/tmp/f.py":10:5 to :17)
#loc3 = loc("/tmp/f.py":11:3 to 12:9)
#loc4 = loc("jit(f)/dot_general"(#loc2))
#loc5 = loc(fused<"meta">[#loc1, #loc3])
#loc6 = loc(callsite(#loc1 at #loc3))
)";
  std::string out = printDebug(kJaxLocations);
  CHECK(out == expected);
  CHECK(printDebug(out) == out); // a fixed point
  // Without debuginfo nothing of it is printed.
  CHECK(roundTrip(kJaxLocations).find("loc(") == std::string::npos);
}

TEST_CASE("debuginfo aliases a location reached twice once, a block "
          "argument's parts before the module") {
  // As sdy_opt prints it: an implicit module is where its file starts; the
  // name location of %arg0 is written out, its file location an alias
  // defined before the module; /tmp/a.py:3:3 serves two ops and a part.
  const std::string text =
      R"(func.func @main(%arg0: tensor<8xf32> loc("y"("/tmp/g.py":1:1)), %arg1: tensor<8xf32> loc("/tmp/h.py":2:2)) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32> loc("/tmp/a.py":3:3)
  %2 = stablehlo.multiply %0, %0 : tensor<8xf32> loc(callsite("/tmp/c.py":5:5 at "/tmp/d.py":6:6))
  %3 = stablehlo.abs %2 : tensor<8xf32> loc(fused["/tmp/e.py":7:7, "n"("/tmp/a.py":3:3)])
  return %3 : tensor<8xf32> loc("/tmp/a.py":3:3)
} loc("/tmp/f.py":9:9)
)";
  const std::string expected = R"(#loc2 = loc("/tmp/g.py":1:1)
#loc3 = loc("/tmp/h.py":2:2)
#loc8 = loc("y"(#loc2))
module {
  func.func @main(%arg0: tensor<8xf32> loc("y"(#loc2)), %arg1: tensor<8xf32> loc("/tmp/h.py":2:2)) -> tensor<8xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32> loc(#loc4)
    %1 = stablehlo.multiply %0, %0 : tensor<8xf32> loc(#loc9)
    %2 = stablehlo.abs %1 : tensor<8xf32> loc(#loc11)
    return %2 : tensor<8xf32> loc(#loc4)
  } loc(#loc1)
} loc(#loc)
#loc = loc("<stdin>":0:0)
#loc1 = loc("/tmp/f.py":9:9)
#loc4 = loc("/tmp/a.py":3:3)
#loc5 = loc("/tmp/c.py":5:5)
#loc6 = loc("/tmp/d.py":6:6)
#loc7 = loc("/tmp/e.py":7:7)
#loc9 = loc(callsite(#loc5 at #loc6))
#loc10 = loc("n"(#loc4))
#loc11 = loc(fused[#loc7, #loc10])
)";
  CHECK(printDebug(text, nullptr, "<stdin>") == expected);
}

TEST_CASE("ops without a written location print their position in the file") {
  std::string out =
      printDebug("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  return %a : tensor<2xf32>\n}\n");
  CHECK(out.find("%arg0: tensor<2xf32> loc(\"in.mlir\":1:14)") !=
        std::string::npos);
  // An op's location as its alias, defined after the module (sdy_opt's).
  CHECK(out.find("return %arg0 : tensor<2xf32> loc(#loc3)") !=
        std::string::npos);
  CHECK(out.find("} loc(#loc)\n#loc = loc(\"in.mlir\":0:0)\n"
                 "#loc1 = loc(\"in.mlir\":1:1)\n"
                 "#loc3 = loc(\"in.mlir\":2:3)\n") != std::string::npos);
}

TEST_CASE("bad locations are diagnostics") {
  std::string errors;
  printDebug("func.func @f() {\n  return loc(#nowhere)\n}\n", &errors);
  CHECK(errors.find("undefined symbol alias id 'nowhere'") !=
        std::string::npos);
  errors.clear();
  printDebug(
      "#a = loc(#b)\n#b = loc(#a)\nfunc.func @f() {\n  return loc(#a)\n}\n",
      &errors);
  CHECK(errors.find("refers to itself") != std::string::npos);
  errors.clear();
  printDebug("func.func @f() {\n  return loc(3)\n}\n", &errors);
  CHECK(errors.find("2:14: expected location instance") != std::string::npos);
}

TEST_CASE("two symbols of one name are refused, as MLIR's symbol table does") {
  DiagnosticEngine diags;
  CHECK_FALSE(loadModule("func.func @main() {\n  return\n}\nfunc.func "
                         "@main() {\n  return\n}\n",
                         diags)
                  .module);
  REQUIRE(diags.diagnostics().size() == 2);
  const Diagnostic &error = diags.diagnostics()[0];
  CHECK(error.message == "redefinition of symbol named 'main'");
  CHECK(error.loc.line == 4);
  CHECK(diags.diagnostics()[1].message ==
        "see existing symbol definition here");
  CHECK(diags.diagnostics()[1].loc.line == 1);
}

TEST_CASE("an op's result is where the op is, its written location included") {
  // Passes put the collectives they make at a value's location, as MLIR's
  // Value::getLoc() is its op's: before, a result kept only the file
  // position, and an all_reduce after a named dot lost the dot's name.
  DiagnosticEngine diags;
  auto module =
      parseModule("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                  "  %0 = stablehlo.abs %a : tensor<2xf32> "
                  "loc(\"jit(f)/abs\"(\"f.py\":3:4))\n"
                  "  return %0 : tensor<2xf32>\n}\n",
                  diags);
  REQUIRE(module);
  Operation *abs = nullptr;
  walk(module->op(), [&](Operation &op) {
    if (op.is("stablehlo.abs"))
      abs = &op;
  });
  REQUIRE(abs);
  REQUIRE(abs->result(0)->loc.debug);
  CHECK(abs->result(0)->loc.debug->text == "\"jit(f)/abs\"(\"f.py\":3:4)");
  CHECK(abs->result(0)->loc.line == abs->loc.line);
}
