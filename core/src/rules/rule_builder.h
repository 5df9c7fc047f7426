// Building blocks for op sharding rules: a builder that adds factors (with
// sizes and kinds) to the dimensions of an op's operands and results, the way
// Shardy's OpShardingRuleBuilder does, so that every rule in the registry
// reads as a short list of `addFactor` calls and prints exactly as Shardy's.
#pragma once

#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace shardlab {

/// A dimension index meaning "this tensor has no dimension for the factor".
inline constexpr int64_t kNullDim = -1;

/// How a factor may be sharded (Shardy's FactorType).
enum class FactorType { PassThrough, Reduction, NeedReplication, Permutation };

/// Accumulates factors and their dimension mappings for one op, then builds
/// the OpShardingRule. Dimensions that never get a factor receive a fresh
/// size-1 factor in build(). A dimension index out of range makes the
/// builder invalid (build() returns nullopt) instead of crashing.
class RuleBuilder {
public:
  RuleBuilder(const std::vector<int64_t> &operand_ranks,
              const std::vector<int64_t> &result_ranks);

  /// Adds a factor mapped to `operand_dims[i]` of operand i and
  /// `result_dims[j]` of result j (kNullDim: unmapped). A size-1 factor is not
  /// appended to a dimension that already has a factor. An empty list means
  /// "no dimension" for every operand (or result).
  RuleBuilder &addFactor(const std::vector<int64_t> &operand_dims,
                         const std::vector<int64_t> &result_dims, int64_t size,
                         FactorType type = FactorType::PassThrough,
                         bool blocked = false);
  /// Adds a factor mapped to dimension `dim` of every operand and result of
  /// rank >= 1 (pointwise style; scalars stay `[]`).
  RuleBuilder &addFactorToAll(int64_t dim, int64_t size,
                              FactorType type = FactorType::PassThrough,
                              bool blocked = false);
  /// As addFactorToAll, for the operands (results) only.
  RuleBuilder &addFactorToAllOperands(int64_t dim, int64_t size,
                                      FactorType type = FactorType::PassThrough,
                                      bool blocked = false);
  RuleBuilder &addFactorToAllResults(int64_t dim, int64_t size,
                                     FactorType type = FactorType::PassThrough,
                                     bool blocked = false);

  using TypeOfDim = std::function<FactorType(int64_t dim)>;
  /// One addFactorToAll per dimension of `shape`, typed by `type_of`,
  /// blocked where `blocked_of(type)` says so.
  RuleBuilder &
  addPointwise(const std::vector<int64_t> &shape,
               const TypeOfDim &type_of = nullptr,
               const std::function<bool(FactorType)> &blocked_of = nullptr);
  /// addFactorToAll for the dimensions of `shape` satisfying `keep`.
  RuleBuilder &addPointwiseIf(const std::vector<int64_t> &shape,
                              const std::function<bool(int64_t)> &keep,
                              const TypeOfDim &type_of = nullptr);
  /// Pointwise over `in_shape`; a dimension whose size differs in
  /// `out_shape` gets `mismatch_type` (blocked if `mismatch_blocked`), with
  /// the input dimension's size.
  RuleBuilder &
  addPointwiseWithDiffTypeForMismatch(const std::vector<int64_t> &in_shape,
                                      const std::vector<int64_t> &out_shape,
                                      FactorType mismatch_type,
                                      bool mismatch_blocked);

  /// Marks the rule as impossible (malformed op); build() returns nullopt.
  void invalidate() { valid_ = false; }
  /// The rule; nullopt when a dimension index was out of range. Moves the
  /// rule out: the builder is spent afterwards.
  std::optional<OpShardingRule> build();

private:
  int64_t reserveFactor(int64_t size, FactorType type, bool blocked);
  void mapDims(std::vector<OpShardingRule::TensorMapping> &mappings,
               const std::vector<int64_t> &dims, int64_t factor, int64_t size);
  void mapDimOfAll(std::vector<OpShardingRule::TensorMapping> &mappings,
                   int64_t dim, int64_t factor);

  OpShardingRule rule_;
  bool valid_ = true;
};

/// Factor i = dimension i of `shape` for every operand and result of rank
/// >= 1 (Shardy's buildPointwise / createIdentityShardingRule).
std::optional<OpShardingRule>
pointwiseRule(const std::vector<int64_t> &operand_ranks,
              const std::vector<int64_t> &result_ranks,
              const std::vector<int64_t> &shape);

} // namespace shardlab
