#include "rules/rule_builder.h"

namespace shardlab {

namespace {

std::vector<OpShardingRule::TensorMapping>
emptyMappings(const std::vector<int64_t> &ranks) {
  std::vector<OpShardingRule::TensorMapping> mappings;
  mappings.reserve(ranks.size());
  for (int64_t rank : ranks)
    mappings.emplace_back(static_cast<size_t>(rank > 0 ? rank : 0));
  return mappings;
}

// Gives every unmapped dimension of `mappings` a fresh size-1 factor.
void fillUnmapped(std::vector<OpShardingRule::TensorMapping> &mappings,
                  std::vector<int64_t> &sizes) {
  for (OpShardingRule::TensorMapping &mapping : mappings)
    for (OpShardingRule::DimMapping &dim : mapping)
      if (dim.empty()) {
        dim.push_back(static_cast<int64_t>(sizes.size()));
        sizes.push_back(1);
      }
}

} // namespace

RuleBuilder::RuleBuilder(const std::vector<int64_t> &operand_ranks,
                         const std::vector<int64_t> &result_ranks) {
  rule_.operands = emptyMappings(operand_ranks);
  rule_.results = emptyMappings(result_ranks);
}

int64_t RuleBuilder::reserveFactor(int64_t size, FactorType type,
                                   bool blocked) {
  int64_t index = static_cast<int64_t>(rule_.factor_sizes.size());
  rule_.factor_sizes.push_back(size);
  if (blocked)
    rule_.blocked_propagation.push_back(index);
  switch (type) {
  case FactorType::Reduction:
    rule_.reduction.push_back(index);
    break;
  case FactorType::NeedReplication:
    rule_.need_replication.push_back(index);
    break;
  case FactorType::Permutation:
    rule_.permutation.push_back(index);
    break;
  case FactorType::PassThrough:
    break;
  }
  return index;
}

void RuleBuilder::mapDims(std::vector<OpShardingRule::TensorMapping> &mappings,
                          const std::vector<int64_t> &dims, int64_t factor,
                          int64_t size) {
  if (dims.empty())
    return;
  if (dims.size() != mappings.size()) {
    valid_ = false;
    return;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == kNullDim)
      continue;
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(mappings[i].size())) {
      valid_ = false;
      continue;
    }
    OpShardingRule::DimMapping &mapped = mappings[i][dims[i]];
    if (size == 1 && !mapped.empty())
      continue;
    mapped.push_back(factor);
  }
}

void RuleBuilder::mapDimOfAll(
    std::vector<OpShardingRule::TensorMapping> &mappings, int64_t dim,
    int64_t factor) {
  for (OpShardingRule::TensorMapping &mapping : mappings) {
    if (mapping.empty())
      continue; // scalar
    if (dim < 0 || dim >= static_cast<int64_t>(mapping.size())) {
      valid_ = false;
      continue;
    }
    mapping[dim].push_back(factor);
  }
}

RuleBuilder &RuleBuilder::addFactor(const std::vector<int64_t> &operand_dims,
                                    const std::vector<int64_t> &result_dims,
                                    int64_t size, FactorType type,
                                    bool blocked) {
  int64_t factor = reserveFactor(size, type, blocked);
  mapDims(rule_.operands, operand_dims, factor, size);
  mapDims(rule_.results, result_dims, factor, size);
  return *this;
}

RuleBuilder &RuleBuilder::addFactorToAll(int64_t dim, int64_t size,
                                         FactorType type, bool blocked) {
  int64_t factor = reserveFactor(size, type, blocked);
  mapDimOfAll(rule_.operands, dim, factor);
  mapDimOfAll(rule_.results, dim, factor);
  return *this;
}

RuleBuilder &RuleBuilder::addFactorToAllOperands(int64_t dim, int64_t size,
                                                 FactorType type,
                                                 bool blocked) {
  mapDimOfAll(rule_.operands, dim, reserveFactor(size, type, blocked));
  return *this;
}

RuleBuilder &RuleBuilder::addFactorToAllResults(int64_t dim, int64_t size,
                                                FactorType type, bool blocked) {
  mapDimOfAll(rule_.results, dim, reserveFactor(size, type, blocked));
  return *this;
}

RuleBuilder &
RuleBuilder::addPointwise(const std::vector<int64_t> &shape,
                          const TypeOfDim &type_of,
                          const std::function<bool(FactorType)> &blocked_of) {
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    int64_t d = static_cast<int64_t>(dim);
    FactorType type = type_of ? type_of(d) : FactorType::PassThrough;
    addFactorToAll(d, shape[dim], type, blocked_of && blocked_of(type));
  }
  return *this;
}

RuleBuilder &
RuleBuilder::addPointwiseIf(const std::vector<int64_t> &shape,
                            const std::function<bool(int64_t)> &keep,
                            const TypeOfDim &type_of) {
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    int64_t d = static_cast<int64_t>(dim);
    if (keep(d))
      addFactorToAll(d, shape[dim],
                     type_of ? type_of(d) : FactorType::PassThrough);
  }
  return *this;
}

RuleBuilder &RuleBuilder::addPointwiseWithDiffTypeForMismatch(
    const std::vector<int64_t> &in_shape, const std::vector<int64_t> &out_shape,
    FactorType mismatch_type, bool mismatch_blocked) {
  if (in_shape.size() != out_shape.size()) {
    valid_ = false;
    return *this;
  }
  for (size_t dim = 0; dim < in_shape.size(); ++dim) {
    int64_t d = static_cast<int64_t>(dim);
    if (in_shape[dim] == out_shape[dim])
      addFactorToAll(d, in_shape[dim]);
    else
      addFactorToAll(d, in_shape[dim], mismatch_type, mismatch_blocked);
  }
  return *this;
}

std::optional<OpShardingRule> RuleBuilder::build() {
  if (!valid_)
    return std::nullopt;
  fillUnmapped(rule_.operands, rule_.factor_sizes);
  fillUnmapped(rule_.results, rule_.factor_sizes);
  valid_ = false; // spent
  return std::move(rule_);
}

std::optional<OpShardingRule>
pointwiseRule(const std::vector<int64_t> &operand_ranks,
              const std::vector<int64_t> &result_ranks,
              const std::vector<int64_t> &shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  OpShardingRule rule;
  rule.factor_sizes = shape;
  for (const auto *ranks : {&operand_ranks, &result_ranks}) {
    auto &mappings = ranks == &operand_ranks ? rule.operands : rule.results;
    for (int64_t tensor_rank : *ranks) {
      if (tensor_rank > rank)
        return std::nullopt;
      OpShardingRule::TensorMapping mapping;
      for (int64_t dim = 0; dim < tensor_rank; ++dim)
        mapping.push_back({dim});
      mappings.push_back(std::move(mapping));
    }
  }
  return rule;
}

} // namespace shardlab
