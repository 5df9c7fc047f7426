#include "shardlab/ir/float_format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace shardlab {

namespace {

// The layouts of the float types MLIR's builtin dialect has (APFloat's
// semantics of the same names).
constexpr std::array<FloatFormat, 15> kFormats = {{
    {"f64", 64, 11, 52, 1023, NonFinite::Ieee, true},
    {"f32", 32, 8, 23, 127, NonFinite::Ieee, true},
    {"f16", 16, 5, 10, 15, NonFinite::Ieee, true},
    {"bf16", 16, 8, 7, 127, NonFinite::Ieee, true},
    {"f8E5M2", 8, 5, 2, 15, NonFinite::Ieee, true},
    {"f8E4M3", 8, 4, 3, 7, NonFinite::Ieee, true},
    {"f8E3M4", 8, 3, 4, 3, NonFinite::Ieee, true},
    {"f8E4M3FN", 8, 4, 3, 7, NonFinite::NanOnly, true},
    {"f8E5M2FNUZ", 8, 5, 2, 16, NonFinite::NanIsNegZero, true},
    {"f8E4M3FNUZ", 8, 4, 3, 8, NonFinite::NanIsNegZero, true},
    {"f8E4M3B11FNUZ", 8, 4, 3, 11, NonFinite::NanIsNegZero, true},
    {"f8E8M0FNU", 8, 8, 0, 127, NonFinite::NanOnly, false},
    {"f4E2M1FN", 4, 2, 1, 1, NonFinite::None, true},
    {"f6E2M3FN", 6, 2, 3, 1, NonFinite::None, true},
    {"f6E3M2FN", 6, 3, 2, 3, NonFinite::None, true},
}};

uint64_t fractionMask(const FloatFormat &f) {
  return (uint64_t{1} << f.fraction_bits) - 1;
}
uint64_t exponentMask(const FloatFormat &f) {
  return (uint64_t{1} << f.exponent_bits) - 1;
}
uint64_t signMask(const FloatFormat &f) {
  return f.has_sign ? uint64_t{1} << (f.bits - 1) : 0;
}
uint64_t exponentField(uint64_t bits, const FloatFormat &f) {
  return (bits >> f.fraction_bits) & exponentMask(f);
}
// f8E8M0FNU has no fraction and no subnormals: exponent field 0 is 2^-127.
bool hasSubnormals(const FloatFormat &f) { return f.fraction_bits > 0; }

// The largest exponent field of a finite value, and the largest fraction
// that field may carry.
void finiteTop(const FloatFormat &f, uint64_t &field, uint64_t &fraction) {
  field = exponentMask(f);
  fraction = fractionMask(f);
  if (f.non_finite == NonFinite::Ieee) {
    field -= 1;
  } else if (f.non_finite == NonFinite::NanOnly) {
    if (f.fraction_bits == 0)
      field -= 1;
    else
      fraction -= 1;
  }
}

uint64_t quietNan(const FloatFormat &f, bool negative) {
  uint64_t sign = negative ? signMask(f) : 0;
  switch (f.non_finite) {
  case NonFinite::Ieee:
    return sign | (exponentMask(f) << f.fraction_bits) |
           (uint64_t{1} << (f.fraction_bits - 1));
  case NonFinite::NanOnly:
    return sign | (exponentMask(f) << f.fraction_bits) | fractionMask(f);
  case NonFinite::NanIsNegZero:
    return uint64_t{1} << (f.bits - 1);
  case NonFinite::None:
    break;
  }
  return 0; // no NaN to be had; APFloat leaves this undefined
}

uint64_t overflowed(const FloatFormat &f, bool negative) {
  if (f.non_finite == NonFinite::Ieee)
    return (negative ? signMask(f) : 0) | (exponentMask(f) << f.fraction_bits);
  if (f.non_finite == NonFinite::None)
    return (negative ? signMask(f) : 0) | largestFiniteBits(f);
  return quietNan(f, negative);
}

uint64_t zeroBits(const FloatFormat &f, bool negative) {
  return negative && f.non_finite != NonFinite::NanIsNegZero ? signMask(f) : 0;
}

// Rounds a nonnegative double holding an integer-and-fraction to the
// nearest integer, ties to even (exact: the caller keeps it below 2^53).
uint64_t roundHalfEven(double scaled) {
  double whole = std::floor(scaled);
  double rest = scaled - whole;
  auto n = static_cast<uint64_t>(whole);
  if (rest > 0.5 || (rest == 0.5 && (n & 1)))
    ++n;
  return n;
}

// IEEE binary32 (f32), which the hardware converts exactly as the
// general code does in a few instructions: the interpreter's hot path.
bool isBinary32(const FloatFormat &f) {
  return f.bits == 32 && f.exponent_bits == 8 && f.fraction_bits == 23 &&
         f.non_finite == NonFinite::Ieee;
}

} // namespace

