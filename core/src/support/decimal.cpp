#include "support/decimal.h"

#include <fast_float/fast_float.h>

#include <cstdlib>
#include <string>
#include <system_error>

namespace shardlab {

double parseDecimal(std::string_view text) {
  double value = 0;
  const char *end = text.data() + text.size();
  auto [stop, error] = fast_float::from_chars(text.data(), end, value);
  if (error == std::errc() && stop == end)
    return value;
  // Out of range, a leading '+', hex: what the C library makes of it.
  return std::strtod(std::string(text).c_str(), nullptr);
}

} // namespace shardlab
