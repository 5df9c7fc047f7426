// Float literals as MLIR reads and writes them, bit for bit.
//
// Writing (MLIR's printFloatValue): six significant digits in exponent form
// when they read back to the same bits, else LLVM APFloat's default form
// (up to 9 digits for f32, 17 for f64; exponent form only past three
// padding zeros), else the bits in hex (infinities, NaNs, and integral
// values the default form writes without a '.'):
//
//   f32 1.0          -> "1.000000e+00"
//   f32 2.38171506   -> "2.38171506"       (2.381720e+00 reads back
//   differently) f32 1e-6         -> "9.99999997E-7" f64 1e-6         ->
//   "9.9999999999999995E-7" f16 0.1          -> "9.997550e-02"     (APFloat
//   truncates before rounding) f32 123456792.0  -> "0x4CEB79A3" bf16 -inf ->
//   "0xFF80"
//
// Reading (MLIR's parser): a decimal literal becomes the nearest f64, which
// is then rounded to the element type (ties to even), as MLIR does.
#pragma once

#include "shardlab/ir/float_format.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace shardlab {

/// MLIR's spelling of the `format` value whose bits are `bits`.
std::string formatFloatLiteral(uint64_t bits, const FloatFormat &format);

/// LLVM's APFloat::toString of a finite value: at most `precision`
/// significant digits (0: enough to read back), exponent form when more
/// than `max_padding` zeros would be written (0: always), and, unless
/// `truncate_zero`, trailing zeros up to the precision and a lower-case 'e'.
std::string apfloatToString(uint64_t bits, const FloatFormat &format,
                            unsigned precision, unsigned max_padding,
                            bool truncate_zero);

/// The bits MLIR's parser gives a decimal literal of `format`: nearest f64,
/// then nearest value of the format.
uint64_t floatBitsOfLiteral(std::string_view decimal,
                            const FloatFormat &format);

/// The bits of the value of `format` nearest to `decimal` itself (one
/// rounding, as APFloat's string constructor): the printer's read-back test.
uint64_t nearestFloatBits(std::string_view decimal, const FloatFormat &format);

/// `0x` and the bits in upper-case hex without leading zeros (APInt's C
/// literal spelling).
std::string hexBits(uint64_t bits);

} // namespace shardlab
