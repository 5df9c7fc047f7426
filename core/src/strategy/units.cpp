// Spelling numbers in the strategy texts (see units.h).
#include "strategy/units.h"

#include <cstdio>

namespace shardlab::strategy {

std::string formatNumber(const char *pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string msText(double us) { return formatNumber("%.3f", us / 1000); }

std::string msWithUnit(double us) { return msText(us) + " ms"; }

std::string mibText(int64_t bytes) {
  return formatNumber("%.1f", double(bytes) / (1 << 20)) + " MiB";
}

std::string gibText(int64_t bytes) {
  return formatNumber("%.2f", double(bytes) / double(int64_t(1) << 30));
}

} // namespace shardlab::strategy
