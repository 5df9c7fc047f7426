// Hashing strings a machine word at a time: the tables keyed by names (the
// parser's SSA names and type spellings, interned strings, types, op
// names) hash short strings millions of times per module, and std::hash
// (MurmurHash over every byte, out of line) was a tenth of parsing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace shardlab {

/// One step: for a given word it is a bijection of the hash, so changing
/// any one word of a sequence always changes the result.
constexpr uint64_t mixWord(uint64_t hash, uint64_t word) {
  return (hash ^ word) * 0x9E3779B97F4A7C15ull;
}

/// The top `bits` bits of `key` times 2^64 / golden ratio (Fibonacci
/// hashing): a table index of `bits` bits in which keys that differ only
/// in their low bits (neighbouring addresses) or only in their high bits
/// land apart. `bits` is 1-63.
constexpr size_t fibonacciSlot(uint64_t key, unsigned bits) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/// The hash of `text`: 8 bytes per step; the last 1-7 bytes are read as
/// two overlapping 4-byte words (or three single bytes) so that no byte
/// past the end is touched. The length is the seed, so "a" and "a\0" differ.
inline size_t hashString(std::string_view text) {
  const char *at = text.data();
  size_t left = text.size();
  uint64_t hash = mixWord(0x243F6A8885A308D3ull, left);
  for (; left >= 8; at += 8, left -= 8) {
    uint64_t word;
    std::memcpy(&word, at, 8);
    hash = mixWord(hash, word);
  }
  if (left >= 4) {
    uint32_t first, last;
    std::memcpy(&first, at, 4);
    std::memcpy(&last, at + left - 4, 4);
    hash = mixWord(hash, (uint64_t{first} << 32) | last);
  } else if (left > 0) {
    const auto byte = [&](size_t i) {
      return uint64_t{static_cast<unsigned char>(at[i])};
    };
    hash =
        mixWord(hash, (byte(0) << 16) | (byte(left / 2) << 8) | byte(left - 1));
  }
  // Tables index by the low bits; the multiply moved the entropy up.
  return static_cast<size_t>(hash ^ (hash >> 32));
}

/// Whether `a` and `b` hold the same characters, compared a word at a time
/// inline: hash tables compare keys on every hit, and a call to memcmp per
/// compare (a byte loop in the WASM build's libc) cost more than the hash.
inline bool equalStrings(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  const char *x = a.data();
  const char *y = b.data();
  size_t left = a.size();
  for (; left >= 8; x += 8, y += 8, left -= 8) {
    uint64_t u, v;
    std::memcpy(&u, x, 8);
    std::memcpy(&v, y, 8);
    if (u != v)
      return false;
  }
  if (left >= 4) { // two overlapping 4-byte words cover the 4-7 left
    uint32_t u1, v1, u2, v2;
    std::memcpy(&u1, x, 4);
    std::memcpy(&v1, y, 4);
    std::memcpy(&u2, x + left - 4, 4);
    std::memcpy(&v2, y + left - 4, 4);
    return u1 == v1 && u2 == v2;
  }
  for (size_t i = 0; i < left; ++i)
    if (x[i] != y[i])
      return false;
  return true;
}

/// Equality functor to go with StringHash.
struct StringEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const {
    return equalStrings(a, b);
  }
};

/// Hash functor for string keys (transparent: a std::string-keyed table
/// can be searched with a string_view, without building a string).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return hashString(text); }
  size_t operator()(const std::string &text) const { return hashString(text); }
  size_t operator()(const char *text) const { return hashString(text); }
};

} // namespace shardlab
