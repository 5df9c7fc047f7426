// Float literals spelled as bit patterns (text/float_bits.h) and their round
// trip through the parser and printer: real JAX modules start max-reductions
// from `dense<0xFF800000> : tensor<f32>` (-inf), which used to print as
// 4.28657869e+09.
#include "text/float_bits.h"

#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

using namespace shardlab;

TEST_CASE("floatFromBits reads the bits of f64, f32, f16 and bf16") {
  CHECK(*floatFromBits(0xFF800000, "f32") == -INFINITY);
  CHECK(*floatFromBits(0x7F800000, "f32") == INFINITY);
  CHECK(std::isnan(*floatFromBits(0x7FC00000, "f32")));
  CHECK(*floatFromBits(0x3F800000, "f32") == 1.0);
  CHECK(*floatFromBits(0xFF80, "bf16") == -INFINITY);
  CHECK(*floatFromBits(0x3F80, "bf16") == 1.0);
  CHECK(*floatFromBits(0xFC00, "f16") == -INFINITY);
  CHECK(std::isnan(*floatFromBits(0x7E00, "f16")));
  CHECK(*floatFromBits(0x3C00, "f16") == 1.0);
  CHECK(*floatFromBits(0x0001, "f16") == std::ldexp(1.0, -24));
  CHECK(*floatFromBits(0xC000, "f16") == -2.0);
  CHECK(*floatFromBits(0xFFF0000000000000ull, "f64") == -INFINITY);
  CHECK_FALSE(floatFromBits(0x1FFFF, "bf16"));
  CHECK_FALSE(floatFromBits(0x7C, "f8E4M3FN"));
}

TEST_CASE("floatBitsSpelling writes MLIR's spelling of non-finite values") {
  CHECK(*floatBitsSpelling(-INFINITY, "f32") == "0xFF800000");
  CHECK(*floatBitsSpelling(-INFINITY, "bf16") == "0xFF80");
  CHECK(*floatBitsSpelling(INFINITY, "f16") == "0x7C00");
  CHECK(*floatBitsSpelling(*floatFromBits(0x7E00, "f16"), "f16") == "0x7E00");
  CHECK(*floatBitsSpelling(*floatFromBits(0x7FC0, "bf16"), "bf16") == "0x7FC0");
  CHECK(*floatBitsSpelling(-INFINITY, "f64") == "0xFFF0000000000000");
  CHECK_FALSE(floatBitsSpelling(INFINITY, "f8E5M2"));
  // NaN payloads below the quiet bit survive (JAX's tests write 0x7FFF).
  CHECK(*floatBitsSpelling(*floatFromBits(0x7FFF, "bf16"), "bf16") == "0x7FFF");
  CHECK(*floatBitsSpelling(*floatFromBits(0x7FFF, "f16"), "f16") == "0x7FFF");
  CHECK(*floatBitsSpelling(*floatFromBits(0xFFC0, "bf16"), "bf16") == "0xFFC0");
}

TEST_CASE("hex float constants keep their value through parse and print") {
  const std::string text =
      "func.func @f() -> tensor<f32> {\n"
      "  %0 = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %1 = stablehlo.constant dense<0xFF80> : tensor<bf16>\n"
      "  %2 = stablehlo.constant dense<[0x7FC00000, 2.0]> : tensor<2xf32>\n"
      "  %3 = stablehlo.constant dense<0x7C00> : tensor<4xf16>\n"
      "  %4 = stablehlo.constant dense<(0xFF800000,0.000000e+00)> : "
      "tensor<complex<f32>>\n"
      "  %5 = stablehlo.constant dense<[0xFF, 2]> : tensor<2xui8>\n"
      "  return %0 : tensor<f32>\n"
      "}\n";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  std::string printed = printModule(*module);
  CHECK(printed.find("dense<0xFF800000> : tensor<f32>") != std::string::npos);
  CHECK(printed.find("dense<0xFF80> : tensor<bf16>") != std::string::npos);
  CHECK(printed.find("dense<[0x7FC00000, 2.000000e+00]> : tensor<2xf32>") !=
        std::string::npos);
  CHECK(printed.find("dense<0x7C00> : tensor<4xf16>") != std::string::npos);
  CHECK(printed.find("dense<(0xFF800000,0.000000e+00)> : "
                     "tensor<complex<f32>>") != std::string::npos);
  CHECK(printed.find("dense<[255, 2]> : tensor<2xui8>") != std::string::npos);
  INFO(printed);
  CHECK(printed.find("e+09") == std::string::npos);
}

TEST_CASE("a hex float literal of a type whose bits are not modelled is an "
          "error, not a wrong value") {
  DiagnosticEngine diags;
  auto module =
      parseModule("func.func @f() -> tensor<f8E4M3FN> {\n"
                  "  %0 = stablehlo.constant dense<0x7C> : tensor<f8E4M3FN>\n"
                  "  return %0 : tensor<f8E4M3FN>\n"
                  "}\n",
                  diags);
  CHECK_FALSE(module);
  REQUIRE_FALSE(diags.diagnostics().empty());
  CHECK(diags.diagnostics().front().message.find("f8E4M3FN") !=
        std::string::npos);
}
