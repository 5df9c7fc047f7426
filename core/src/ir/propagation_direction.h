// Shardy's PropagationDirection as the integer sdy_opt's generic form and
// XLA's round trip keep ("2 : i32" is BACKWARD, in `allowed_direction` and
// in `xla.sdy.allowed_direction`), both ways.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace shardlab {

inline constexpr std::array<std::string_view, 4> kPropagationDirections = {
    "NONE", "FORWARD", "BACKWARD", "BOTH"};

/// The name of direction `number`; NONE when out of range.
inline std::string_view propagationDirectionName(int64_t number) {
  return number >= 0 && number < 4 ? kPropagationDirections[size_t(number)]
                                   : kPropagationDirections[0];
}

/// The number of direction `name`; BOTH (3) for an unknown name.
inline int64_t propagationDirectionNumber(std::string_view name) {
  for (size_t i = 0; i < kPropagationDirections.size(); ++i)
    if (kPropagationDirections[i] == name)
      return int64_t(i);
  return 3;
}

} // namespace shardlab
