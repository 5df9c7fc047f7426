#include "text/float_bits.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace shardlab {

namespace {

// std::bit_cast, which Emscripten 3.1.6's libc++ does not have.
template <typename To, typename From> To bitCast(From from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof(to));
  return to;
}

// IEEE half precision: 1 sign, 5 exponent, 10 mantissa bits.
double halfToDouble(uint16_t bits) {
  const bool negative = (bits >> 15) != 0;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double magnitude;
  if (exponent == 0x1F) // an infinity, or a NaN whose payload is kept
    return bitCast<float>((negative ? 0x80000000u : 0u) | 0x7F800000u |
                          (static_cast<uint32_t>(mantissa) << 13));
  if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24); // subnormal
  else
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  return negative ? -magnitude : magnitude;
}

// The half bits of a non-finite value (a NaN keeps its top mantissa bits).
uint16_t nonFiniteHalf(double value) {
  const uint32_t single = bitCast<uint32_t>(static_cast<float>(value));
  const auto sign = static_cast<uint16_t>((single >> 16) & 0x8000);
  if (!std::isnan(value))
    return sign | 0x7C00;
  const auto mantissa = static_cast<uint16_t>((single >> 13) & 0x3FF);
  return sign | 0x7C00 | (mantissa ? mantissa : 0x200);
}

std::string hex(uint64_t bits, int digits) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "0x%0*llX", digits,
                static_cast<unsigned long long>(bits));
  return buffer;
}

} // namespace

std::optional<double> floatFromBits(uint64_t bits, std::string_view element) {
  if (element == "f64")
    return bitCast<double>(bits);
  if (element == "f32" && bits <= 0xFFFFFFFFull)
    return bitCast<float>(static_cast<uint32_t>(bits));
  if (element == "bf16" && bits <= 0xFFFF)
    return bitCast<float>(static_cast<uint32_t>(bits << 16));
  if (element == "f16" && bits <= 0xFFFF)
    return halfToDouble(static_cast<uint16_t>(bits));
  return std::nullopt;
}

std::optional<std::string> floatBitsSpelling(double value,
                                             std::string_view element) {
  if (element == "f64")
    return hex(bitCast<uint64_t>(value), 16);
  const uint32_t single = bitCast<uint32_t>(static_cast<float>(value));
  if (element == "f32")
    return hex(single, 8);
  if (element == "bf16") {
    uint32_t top = single >> 16;
    if (std::isnan(value) && (top & 0x7F) == 0)
      top |= 0x40; // a NaN whose payload was all below bf16's bits
    return hex(top, 4);
  }
  if (element == "f16")
    return hex(nonFiniteHalf(value), 4);
  return std::nullopt;
}

std::string_view complexPartType(std::string_view element) {
  constexpr std::string_view kPrefix = "complex<";
  if (element.size() > kPrefix.size() && element.rfind(kPrefix, 0) == 0 &&
      element.back() == '>')
    return element.substr(kPrefix.size(), element.size() - kPrefix.size() - 1);
  return element;
}

} // namespace shardlab
