// memcmp for the WASM build. Emscripten 3.1.6's libc (musl) compares a
// byte at a time, and libc++ sends std::equal over integers, string_view
// == and vector == on trivially comparable types here: the verifier's memo
// keys (up to 16 words) made verifyFuncValue 1.4% of the WASM check profile
// against 0.2% natively (glibc compares 32 bytes at a time). This compares
// 8 bytes at a time; WebAssembly loads need no alignment. Linked into the
// WASM module only, compiled -fno-builtin (see cmake/modules/wasm.cmake);
// libc's memcmp.o is then never pulled from the archive.
#if defined(__wasm__)
#include <cstddef>
#include <cstdint>

namespace {
using Word __attribute__((aligned(1), may_alias)) = uint64_t;

int byteDifference(const unsigned char *l, const unsigned char *r) {
  return static_cast<int>(*l) - static_cast<int>(*r);
}
} // namespace

extern "C" int memcmp(const void *left, const void *right, size_t n) {
  const auto *l = static_cast<const unsigned char *>(left);
  const auto *r = static_cast<const unsigned char *>(right);
  size_t at = 0;
  for (; at + 8 <= n; at += 8) {
    const uint64_t a = *reinterpret_cast<const Word *>(l + at);
    const uint64_t b = *reinterpret_cast<const Word *>(r + at);
    if (a != b) {
      // Little-endian: the lowest differing bit is in the first differing
      // byte.
      const size_t byte = static_cast<size_t>(__builtin_ctzll(a ^ b)) / 8;
      return byteDifference(l + at + byte, r + at + byte);
    }
  }
  for (; at < n; ++at)
    if (l[at] != r[at])
      return byteDifference(l + at, r + at);
  return 0;
}
#endif
