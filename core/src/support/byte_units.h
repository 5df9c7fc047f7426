// Byte counts as people read them, in one place so that every report (the
// schedule's, the comparison's) spells them alike.
#pragma once

#include <cstdint>
#include <string>

namespace shardlab {

/// `bytes` in the unit that reads best: "37380 B", "12.5 MiB", "1.25 GiB".
std::string bytesText(int64_t bytes);

} // namespace shardlab
