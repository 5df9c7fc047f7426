// The stage tables the registry joins, in pipeline order. Each stage
// declares its passes (flag, summary, description, typed options, entry
// point) in <stage>/<stage>_passes.cpp, the role Shardy's passes.td plays.
#pragma once

#include "shardlab/passes/pass_registry.h"

#include <vector>

namespace shardlab {

void addImportPasses(std::vector<PassInfo> &passes);
void addPropagationPasses(std::vector<PassInfo> &passes);
void addExportPasses(std::vector<PassInfo> &passes);
void addCanonicalizePasses(std::vector<PassInfo> &passes);
void addXlaPasses(std::vector<PassInfo> &passes);
void addStrategyPasses(std::vector<PassInfo> &passes);
void addGpuPasses(std::vector<PassInfo> &passes);

} // namespace shardlab
