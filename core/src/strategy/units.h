// How the strategy texts (tables, SVG, suggestions' reasons) spell numbers,
// in one place so they agree.
#pragma once

#include "support/byte_units.h"

#include <cstdint>
#include <string>

namespace shardlab::strategy {

/// `value` through a printf pattern with one double (`%.2f`).
std::string formatNumber(const char *pattern, double value);
/// Microseconds as milliseconds, three decimals: 1234.5 -> "1.234".
std::string msText(double us);
/// The same with its unit: "1.234 ms".
std::string msWithUnit(double us);
/// Bytes as MiB: "12.5 MiB".
std::string mibText(int64_t bytes);
/// Bytes as GiB, two decimals, no unit: "30.27".
std::string gibText(int64_t bytes);
// bytesText (support/byte_units.h): bytes in the unit that reads best.

} // namespace shardlab::strategy
