// Float literals spelled as bit patterns. MLIR writes a float element that
// has no decimal spelling (an infinity, a NaN) as the hexadecimal bits of its
// type: `dense<0xFF800000> : tensor<f32>` is -inf, `dense<0xFF80> :
// tensor<bf16>` too (softmax and max-reductions start from it). Reading the
// hex digits as a number instead gave 4.29e9 and 65408.
//
//   floatFromBits(0xFF800000, "f32")  == -inf
//   floatFromBits(0x7E00, "f16")      == NaN
//   floatBitsSpelling(-inf, "bf16")   == "0xFF80"
//   floatFromBits(0x7C, "f8E4M3FN")   == nullopt (layout not modelled)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardlab {

/// The value whose `element` type (f64, f32, f16, bf16) has the bit
/// pattern `bits`; nullopt for other types or bits beyond the width.
std::optional<double> floatFromBits(uint64_t bits, std::string_view element);

/// MLIR's spelling of a non-finite `value` of `element` as its bits
/// (`0x7FC00000`); nullopt for types floatFromBits does not know.
std::optional<std::string> floatBitsSpelling(double value,
                                             std::string_view element);

/// The float type of each part of a complex element type (`complex<f32>`
/// -> `f32`); `element` itself otherwise.
std::string_view complexPartType(std::string_view element);

} // namespace shardlab
