// parseDecimal (support/decimal.h) must give exactly what strtod gives: the
// parser stores its result and the printer's round-trip test compares
// against it, so a difference of one ulp changes printed constants.
#include "support/decimal.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using shardlab::parseDecimal;

namespace {

double viaStrtod(const std::string &text) {
  return std::strtod(text.c_str(), nullptr);
}

bool sameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

} // namespace

TEST_CASE("parseDecimal reads the spellings the printer writes") {
  CHECK(parseDecimal("1.250000e-01") == 0.125);
  CHECK(parseDecimal("0.000000e+00") == 0.0);
  CHECK(parseDecimal("-3") == -3.0);
  CHECK(parseDecimal("3.906250e-03") == 0.00390625);
  CHECK(std::signbit(parseDecimal("-0.000000e+00")));
  CHECK(parseDecimal("1.") == 1.0);
}

TEST_CASE("parseDecimal falls back to strtod where fast_float stops") {
  CHECK(parseDecimal("1e400") == HUGE_VAL);
  CHECK(parseDecimal("-1e400") == -HUGE_VAL);
  CHECK(parseDecimal("+2.5") == 2.5);
  CHECK(parseDecimal("0x1p3") == 8.0);
  CHECK(parseDecimal("1e-400") == 0.0);
}

TEST_CASE("parseDecimal rounds as strtod does, bit for bit") {
  std::mt19937_64 random(2026);
  char buffer[512];
  for (int i = 0; i < 20000; ++i) {
    double value;
    uint64_t bits = random();
    std::memcpy(&value, &bits, sizeof(value));
    if (!std::isfinite(value))
      continue;
    // Short spellings (rounded, the common literal) and full ones (17
    // digits), and subnormals and halfway cases among the random bits.
    for (const char *format : {"%.6e", "%.17g", "%.9g", "%.0f"}) {
      std::snprintf(buffer, sizeof(buffer), format, value);
      INFO(buffer);
      REQUIRE(sameBits(parseDecimal(buffer), viaStrtod(buffer)));
    }
  }
  // Halfway between two doubles with many digits: the slow path.
  const std::string halfway =
      "9007199254740993.0000000000000000000000000000000000000001";
  CHECK(sameBits(parseDecimal(halfway), viaStrtod(halfway)));
  CHECK(sameBits(parseDecimal("9007199254740993"),
                 viaStrtod("9007199254740993")));
}
