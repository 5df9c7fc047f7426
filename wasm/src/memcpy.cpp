// memcpy for the WASM build. Emscripten 3.1.6's libc copies a byte at a
// time whenever the two pointers are not equally aligned modulo 4, which is
// most of the short copies a parser and printer make (a type's spelling
// appended to the output): memcpy was the largest single entry of the
// WASM parse + print profile. WebAssembly loads and stores need no
// alignment, so this copies with 8- and 16-byte moves, overlapping at the
// ends instead of looping over a tail. Linked into the WASM module only;
// libc's memcpy is a weak alias, so this definition takes its place.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstddef>
#include <cstdint>

namespace {
using Word __attribute__((aligned(1), may_alias)) = uint64_t;
using Half __attribute__((aligned(1), may_alias)) = uint32_t;
} // namespace

extern "C" void *memcpy(void *__restrict dest, const void *__restrict src,
                        size_t n) {
  auto *d = static_cast<unsigned char *>(dest);
  const auto *s = static_cast<const unsigned char *>(src);
  if (n <= 16) {
    if (n >= 8) {
      const uint64_t head = *reinterpret_cast<const Word *>(s);
      const uint64_t tail = *reinterpret_cast<const Word *>(s + n - 8);
      *reinterpret_cast<Word *>(d) = head;
      *reinterpret_cast<Word *>(d + n - 8) = tail;
    } else if (n >= 4) {
      const uint32_t head = *reinterpret_cast<const Half *>(s);
      const uint32_t tail = *reinterpret_cast<const Half *>(s + n - 4);
      *reinterpret_cast<Half *>(d) = head;
      *reinterpret_cast<Half *>(d + n - 4) = tail;
    } else if (n > 0) { // 1 to 3 bytes: first, middle, last
      const unsigned char first = s[0], middle = s[n / 2], last = s[n - 1];
      d[0] = first;
      d[n / 2] = middle;
      d[n - 1] = last;
    }
    return dest;
  }
  // 17 bytes or more: 16 at a time, then the last 16 (overlapping).
  const v128_t last = wasm_v128_load(s + n - 16);
  for (size_t at = 0; at + 16 < n; at += 16)
    wasm_v128_store(d + at, wasm_v128_load(s + at));
  wasm_v128_store(d + n - 16, last);
  return dest;
}
#endif
