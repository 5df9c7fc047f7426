// Internal: one evaluator per conformance-vector group.
#pragma once

#include "vector_cases.h"

namespace shardlab::conformance {

using GroupFn = shardlab::Result<double> (*)(const nlohmann::json &setup,
                                             const nlohmann::json &query);

shardlab::Result<double> NearestGroup(const nlohmann::json &,
                                      const nlohmann::json &);
shardlab::Result<double> GridSnapGroup(const nlohmann::json &,
                                       const nlohmann::json &);
shardlab::Result<double> WeightedGroup(const nlohmann::json &,
                                       const nlohmann::json &);
shardlab::Result<double> UserTableGroup(const nlohmann::json &,
                                        const nlohmann::json &);
shardlab::Result<double> PermuteGroup(const nlohmann::json &,
                                      const nlohmann::json &);
shardlab::Result<double> DefaultCollectiveGroup(const nlohmann::json &,
                                                const nlohmann::json &);
shardlab::Result<double> MatmulUserGroup(const nlohmann::json &,
                                         const nlohmann::json &);
shardlab::Result<double> MatmulDefaultGroup(const nlohmann::json &,
                                            const nlohmann::json &);
shardlab::Result<double> MatmulNodeCostGroup(const nlohmann::json &,
                                             const nlohmann::json &);
shardlab::Result<double> SolRingGroup(const nlohmann::json &,
                                      const nlohmann::json &);
shardlab::Result<double> SolPlatformGroup(const nlohmann::json &,
                                          const nlohmann::json &);
shardlab::Result<double> SolIntraNodeGroup(const nlohmann::json &,
                                           const nlohmann::json &);
shardlab::Result<double> DcnCollectiveGroup(const nlohmann::json &,
                                            const nlohmann::json &);
shardlab::Result<double> DcnPermuteGroup(const nlohmann::json &,
                                         const nlohmann::json &);
shardlab::Result<double> NodeCostRulesGroup(const nlohmann::json &,
                                            const nlohmann::json &);

} // namespace shardlab::conformance
