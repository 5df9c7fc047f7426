// stablehlo.rng_bit_generator with algorithm THREE_FRY (and DEFAULT, which
// the implementation chooses: THREE_FRY here), as XLA expands THREE_FRY
// (the StableHLO spec leaves the bits to the implementation; XLA's are the
// ones JAX's expected values hold). The state is [key, counter]; element i
// of the output (row-major) encrypts counter + i with Threefry-2x32 (20
// rounds) under the key, the 64-bit words split into (low, high) 32-bit
// halves; 32-bit outputs take the two halves of ceil(n/2) counters, the
// first halves first. The new state is [key, counter + number of counters].
//
//   state [3, 3], one u64 output  ->  state [3, 4], threefry(3, key 3)
#include "ops.h"

#include "ir/op_properties.h"
#include "rules/stablehlo_attrs.h"

#include <array>

namespace shardlab::interpreter::detail {
namespace {

using Pair = std::array<uint32_t, 2>;

uint32_t rotateLeft(uint32_t v, int by) { return (v << by) | (v >> (32 - by)); }

// Threefry-2x32 with 20 rounds: the key schedule injects the key words and
// their parity (0x1BD11BDA ^ k0 ^ k1) every four rounds.
Pair threefry2x32(Pair x, Pair key) {
  constexpr std::array<int, 8> kRotations = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::array<uint32_t, 3> ks = {key[0], key[1],
                                      0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (uint32_t group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = rotateLeft(x[1], kRotations[size_t((group % 2) * 4 + r)]);
      x[1] ^= x[0];
    }
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + group + 1;
  }
  return x;
}

Pair halves(uint64_t v) { return {uint32_t(v), uint32_t(v >> 32)}; }

} // namespace

Result<std::vector<Tensor>> rngBitGenerator(const Operation &op,
                                            const Tensor &state,
                                            const std::vector<Type> &results) {
  const std::optional<std::string_view> algorithm =
      stablehloEnum(rules::findAttr(op, "rng_algorithm"), "rng_algorithm");
  // DEFAULT is the implementation's choice (the spec's words); this one
  // chooses THREE_FRY. XLA's CPU and GPU backends choose Philox, so a
  // DEFAULT module's bits differ from theirs (not its partitioned run's).
  if (!algorithm || (*algorithm != "THREE_FRY" && *algorithm != "DEFAULT"))
    return opError(op, "algorithm " + std::string(algorithm.value_or("?")) +
                           " is not run by the interpreter (THREE_FRY and "
                           "DEFAULT are)");
  if (results.size() != 2 || state.rank() != 1 || state.size() < 2 ||
      !state.isInteger() || state.layout().part_bits != 64)
    return opError(op, "expects a state of at least two 64-bit words");
  Tensor bits = Tensor::zeros(results[1]);
  const unsigned width = bits.layout().part_bits;
  if (!bits.isInteger() || (width != 32 && width != 64))
    return opError(op, "output of " + results[1]->element->text +
                           " is not run by the interpreter (32- and 64-bit "
                           "integers are)");
  const Pair key = halves(uint64_t(state.integer(0)));
  const uint64_t counter = uint64_t(state.integer(1));
  const int64_t n = bits.size();
  const int64_t counters = width == 64 ? n : (n + 1) / 2;
  for (int64_t i = 0; i < counters; ++i) {
    const Pair out = threefry2x32(halves(counter + uint64_t(i)), key);
    if (width == 64) {
      bits.setInteger(i, uint64_t(out[0]) | (uint64_t(out[1]) << 32));
      continue;
    }
    bits.setInteger(i, out[0]);
    if (counters + i < n)
      bits.setInteger(counters + i, out[1]);
  }
  Tensor next = state;
  next.setInteger(1, counter + uint64_t(counters));
  return std::vector<Tensor>{std::move(next), std::move(bits)};
}

} // namespace shardlab::interpreter::detail