const FloatFormat *floatFormat(std::string_view name) {
  for (const FloatFormat &format : kFormats)
    if (format.name == name)
      return &format;
  return nullptr;
}

bool isNanBits(uint64_t bits, const FloatFormat &f) {
  switch (f.non_finite) {
  case NonFinite::Ieee:
    return exponentField(bits, f) == exponentMask(f) &&
           (bits & fractionMask(f)) != 0;
  case NonFinite::NanOnly:
    return exponentField(bits, f) == exponentMask(f) &&
           (bits & fractionMask(f)) == fractionMask(f);
  case NonFinite::NanIsNegZero:
    return bits == uint64_t{1} << (f.bits - 1);
  case NonFinite::None:
    break;
  }
  return false;
}

bool isInfBits(uint64_t bits, const FloatFormat &f) {
  return f.non_finite == NonFinite::Ieee &&
         exponentField(bits, f) == exponentMask(f) &&
         (bits & fractionMask(f)) == 0;
}

bool isZeroBits(uint64_t bits, const FloatFormat &f) {
  return hasSubnormals(f) && (bits & ~signMask(f)) == 0 && !isNanBits(bits, f);
}

bool signBit(uint64_t bits, const FloatFormat &f) {
  return (bits & signMask(f)) != 0;
}

bool decomposeFloat(uint64_t bits, const FloatFormat &f, uint64_t &significand,
                    int &exponent) {
  if (isNanBits(bits, f) || isInfBits(bits, f) || isZeroBits(bits, f))
    return false;
  uint64_t field = exponentField(bits, f);
  uint64_t fraction = bits & fractionMask(f);
  const int shift = static_cast<int>(f.fraction_bits);
  if (field == 0 && hasSubnormals(f)) {
    significand = fraction;
    exponent = 1 - f.bias - shift;
  } else {
    significand = (uint64_t{1} << f.fraction_bits) | fraction;
    exponent = static_cast<int>(field) - f.bias - shift;
  }
  return true;
}

double decodeFloat(uint64_t bits, const FloatFormat &f) {
  if (isBinary32(f) && (bits & 0x7FFFFFFF) <= 0x7F800000) { // not a NaN
    const uint32_t narrow = uint32_t(bits);
    float value = 0;
    std::memcpy(&value, &narrow, sizeof(value));
    return double(value);
  }
  const bool negative = signBit(bits, f);
  const double sign = negative ? -1.0 : 1.0;
  if (isNanBits(bits, f))
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  if (isInfBits(bits, f))
    return sign * std::numeric_limits<double>::infinity();
  uint64_t significand = 0;
  int exponent = 0;
  if (!decomposeFloat(bits, f, significand, exponent))
    return sign * 0.0;
  return sign * std::ldexp(static_cast<double>(significand), exponent);
}

uint64_t largestFiniteBits(const FloatFormat &f) {
  uint64_t field = 0, fraction = 0;
  finiteTop(f, field, fraction);
  return (field << f.fraction_bits) | fraction;
}

uint64_t encodeFloat(double value, const FloatFormat &f) {
  if (f.bits == 64) { // the bits themselves, a NaN's payload kept
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
  const bool negative = std::signbit(value);
  if (std::isnan(value))
    return quietNan(f, negative);
  // The hardware's IEEE narrowing: nearest, ties to even, overflow to
  // infinity, subnormals kept (no flush to zero in C++ or WebAssembly).
  if (isBinary32(f)) {
    const float narrow = float(value);
    uint32_t bits = 0;
    std::memcpy(&bits, &narrow, sizeof(bits));
    return bits;
  }
  if (negative && !f.has_sign)
    return quietNan(f, false); // f8E8M0FNU: no negative values
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude))
    return overflowed(f, negative);
  if (magnitude == 0)
    return zeroBits(f, negative);
  const int shift = static_cast<int>(f.fraction_bits);
  const int min_exponent = hasSubnormals(f) ? 1 - f.bias : -f.bias;
  int quantum = std::max(std::ilogb(magnitude), min_exponent) - shift;
  uint64_t n = roundHalfEven(std::ldexp(magnitude, -quantum));
  if (n == 0)
    return zeroBits(f, negative);
  if (n >> (f.fraction_bits + 1)) { // rounding carried into a new bit
    n >>= 1;
    ++quantum;
  }
  const uint64_t sign = negative ? signMask(f) : 0;
  if (hasSubnormals(f) && n < (uint64_t{1} << f.fraction_bits))
    return sign | n; // subnormal: exponent field 0
  const int64_t field = int64_t{quantum} + shift + f.bias;
  const uint64_t fraction = n & fractionMask(f);
  uint64_t top_field = 0, top_fraction = 0;
  finiteTop(f, top_field, top_fraction);
  if (field > static_cast<int64_t>(top_field) ||
      (field == static_cast<int64_t>(top_field) && fraction > top_fraction))
    return overflowed(f, negative);
  return sign | (static_cast<uint64_t>(field) << f.fraction_bits) | fraction;
}

} // namespace shardlab
