// Op sharding rule verification (see verify.h): Shardy's
// verifyOpShardingRuleAttr, verifyShardingRuleMapping and
// indicesSortedUniqueInBound.
#include "sharding/verify.h"
#include "shardlab/sharding/format.h"

#include <algorithm>
#include <set>

namespace shardlab {

namespace {

using TensorMapping = OpShardingRule::TensorMapping;

std::optional<std::string>
verifyDimMapping(const OpShardingRule::DimMapping &factors,
                 const std::vector<int64_t> &sizes, std::vector<bool> &inValue,
                 std::vector<bool> &seen) {
  if (factors.empty()) {
    return std::string("dim mapping must have at least one factor");
  }
  int64_t numFactors = static_cast<int64_t>(sizes.size());
  for (int64_t factor : factors) {
    if (factor < 0 || factor >= numFactors) {
      return "expecting factor indices to be within 0<=...<num_factors; "
             "received: " +
             std::to_string(factor) +
             ", num_factors: " + std::to_string(numFactors);
    }
    if (inValue[factor]) {
      return std::string("cannot reuse factors for the same tensor value");
    }
    if (sizes[factor] == 1 && factors.size() > 1) {
      return std::string("dim mapping can't have a factor of size 1 if there "
                         "are multiple factors");
    }
    inValue[factor] = true;
    seen[factor] = true;
  }
  return std::nullopt;
}

std::optional<std::string> verifyValueMapping(const ValueShapeInfo &value,
                                              const TensorMapping &mapping,
                                              const std::vector<int64_t> &sizes,
                                              std::vector<bool> &seen) {
  if (!value.isStaticRanked()) {
    return "expected a ranked tensor with a static shape. type: '" +
           value.type_text + "'";
  }
  if (mapping.size() != value.dims.size()) {
    return "mapping rank must match: " + std::to_string(mapping.size()) +
           " != " + std::to_string(value.dims.size());
  }
  std::vector<bool> inValue(sizes.size(), false);
  for (const auto &dim : mapping) {
    if (auto error = verifyDimMapping(dim, sizes, inValue, seen)) {
      return error;
    }
  }
  return std::nullopt;
}

std::optional<std::string>
verifyMappings(const std::vector<ValueShapeInfo> &values,
               const std::vector<TensorMapping> &mappings,
               const std::vector<int64_t> &sizes, const std::string &kind,
               std::vector<bool> &seen) {
  if (values.size() != mappings.size()) {
    return "number of " + kind +
           "s and mappings must match: " + std::to_string(values.size()) +
           " != " + std::to_string(mappings.size());
  }
  if (mappings.empty()) {
    return "number of " + kind +
           "s mappings cannot be 0. Op sharding rules can only be defined on "
           "operations with at least one operand and result.";
  }
  for (size_t i = 0; i < values.size(); ++i) {
    auto error = verifyValueMapping(values[i], mappings[i], sizes, seen);
    if (error) {
      std::string index = values.size() == 1 ? "" : std::to_string(i) + " ";
      return kind + " " + index + "- " + *error;
    }
  }
  return std::nullopt;
}

std::optional<std::string>
indicesSortedUniqueInBound(int64_t numFactors,
                           const std::vector<int64_t> &indices) {
  if (indices.empty()) {
    return std::nullopt;
  }
  if (!std::is_sorted(indices.begin(), indices.end())) {
    return std::string("indices of special factors must be sorted");
  }
  if (std::adjacent_find(indices.begin(), indices.end()) != indices.end()) {
    return std::string("indices of special factors must be unique");
  }
  if (indices.front() < 0) {
    return std::string("index must be non-negative");
  }
  if (indices.back() >= numFactors) {
    return "index must be less than " + std::to_string(numFactors) +
           ", got: " + std::to_string(indices.back());
  }
  return std::nullopt;
}

std::optional<std::string> verifySpecialFactors(const OpShardingRule &rule) {
  int64_t numFactors = static_cast<int64_t>(rule.factor_sizes.size());
  for (const auto *list :
       {&rule.reduction, &rule.need_replication, &rule.permutation}) {
    if (auto error = indicesSortedUniqueInBound(numFactors, *list)) {
      return error;
    }
  }
  std::set<int64_t> special(rule.reduction.begin(), rule.reduction.end());
  special.insert(rule.need_replication.begin(), rule.need_replication.end());
  special.insert(rule.permutation.begin(), rule.permutation.end());
  if (special.size() != rule.reduction.size() + rule.need_replication.size() +
                            rule.permutation.size()) {
    return std::string("a factor can only be in one of the reduction, need "
                       "replication, or permutation factor sets");
  }
  return indicesSortedUniqueInBound(numFactors, rule.blocked_propagation);
}

} // namespace

std::optional<std::string>
verifyOpShardingRule(const OpShardingRule &rule,
                     const std::vector<ValueShapeInfo> &operands,
                     const std::vector<ValueShapeInfo> &results) {
  const std::vector<int64_t> &sizes = rule.factor_sizes;
  std::vector<bool> inOperands(sizes.size(), false);
  std::vector<bool> inResults(sizes.size(), false);
  if (auto error = verifyMappings(operands, rule.operands, sizes, "operand",
                                  inOperands)) {
    return error;
  }
  if (auto error =
          verifyMappings(results, rule.results, sizes, "result", inResults)) {
    return error;
  }
  for (size_t f = 0; f < sizes.size(); ++f) {
    if (!inOperands[f] && !inResults[f]) {
      return "has factor " + factorSymbol(static_cast<int64_t>(f)) + "=" +
             std::to_string(sizes[f]) +
             " that isn't used in operand and result mappings";
    }
  }
  if (auto error = verifySpecialFactors(rule)) {
    return error;
  }
  for (int64_t factor : rule.reduction) {
    if (inResults[factor]) {
      return std::string("reduction factor cannot be in result mappings");
    }
  }
  return std::nullopt;
}

} // namespace shardlab
