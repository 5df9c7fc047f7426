#include "support/big_uint.h"

#include <algorithm>

namespace shardlab {

namespace {

constexpr uint32_t kPow5_13 = 1220703125; // 5^13, the largest below 2^32
constexpr uint32_t kPow10_9 = 1000000000; // 10^9

uint32_t smallPowerOf10(unsigned exponent) {
  uint32_t p = 1;
  while (exponent--)
    p *= 10;
  return p;
}

} // namespace

BigUint::BigUint(uint64_t value) {
  while (value) {
    limbs_.push_back(static_cast<uint32_t>(value));
    value >>= 32;
  }
}

void BigUint::trim() {
  while (!limbs_.empty() && limbs_.back() == 0)
    limbs_.pop_back();
}

unsigned BigUint::bitLength() const {
  if (limbs_.empty())
    return 0;
  uint32_t top = limbs_.back();
  unsigned bits = 0;
  while (top) {
    ++bits;
    top >>= 1;
  }
  return static_cast<unsigned>(32 * (limbs_.size() - 1)) + bits;
}

void BigUint::shiftLeft(unsigned bits) {
  if (limbs_.empty() || bits == 0)
    return;
  const unsigned whole = bits / 32, part = bits % 32;
  limbs_.insert(limbs_.begin(), whole, 0);
  if (part == 0)
    return;
  uint32_t carry = 0;
  for (size_t i = whole; i < limbs_.size(); ++i) {
    uint32_t limb = limbs_[i];
    limbs_[i] = (limb << part) | carry;
    carry = limb >> (32 - part);
  }
  if (carry)
    limbs_.push_back(carry);
}

void BigUint::multiplyBySmall(uint32_t factor) {
  uint64_t carry = 0;
  for (uint32_t &limb : limbs_) {
    uint64_t product = uint64_t{limb} * factor + carry;
    limb = static_cast<uint32_t>(product);
    carry = product >> 32;
  }
  if (carry)
    limbs_.push_back(static_cast<uint32_t>(carry));
  trim();
}

void BigUint::addSmall(uint32_t addend) {
  uint64_t carry = addend;
  for (size_t i = 0; carry && i < limbs_.size(); ++i) {
    uint64_t sum = uint64_t{limbs_[i]} + carry;
    limbs_[i] = static_cast<uint32_t>(sum);
    carry = sum >> 32;
  }
  if (carry)
    limbs_.push_back(static_cast<uint32_t>(carry));
}

void BigUint::multiplyByPowerOf5(unsigned exponent) {
  for (; exponent >= 13; exponent -= 13)
    multiplyBySmall(kPow5_13);
  uint32_t rest = 1;
  while (exponent--)
    rest *= 5;
  multiplyBySmall(rest);
}

void BigUint::multiplyByPowerOf10(unsigned exponent) {
  multiplyByPowerOf5(exponent);
  shiftLeft(exponent);
}

uint32_t BigUint::divideBySmall(uint32_t divisor) {
  uint64_t remainder = 0;
  for (size_t i = limbs_.size(); i-- > 0;) {
    uint64_t current = (remainder << 32) | limbs_[i];
    limbs_[i] = static_cast<uint32_t>(current / divisor);
    remainder = current % divisor;
  }
  trim();
  return static_cast<uint32_t>(remainder);
}

void BigUint::divideByPowerOf10(unsigned exponent) {
  // floor(floor(a / b) / c) == floor(a / (b * c)) for positive b, c.
  for (; exponent >= 9; exponent -= 9)
    divideBySmall(kPow10_9);
  if (exponent)
    divideBySmall(smallPowerOf10(exponent));
}

int BigUint::compare(const BigUint &other) const {
  if (limbs_.size() != other.limbs_.size())
    return limbs_.size() < other.limbs_.size() ? -1 : 1;
  for (size_t i = limbs_.size(); i-- > 0;)
    if (limbs_[i] != other.limbs_[i])
      return limbs_[i] < other.limbs_[i] ? -1 : 1;
  return 0;
}

std::string BigUint::toDecimal() const {
  if (limbs_.empty())
    return "0";
  BigUint rest = *this;
  std::string reversed;
  while (!rest.isZero()) {
    uint32_t chunk = rest.divideBySmall(kPow10_9);
    for (int i = 0; i < 9 && (chunk || !rest.isZero()); ++i) {
      reversed.push_back(static_cast<char>('0' + chunk % 10));
      chunk /= 10;
    }
  }
  std::reverse(reversed.begin(), reversed.end());
  return reversed;
}

} // namespace shardlab
