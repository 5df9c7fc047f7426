// Literal values through parse and print: exact integers of every width,
// floats of every format spelled as MLIR spells them, NaN payloads, -0,
// splats and hex blobs. Every expected spelling below is what Shardy's
// sdy_opt (MLIR 22, ../shared/tools/shardy) printed for the same input;
// every expected error is its message at its line and column.
#include "shardlab/ir/float_format.h"
#include "shardlab/text/text.h"
#include "support/big_uint.h"
#include "text/float_text.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

using namespace shardlab;

namespace {

std::string wrap(const std::string &constant) {
  return "func.func @main() {\n  %0 = stablehlo.constant " + constant +
         "\n  return\n}\n";
}

// The printed constant's line (its attribute and type), or the first error
// as `line:col: message`.
std::string printed(const std::string &constant) {
  DiagnosticEngine diags;
  auto module = parseModule(wrap(constant), diags);
  if (!module) {
    const Diagnostic &d = diags.diagnostics().front();
    return std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " +
           d.message;
  }
  std::string text = printModule(*module);
  size_t at = text.find("stablehlo.constant ");
  REQUIRE(at != std::string::npos);
  at += std::string("stablehlo.constant ").size();
  return text.substr(at, text.find('\n', at) - at);
}

} // namespace

TEST_CASE("64-bit integers survive exactly, signed and unsigned") {
  CHECK(printed("dense<9223372036854775807> : tensor<i64>") ==
        "dense<9223372036854775807> : tensor<i64>");
  CHECK(printed("dense<[9007199254740993, -9223372036854775808, "
                "123456789012345678]> : tensor<3xi64>") ==
        "dense<[9007199254740993, -9223372036854775808, "
        "123456789012345678]> : tensor<3xi64>");
  CHECK(printed("dense<[18446744073709551615, 9223372036854775807]> : "
                "tensor<2xui64>") ==
        "dense<[18446744073709551615, 9223372036854775807]> : "
        "tensor<2xui64>");
  // Signless integers print signed: 255 and 0xFF are the i8 -1.
  CHECK(printed("dense<[255, 0xFF, -128]> : tensor<3xi8>") ==
        "dense<[-1, -1, -128]> : tensor<3xi8>");
  CHECK(printed("dense<18446744073709551615> : tensor<i64>") ==
        "dense<-1> : tensor<i64>");
}

TEST_CASE("integer literals out of range are errors at the number") {
  CHECK(printed("dense<256> : tensor<i8>") ==
        "2:33: integer constant out of range for type");
  CHECK(printed("dense<-129> : tensor<i8>") ==
        "2:34: integer constant out of range for type");
  CHECK(printed("dense<-0> : tensor<i32>") ==
        "2:34: integer constant out of range for type");
  CHECK(printed("dense<128> : tensor<si8>") ==
        "2:33: integer constant out of range for type");
  CHECK(printed("dense<0x1FF> : tensor<i8>") ==
        "2:33: integer constant out of range for type");
  CHECK(printed("dense<18446744073709551616> : tensor<i64>") ==
        "2:33: integer constant out of range for type");
  CHECK(printed("dense<2> : tensor<i1>") ==
        "2:33: integer constant out of range for type");
  CHECK(printed("dense<-1> : tensor<ui8>") ==
        "2:34: expected unsigned integer elements, but parsed negative "
        "value");
  CHECK(printed("dense<true> : tensor<i32>") ==
        "2:33: expected i1 type for 'true' or 'false' values");
  CHECK(printed("dense<1.5> : tensor<i32>") ==
        "2:33: expected integer elements, but parsed floating-point");
  CHECK(printed("{v = 300 : i8} dense<1> : tensor<i32>") ==
        "2:32: integer constant out of range for attribute");
  CHECK(printed("{u = -1 : ui8} dense<1> : tensor<i32>") ==
        "2:33: negative integer literal not valid for unsigned integer type");
}

