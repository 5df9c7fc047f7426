// `-sdy-populate-op-sharding-rules`: attaches the registry's sharding rule
// (`sdy.sharding_rule`) to every op in every function that has one.
#pragma once

#include "shardlab/passes/pass_registry.h"

namespace shardlab {

/// Option `conservative-propagation` (true/false) selects the conservative
/// rules. Ops that already carry a rule keep it.
bool populateOpShardingRules(Module &module, const PassOptions &options,
                             DiagnosticEngine &diags);

} // namespace shardlab
