// The binary layout of every float element type MLIR and StableHLO have, and
// exact conversions between a value and its bits. A dense literal stores each
// float as the bits of its own type, so a value survives parse and print
// exactly (NaN payloads and -0 included) and compares by its bits, as MLIR
// compares APFloats.
//
//   floatFormat("bf16")->bits                   == 16
//   decodeFloat(0xFF80, *floatFormat("bf16"))   == -inf
//   encodeFloat(0.1, *floatFormat("bf16"))      == 0x3DCD (0.10009765625)
//   encodeFloat(70000.0, *floatFormat("f16"))   == 0x7C00 (inf: overflow)
//   encodeFloat(500.0, *floatFormat("f8E4M3FN")) == 0x7F (NaN: it has no inf)
//
// Conversions round to nearest, ties to even, and overflow as LLVM's APFloat
// does: to infinity where the type has one, to NaN where it has only NaN,
// to the largest finite value where it has neither.
#pragma once

#include <cstdint>
#include <string_view>

namespace shardlab {

/// How a format spells values that are not finite.
enum class NonFinite {
  Ieee,         ///< all-ones exponent: infinities and NaNs (f32, f8E5M2)
  NanOnly,      ///< no infinity; all ones is NaN (f8E4M3FN, f8E8M0FNU)
  NanIsNegZero, ///< no infinity, no -0: the bits of -0 are NaN (..FNUZ)
  None,         ///< finite values only (f4E2M1FN, f6E2M3FN, f6E3M2FN)
};

/// One float element type's layout: sign, exponent and fraction fields.
struct FloatFormat {
  std::string_view name;
  unsigned bits = 0; ///< width of the encoding
  unsigned exponent_bits = 0;
  unsigned fraction_bits = 0; ///< stored fraction (precision - 1)
  int bias = 0;
  NonFinite non_finite = NonFinite::Ieee;
  bool has_sign = true; ///< false for f8E8M0FNU (no sign, no zero)

  /// Significant bits, the implicit one included (APFloat's precision).
  unsigned precision() const { return fraction_bits + 1; }
  /// Bytes one element takes in a dense literal's storage.
  unsigned storageBytes() const { return (bits + 7) / 8; }
};

/// The layout of the float type spelled `name`; nullptr if not a float type
/// this project models.
const FloatFormat *floatFormat(std::string_view name);

/// Whether `bits` encode a NaN of `format`.
bool isNanBits(uint64_t bits, const FloatFormat &format);
/// Whether `bits` encode an infinity of `format`.
bool isInfBits(uint64_t bits, const FloatFormat &format);
/// Whether `bits` encode a zero (of either sign) of `format`.
bool isZeroBits(uint64_t bits, const FloatFormat &format);
/// Whether the sign bit of `bits` is set.
bool signBit(uint64_t bits, const FloatFormat &format);

/// The value `bits` encode (exact: every format here is no wider than f64;
/// a NaN decodes to a quiet NaN of the same sign).
double decodeFloat(uint64_t bits, const FloatFormat &format);

/// The bits of `value` rounded to `format` (nearest, ties to even; overflow
/// as LLVM's APFloat). A NaN becomes the format's quiet NaN of that sign.
uint64_t encodeFloat(double value, const FloatFormat &format);

/// A finite nonzero value of `format` as significand * 2^exponent, the
/// significand an integer with the implicit bit; false for zeros, NaNs and
/// infinities. The exact form printing starts from.
bool decomposeFloat(uint64_t bits, const FloatFormat &format,
                    uint64_t &significand, int &exponent);

/// The largest finite value of `format`, as bits (positive).
uint64_t largestFiniteBits(const FloatFormat &format);

} // namespace shardlab