TEST_CASE("floats print as MLIR prints them") {
  CHECK(printed("dense<[2.38171506, 1.0e-6, 0.1, 123456789.0, -0.0, "
                "0x7FC00001, 1.0e-45]> : tensor<7xf32>") ==
        "dense<[2.38171506, 9.99999997E-7, 1.000000e-01, 0x4CEB79A3, "
        "-0.000000e+00, 0x7FC00001, 1.401300e-45]> : tensor<7xf32>");
  CHECK(printed("dense<[1.0e-6, 0.1, 3.14159265358979311599796346854, "
                "1.0e-320]> : tensor<4xf64>") ==
        "dense<[9.9999999999999995E-7, 1.000000e-01, 3.1415926535897931, "
        "9.999880e-321]> : tensor<4xf64>");
  CHECK(printed("dense<[0.1, 70000.0, 0x7E01]> : tensor<3xf16>") ==
        "dense<[9.997550e-02, 0x7C00, 0x7E01]> : tensor<3xf16>");
  CHECK(printed("dense<0.1> : tensor<bf16>") ==
        "dense<1.000980e-01> : tensor<bf16>");
  CHECK(printed("dense<[(1.5, 0x7FC00000), (0.1, 2.0)]> : "
                "tensor<2xcomplex<f32>>") ==
        "dense<[(1.500000e+00,0x7FC00000), (1.000000e-01,2.000000e+00)]> : "
        "tensor<2xcomplex<f32>>");
  CHECK(printed("dense<1.0e400> : tensor<f64>") ==
        "dense<0x7FF0000000000000> : tensor<f64>");
  CHECK(printed("dense<1.0e-400> : tensor<f64>") ==
        "dense<0.000000e+00> : tensor<f64>");
}

TEST_CASE("f8, f6 and f4 literals round and overflow as APFloat does") {
  CHECK(printed("dense<[0.1, 0.2, 0.3]> : tensor<3xf8E4M3FN>") ==
        "dense<[1.015630e-01, 2.031250e-01, 3.125000e-01]> : "
        "tensor<3xf8E4M3FN>");
  CHECK(printed("dense<[0.1, 0.2, 0.3]> : tensor<3xf8E5M2>") ==
        "dense<[9.375000e-02, 1.875000e-01, 3.125000e-01]> : "
        "tensor<3xf8E5M2>");
  CHECK(printed("dense<[0.1, 0.2, 448.0]> : tensor<3xf8E4M3FNUZ>") ==
        "dense<[1.015630e-01, 2.031250e-01, 0x80]> : tensor<3xf8E4M3FNUZ>");
  CHECK(printed("dense<1000.0> : tensor<f8E4M3FN>") ==
        "dense<0x7F> : tensor<f8E4M3FN>");
  CHECK(printed("dense<1000.0> : tensor<f4E2M1FN>") ==
        "dense<6.000000e+00> : tensor<f4E2M1FN>");
  CHECK(printed("dense<-0.0> : tensor<f8E4M3FNUZ>") ==
        "dense<0.000000e+00> : tensor<f8E4M3FNUZ>");
  CHECK(printed("dense<[0.5, 4.0, 3.0e10]> : tensor<3xf8E8M0FNU>") ==
        "dense<[5.000000e-01, 4.000000e+00, 3.435970e+10]> : "
        "tensor<3xf8E8M0FNU>");
}

TEST_CASE("float literals MLIR refuses") {
  CHECK(printed("dense<3> : tensor<f32>")
            .rfind("2:33: unexpected decimal integer literal for a floating "
                   "point value",
                   0) == 0);
  CHECK(printed("dense<true> : tensor<f32>") ==
        "2:33: expected floating point literal");
  CHECK(printed("dense<-0x3F800000> : tensor<f32>") ==
        "2:34: hexadecimal float literal should not have a leading minus");
  CHECK(printed("dense<0x1FFFF> : tensor<f16>") ==
        "2:33: hexadecimal float constant out of range for type");
  // `1e40` is the integer 1 and then an identifier, as MLIR lexes it.
  CHECK(printed("dense<1e40> : tensor<f32>") == "2:34: expected '>'");
}

