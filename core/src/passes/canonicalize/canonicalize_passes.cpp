// MLIR's generic clean-up passes as shardlab runs them.
#include "canonicalize_passes.h"
#include "../stages.h"

namespace shardlab {

void addCanonicalizePasses(std::vector<PassInfo> &passes) {
  const std::string_view stage = "canonicalize";
  passes.push_back(
      {"canonicalize",
       stage,
       "Canonicalize operations (reshard and collective patterns)",
       "Shardy's canonicalization patterns for sdy.reshard, the collectives "
       "and manual computations, applied until nothing changes.",
       {},
       canonicalizePass});
  passes.push_back({"symbol-dce",
                    stage,
                    "Eliminate dead private symbols",
                    "Removes the private symbols nothing refers to.",
                    {},
                    symbolDcePass});
}

} // namespace shardlab
