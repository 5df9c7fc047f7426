// Internal: one evaluator per conformance-vector group.
#pragma once

#include "vector_cases.h"

namespace shardlab::conformance {

using GroupFn = cost::Result<double> (*)(const nlohmann::json &setup,
                                         const nlohmann::json &query);

cost::Result<double> NearestGroup(const nlohmann::json &,
                                  const nlohmann::json &);
cost::Result<double> GridSnapGroup(const nlohmann::json &,
                                   const nlohmann::json &);
cost::Result<double> WeightedGroup(const nlohmann::json &,
                                   const nlohmann::json &);
cost::Result<double> UserTableGroup(const nlohmann::json &,
                                    const nlohmann::json &);
cost::Result<double> PermuteGroup(const nlohmann::json &,
                                  const nlohmann::json &);
cost::Result<double> DefaultCollectiveGroup(const nlohmann::json &,
                                            const nlohmann::json &);
cost::Result<double> MatmulUserGroup(const nlohmann::json &,
                                     const nlohmann::json &);
cost::Result<double> MatmulDefaultGroup(const nlohmann::json &,
                                        const nlohmann::json &);
cost::Result<double> MatmulNodeCostGroup(const nlohmann::json &,
                                         const nlohmann::json &);
cost::Result<double> SolRingGroup(const nlohmann::json &,
                                  const nlohmann::json &);
cost::Result<double> SolPlatformGroup(const nlohmann::json &,
                                      const nlohmann::json &);
cost::Result<double> SolIntraNodeGroup(const nlohmann::json &,
                                       const nlohmann::json &);
cost::Result<double> DcnCollectiveGroup(const nlohmann::json &,
                                        const nlohmann::json &);
cost::Result<double> DcnPermuteGroup(const nlohmann::json &,
                                     const nlohmann::json &);
cost::Result<double> NodeCostRulesGroup(const nlohmann::json &,
                                        const nlohmann::json &);

} // namespace shardlab::conformance