TEST_CASE("splats by bits; hex blobs above 100 elements, lists below") {
  CHECK(printed("dense<[0x7FC00000, 0x7FC00000]> : tensor<2xf32>") ==
        "dense<0x7FC00000> : tensor<2xf32>");
  CHECK(printed("dense<[0.0, -0.0]> : tensor<2xf32>") ==
        "dense<[0.000000e+00, -0.000000e+00]> : tensor<2xf32>");
  CHECK(printed("dense<\"0x0000803F0000803F\"> : tensor<2xf32>") ==
        "dense<1.000000e+00> : tensor<2xf32>");
  CHECK(printed("dense<\"0x0000803F00000040\"> : tensor<2xf32>") ==
        "dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>");
  CHECK(printed("dense<\"0xFF\"> : tensor<3xi1>") ==
        "dense<true> : tensor<3xi1>");
  CHECK(printed("dense<[5]> : tensor<1xi32>") == "dense<5> : tensor<1xi32>");
  CHECK(printed("dense<[]> : tensor<0xi32>") == "dense<> : tensor<0xi32>");
  CHECK(printed("dense<\"0x0100\"> : tensor<2xi1>") ==
        "2:27: elements hex data size is invalid for provided type: "
        "'tensor<2xi1>'");
  CHECK(printed("dense<[[1, 2], [3, 4]]> : tensor<4xi32>") ==
        "2:27: inferred shape of elements literal ([2, 2]) does not match "
        "type ([4])");
  std::string bools = "[", ints = "[";
  for (int i = 0; i < 101; ++i) {
    bools += std::string(i ? ", " : "") + (i % 2 == 0 ? "true" : "false");
    ints += (i ? ", " : "") + std::to_string(i);
  }
  CHECK(printed("dense<" + bools + "]> : tensor<101xi1>") ==
        "dense<\"0x55555555555555555555555515\"> : tensor<101xi1>");
  std::string hex = printed("dense<" + ints + "]> : tensor<101xui64>");
  CHECK(hex.rfind("dense<\"0x00000000000000000100000000000000020000", 0) == 0);
  // ... and back: the blob reads to the same elements.
  CHECK(printed(hex) == hex);
}

TEST_CASE("scalar and dense-array attributes keep their values") {
  CHECK(printed("{foo = 1.5 : f64, s = 255 : i8, u = 18446744073709551615 : "
                "ui64, y = array<f32: 1.0, 0x7FC00000, 2.5>, z = array<i1: "
                "true, false>, zz = array<i8: 255>} dense<1> : tensor<i32>") ==
        "{foo = 1.500000e+00 : f64, s = -1 : i8, u = 18446744073709551615 : "
        "ui64, y = array<f32: 1.000000e+00, 0x7FC00000, 2.500000e+00>, z = "
        "array<i1: true, false>, zz = array<i8: -1>} dense<1> : tensor<i32>");
  CHECK(printed("{v = 1 : f32} dense<1> : tensor<i32>")
            .rfind("2:32: unexpected decimal integer literal", 0) == 0);
}

TEST_CASE("encodeFloat rounds to nearest even and overflows per format") {
  const FloatFormat &f16 = *floatFormat("f16");
  CHECK(encodeFloat(65504.0, f16) == 0x7BFF);
  CHECK(encodeFloat(65519.99, f16) == 0x7BFF);
  CHECK(encodeFloat(65520.0, f16) == 0x7C00); // the tie goes to even: inf
  CHECK(encodeFloat(std::ldexp(1.0, -25), f16) == 0);      // tie to 0
  CHECK(encodeFloat(std::ldexp(1.5, -25), f16) == 0x0001); // smallest
  CHECK(encodeFloat(-0.0, f16) == 0x8000);
  const FloatFormat &e4m3fn = *floatFormat("f8E4M3FN");
  CHECK(encodeFloat(448.0, e4m3fn) == 0x7E);
  CHECK(encodeFloat(464.0, e4m3fn) == 0x7E); // tie: 0x7E is even
  CHECK(encodeFloat(465.0, e4m3fn) == 0x7F); // NaN: no infinity
  CHECK(encodeFloat(-465.0, e4m3fn) == 0xFF);
  const FloatFormat &fnuz = *floatFormat("f8E5M2FNUZ");
  CHECK(encodeFloat(-0.0, fnuz) == 0x00); // no -0 in FNUZ
  CHECK(isNanBits(0x80, fnuz));
  CHECK(decodeFloat(0x7F, fnuz) == 57344.0);
  const FloatFormat &bf16 = *floatFormat("bf16");
  CHECK(encodeFloat(0.1, bf16) == 0x3DCD);
  CHECK(decodeFloat(0xFF80, bf16) == -INFINITY);
  const FloatFormat &f64 = *floatFormat("f64");
  CHECK(encodeFloat(std::nan(""), f64) != 0);
  CHECK(floatFormat("f128") == nullptr);
}

