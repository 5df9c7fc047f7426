// Uniformly quantized element types (`!quant.uniform<i8:f32, 0.0039:-128>`)
// as the interpreter runs them: the storage integer, the expressed float
// type, one scale and zero point for the whole tensor.
//
//   quantize(x)   = clamp(round_nearest_even(x / scale) + zero_point,
//                         storage_min, storage_max), a NaN to 0
//   dequantize(q) = (q - zero_point) * scale, in the expressed type
//
// An op on quantized tensors runs on their dequantized values and its
// results are quantized again, as the StableHLO specification defines the
// ops it does not define on the integers themselves.
#pragma once

#include <cstdint>

#include <optional>
#include <string>
#include <string_view>

namespace shardlab::interpreter {

struct UniformQuant {
  std::string storage;   ///< i8, i32, ui8, ...
  std::string expressed; ///< f32, ...
  unsigned storage_bits = 0;
  bool storage_unsigned = false;
  int64_t storage_min = 0, storage_max = 0;
  double scale = 1;
  int64_t zero_point = 0;
};

/// The parameters of a per-tensor `!quant.uniform<...>` element type;
/// nullopt for any other type (per-axis quantization included).
std::optional<UniformQuant> uniformQuant(std::string_view element_text);

} // namespace shardlab::interpreter
