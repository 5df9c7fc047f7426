// Non-template helpers of the Euclidean interpolators.
#include "shardlab/cost/interpolator.h"

namespace shardlab::cost {

int64_t nextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n && p < (int64_t{1} << 62))
    p <<= 1;
  return p;
}

int64_t prevPowerOfTwo(int64_t n) { return nextPowerOfTwo((n >> 1) + 1); }

std::pair<int64_t, int64_t> gridBracket(int64_t x, int64_t step, int64_t pow2) {
  if (step > 0)
    return {x & ~(step - 1), (x + step) & ~(step - 1)};
  if (pow2 > 0)
    return {prevPowerOfTwo(x), nextPowerOfTwo(x)};
  return {x, x};
}

std::string pointToString(const int64_t *coords, size_t n) {
  std::string out = "(";
  for (size_t i = 0; i < n; ++i) {
    if (i > 0)
      out += ", ";
    out += std::to_string(coords[i]);
  }
  return out + ")";
}

} // namespace shardlab::cost
