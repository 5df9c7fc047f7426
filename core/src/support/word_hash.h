// Hashing sequences of machine words: the memo keys of propagation, rule
// lookup, explicit reshards and the verifier's fingerprints are addresses
// of uniqued attributes and types plus a few counts, so a multiply-xor per
// word hashes them in a few instructions (std::hash of a byte string ran
// over every byte).
#pragma once

#include "shardlab/support/string_hash.h" // mixWord

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace shardlab {

/// The hash of `words` after `seed`, with the high bits folded into the low
/// ones (hash tables index by the low bits).
inline size_t hashWords(std::span<const uintptr_t> words, uint64_t seed) {
  uint64_t hash = seed;
  for (uintptr_t word : words)
    hash = mixWord(hash, word);
  return static_cast<size_t>(hash ^ (hash >> 29));
}

/// Hash functor for keys that are vectors of words.
struct WordsHash {
  size_t operator()(const std::vector<uintptr_t> &words) const {
    return hashWords(words, words.size());
  }
};

} // namespace shardlab
