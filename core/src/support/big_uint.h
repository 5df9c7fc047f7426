// An unsigned integer of any size, with only the operations that printing a
// binary float in exact decimal needs: a float is significand * 2^e, and for
// e < 0 its decimal digits are those of significand * 5^-e. The smallest
// f64 subnormal needs 2,500 bits; no library of ours has such integers, and
// LLVM's APFloat, whose spelling the printer must reproduce digit for digit,
// works the same way.
//
//   BigUint n(3); n.multiplyByPowerOf5(2); n.toDecimal() == "75"
//   n.shiftLeft(4);                        n.toDecimal() == "1200"
//   n.divideByPowerOf10(3);                n.toDecimal() == "1" (truncates)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardlab {

class BigUint {
public:
  explicit BigUint(uint64_t value = 0);

  bool isZero() const { return limbs_.empty(); }
  /// Bits up to and including the highest set bit (0 for zero).
  unsigned bitLength() const;
  void shiftLeft(unsigned bits);
  void multiplyBySmall(uint32_t factor);
  void addSmall(uint32_t addend);
  void multiplyByPowerOf5(unsigned exponent);
  void multiplyByPowerOf10(unsigned exponent);
  /// Divides in place, truncating; returns the remainder.
  uint32_t divideBySmall(uint32_t divisor);
  /// Divides by 10^exponent in place, truncating.
  void divideByPowerOf10(unsigned exponent);
  /// -1, 0 or 1 as this is below, equal to or above `other`.
  int compare(const BigUint &other) const;
  /// The decimal digits, most significant first ("0" for zero).
  std::string toDecimal() const;

private:
  void trim();
  std::vector<uint32_t> limbs_; ///< least significant first, no leading zeros
};

} // namespace shardlab