TEST_CASE("f32 rounds to nearest even, keeps subnormals and overflows to "
          "infinity (the hardware's conversion)") {
  const FloatFormat &f32 = *floatFormat("f32");
  CHECK(encodeFloat(1.0 + std::ldexp(1.0, -24), f32) == 0x3F800000); // tie
  CHECK(encodeFloat(1.0 + std::ldexp(3.0, -24), f32) == 0x3F800002); // tie
  CHECK(encodeFloat(std::ldexp(1.0, -149), f32) == 0x00000001);
  CHECK(encodeFloat(std::ldexp(1.0, -150), f32) == 0);               // tie to 0
  CHECK(encodeFloat(std::ldexp(1.5, -150), f32) == 0x00000001);      // above
  CHECK(encodeFloat(-std::ldexp(1.0, -126), f32) == 0x80800000);     // normal
  CHECK(encodeFloat(std::ldexp(0x1FFFFFF, 103), f32) == 0x7F800000); // tie
  CHECK(encodeFloat(std::ldexp(0x1FFFFFD, 103), f32) == 0x7F7FFFFE); // tie
  CHECK(encodeFloat(std::ldexp(0x1FFFFFE, 103), f32) == 0x7F7FFFFF); // max
  CHECK(encodeFloat(-INFINITY, f32) == 0xFF800000);
  CHECK(encodeFloat(-0.0, f32) == 0x80000000);
  CHECK(encodeFloat(-std::nan(""), f32) == 0xFFC00000); // quiet, its sign
  CHECK(decodeFloat(0x00000001, f32) == std::ldexp(1.0, -149));
  CHECK(decodeFloat(0x7F7FFFFF, f32) == std::ldexp(0xFFFFFF, 104));
  CHECK(decodeFloat(0xFF800000, f32) == -INFINITY);
  CHECK(std::isnan(decodeFloat(0x7F800001, f32))); // a signalling NaN
  CHECK(std::signbit(decodeFloat(0xFFC00000, f32)));
}

TEST_CASE("nearestFloatBits rounds once, not through f64") {
  // 1 + 2^-11 + 2^-60 rounds to 1 + 2^-11 in f64, a tie in f16 (which goes
  // to even, 1.0); read at once it is above the tie: 1 + 2^-10.
  const FloatFormat &f16 = *floatFormat("f16");
  const std::string above =
      "1.000488281250000000867361737988403547205962240695953369140625";
  CHECK(floatBitsOfLiteral(above, f16) == 0x3C00);
  CHECK(nearestFloatBits(above, f16) == 0x3C01);
  CHECK(nearestFloatBits("1.00048828125", f16) == 0x3C00); // an exact tie
}

TEST_CASE(
    "BigUint: exact decimal of products, shifts and truncating division") {
  BigUint n(3);
  n.multiplyByPowerOf5(2);
  CHECK(n.toDecimal() == "75");
  n.shiftLeft(4);
  CHECK(n.toDecimal() == "1200");
  n.divideByPowerOf10(3);
  CHECK(n.toDecimal() == "1");
  BigUint big(1);
  big.multiplyByPowerOf10(40);
  big.addSmall(7);
  CHECK(big.toDecimal() == "10000000000000000000000000000000000000007");
  CHECK(big.bitLength() == 133);
  BigUint small(10);
  CHECK(small.compare(big) < 0);
  CHECK(big.compare(big) == 0);
  CHECK(BigUint(0).toDecimal() == "0");
}
