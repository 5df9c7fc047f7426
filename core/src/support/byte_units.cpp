// Byte counts as people read them (see byte_units.h).
#include "support/byte_units.h"

#include <cstdio>

namespace shardlab {

std::string bytesText(int64_t bytes) {
  char text[64];
  if (bytes >= (int64_t(1) << 30))
    std::snprintf(text, sizeof text, "%.2f GiB",
                  double(bytes) / double(int64_t(1) << 30));
  else if (bytes >= (int64_t(1) << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / (1 << 20));
  else
    std::snprintf(text, sizeof text, "%lld B", (long long)bytes);
  return text;
}

} // namespace shardlab
