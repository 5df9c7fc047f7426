// ByteScan: finds bytes of interest 16 at a time, for the scans that run
// over a whole module's text (JSON escaping, the parser's type spans).
// SSE2 natively, WebAssembly SIMD in the WASM build (-msimd128); where
// neither exists, SHARDLAB_HAS_BYTE_SCAN is undefined and callers keep
// their scalar loop.
//
//   // the first '"' or '\\' among the 16 bytes at `at`, or 16 if none
//   ByteScan::Bytes b = ByteScan::load(at);
//   unsigned hits = ByteScan::mask(ByteScan::any(ByteScan::equal(b, '"'),
//                                                ByteScan::equal(b, '\\')));
//   size_t first = ByteScan::first(hits);
#pragma once

#include <cstddef>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace shardlab {

#if defined(__SSE2__) || defined(__wasm_simd128__)
#define SHARDLAB_HAS_BYTE_SCAN 1

struct ByteScan {
  static constexpr size_t kWidth = 16;
#if defined(__SSE2__)
  using Bytes = __m128i;
  static Bytes load(const char *at) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i *>(at));
  }
  static Bytes equal(Bytes bytes, char c) {
    return _mm_cmpeq_epi8(bytes, _mm_set1_epi8(c));
  }
  /// Bytes below `c` as signed chars: those >= 0x80 are negative.
  static Bytes lessSigned(Bytes bytes, char c) {
    return _mm_cmplt_epi8(bytes, _mm_set1_epi8(c));
  }
  static Bytes any(Bytes a, Bytes b) { return _mm_or_si128(a, b); }
  /// Bit i set when byte i matched.
  static unsigned mask(Bytes matches) {
    return static_cast<unsigned>(_mm_movemask_epi8(matches));
  }
#else
  using Bytes = v128_t;
  static Bytes load(const char *at) { return wasm_v128_load(at); }
  static Bytes equal(Bytes bytes, char c) {
    return wasm_i8x16_eq(bytes, wasm_i8x16_splat(c));
  }
  static Bytes lessSigned(Bytes bytes, char c) {
    return wasm_i8x16_lt(bytes, wasm_i8x16_splat(c));
  }
  static Bytes any(Bytes a, Bytes b) { return wasm_v128_or(a, b); }
  static unsigned mask(Bytes matches) {
    return static_cast<unsigned>(wasm_i8x16_bitmask(matches));
  }
#endif
  /// The index of the first match in a mask, or kWidth when none.
  static size_t first(unsigned mask) {
    return mask ? static_cast<size_t>(__builtin_ctz(mask)) : kWidth;
  }
};
#endif

/// Whether every byte of `text` is below 0x80 (the WASM binding's replies:
/// an ASCII reply is its own Latin-1 text). A byte's high bit is its sign,
/// so the mask of the bytes themselves flags the others, 64 bytes a step.
inline bool isAscii(std::string_view text) {
  const char *at = text.data();
  const char *const end = at + text.size();
#ifdef SHARDLAB_HAS_BYTE_SCAN
  constexpr size_t kWidth = ByteScan::kWidth;
  for (; static_cast<size_t>(end - at) >= 4 * kWidth; at += 4 * kWidth) {
    ByteScan::Bytes bytes = ByteScan::any(
        ByteScan::any(ByteScan::load(at), ByteScan::load(at + kWidth)),
        ByteScan::any(ByteScan::load(at + 2 * kWidth),
                      ByteScan::load(at + 3 * kWidth)));
    if (ByteScan::mask(bytes) != 0)
      return false;
  }
#endif
  for (; at < end; ++at)
    if (static_cast<unsigned char>(*at) >= 0x80)
      return false;
  return true;
}

} // namespace shardlab
