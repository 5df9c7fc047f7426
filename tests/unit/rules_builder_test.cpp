// Unit tests of the rule builder: factor kinds, size-1 handling, compound
// factors, fill of unmapped dims, and rejection of out-of-range dims.
#include "rules/rule_builder.h"

#include <doctest/doctest.h>

using namespace shardlab;

TEST_CASE("rule builder: addFactor maps dims and records factor kinds") {
  // dot_general (lhs [i, k], rhs [k, j]) -> [i, j]
  RuleBuilder builder({2, 2}, {2});
  builder.addFactor({0, kNullDim}, {0}, 8)
      .addFactor({kNullDim, 1}, {1}, 16)
      .addFactor({1, 0}, {kNullDim}, 32, FactorType::Reduction);
  std::optional<OpShardingRule> rule = builder.build();
  REQUIRE(rule);
  CHECK(rule->operands ==
        std::vector<OpShardingRule::TensorMapping>{{{0}, {2}}, {{2}, {1}}});
  CHECK(rule->results ==
        std::vector<OpShardingRule::TensorMapping>{{{0}, {1}}});
  CHECK(rule->factor_sizes == std::vector<int64_t>{8, 16, 32});
  CHECK(rule->reduction == std::vector<int64_t>{2});
  CHECK(rule->need_replication.empty());
  CHECK(rule->permutation.empty());
  CHECK_FALSE(rule->is_custom);
}

TEST_CASE("rule builder: factors on one dim form a compound, size 1 is "
          "not appended") {
  RuleBuilder builder({1}, {2});
  builder.addFactor({0}, {0}, 2).addFactor({0}, {1}, 4);
  // A size-1 factor on an already mapped dim is dropped from that dim.
  builder.addFactor({0}, {kNullDim}, 1);
  std::optional<OpShardingRule> rule = builder.build();
  REQUIRE(rule);
  CHECK(rule->operands[0] == OpShardingRule::TensorMapping{{0, 1}});
  CHECK(rule->results[0] == OpShardingRule::TensorMapping{{0}, {1}});
  CHECK(rule->factor_sizes == std::vector<int64_t>{2, 4, 1});
}

TEST_CASE("rule builder: unmapped dims get fresh size-1 factors, operands "
          "first") {
  RuleBuilder builder({2}, {2});
  builder.addFactor({0}, {1}, 7);
  std::optional<OpShardingRule> rule = builder.build();
  REQUIRE(rule);
  CHECK(rule->operands[0] == OpShardingRule::TensorMapping{{0}, {1}});
  CHECK(rule->results[0] == OpShardingRule::TensorMapping{{2}, {0}});
  CHECK(rule->factor_sizes == std::vector<int64_t>{7, 1, 1});
}

TEST_CASE("rule builder: pointwise helpers skip scalars and type dims") {
  // clamp with scalar min/max: ([], [i, j], []) -> ([i, j])
  RuleBuilder builder({0, 2, 0}, {2});
  builder.addPointwise({4, 8}, [](int64_t dim) {
    return dim == 1 ? FactorType::Permutation : FactorType::PassThrough;
  });
  std::optional<OpShardingRule> rule = builder.build();
  REQUIRE(rule);
  CHECK(rule->operands[0].empty());
  CHECK(rule->operands[2].empty());
  CHECK(rule->operands[1] == OpShardingRule::TensorMapping{{0}, {1}});
  CHECK(rule->permutation == std::vector<int64_t>{1});
  CHECK(rule->blocked_propagation.empty());
}

TEST_CASE("rule builder: mismatched dims get the mismatch kind and block") {
  RuleBuilder builder({3}, {3});
  builder.addPointwiseWithDiffTypeForMismatch(
      {32, 4, 8}, {32, 1, 2}, FactorType::NeedReplication, true);
  std::optional<OpShardingRule> rule = builder.build();
  REQUIRE(rule);
  CHECK(rule->factor_sizes == std::vector<int64_t>{32, 4, 8});
  CHECK(rule->need_replication == std::vector<int64_t>{1, 2});
  CHECK(rule->blocked_propagation == std::vector<int64_t>{1, 2});
}

TEST_CASE("rule builder: out-of-range dims make the rule invalid") {
  RuleBuilder out_of_range({2}, {2});
  out_of_range.addFactor({5}, {0}, 3);
  CHECK_FALSE(out_of_range.build());
  RuleBuilder wrong_arity({2, 2}, {2});
  wrong_arity.addFactor({0}, {0}, 3);
  CHECK_FALSE(wrong_arity.build());
  RuleBuilder all_dims({2}, {1});
  all_dims.addFactorToAll(1, 4);
  CHECK_FALSE(all_dims.build());
}

TEST_CASE("pointwise rule: factor i is dim i of the shape") {
  std::optional<OpShardingRule> rule = pointwiseRule({3, 3}, {3}, {2, 0, 4});
  REQUIRE(rule);
  CHECK(rule->factor_sizes == std::vector<int64_t>{2, 0, 4});
  CHECK(rule->operands[1] == OpShardingRule::TensorMapping{{0}, {1}, {2}});
  std::optional<OpShardingRule> scalar = pointwiseRule({0, 0}, {0}, {});
  REQUIRE(scalar);
  CHECK(scalar->factor_sizes.empty());
  CHECK(scalar->operands[0].empty());
  CHECK_FALSE(pointwiseRule({3}, {2}, {2, 2}));
}
