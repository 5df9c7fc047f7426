// Helpers shared by the per-op builders, and the rules of pointwise ops and
// of the StableHLO collectives.
#include "rules/stablehlo_attrs.h"
#include "rules_internal.h"

#include <algorithm>

namespace shardlab::rules {

namespace {

int64_t rankOf(const Value *value) {
  return static_cast<int64_t>(shapeOf(value).size());
}

// Pointwise except `dim`, which gets an operand-only and a result-only
// need-replication factor.
Rule pointwiseExceptDim(Operation &op, std::optional<int64_t> dim) {
  if (!dim || op.numOperands() == 0 || op.numResults() == 0)
    return std::nullopt;
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  const std::vector<int64_t> &out = shapeOf(op.result(0));
  if (*dim < 0 || *dim >= static_cast<int64_t>(std::min(in.size(), out.size())))
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder.addPointwiseIf(in, [&](int64_t d) { return d != *dim; })
      .addFactorToAllOperands(*dim, in[*dim], FactorType::NeedReplication)
      .addFactorToAllResults(*dim, out[*dim], FactorType::NeedReplication);
  return builder.build();
}

} // namespace

const std::vector<int64_t> &shapeOf(const Value *value) {
  static const std::vector<int64_t> kScalar;
  if (!value || !value->type || !value->type->isRankedTensor())
    return kScalar;
  return value->type->shape;
}

bool hasStaticShape(const Value *value) {
  return value && value->type && value->type->isRankedTensor() &&
         value->type->hasStaticShape();
}

RuleBuilder builderFor(const Operation &op) {
  std::vector<int64_t> operand_ranks, result_ranks;
  for (size_t i = 0; i < op.numOperands(); ++i)
    operand_ranks.push_back(rankOf(op.operand(i)));
  for (size_t i = 0; i < op.numResults(); ++i)
    result_ranks.push_back(rankOf(op.result(i)));
  return RuleBuilder(operand_ranks, result_ranks);
}

Rule buildPointwise(Operation &op) {
  if (op.numResults() == 0 || !op.result(0)->type ||
      !op.result(0)->type->isRankedTensor())
    return std::nullopt;
  std::vector<int64_t> operand_ranks, result_ranks;
  for (size_t i = 0; i < op.numOperands(); ++i)
    operand_ranks.push_back(rankOf(op.operand(i)));
  for (size_t i = 0; i < op.numResults(); ++i)
    result_ranks.push_back(rankOf(op.result(i)));
  return pointwiseRule(operand_ranks, result_ranks, shapeOf(op.result(0)));
}

bool contains(const std::vector<int64_t> &dims, int64_t dim) {
  return std::find(dims.begin(), dims.end(), dim) != dims.end();
}

Rule pointwise(Operation &op, const RuleOptions &) {
  return buildPointwise(op);
}

Rule allGather(Operation &op, const RuleOptions &) {
  return pointwiseExceptDim(op, intAttr(op, "all_gather_dim"));
}

Rule reduceScatter(Operation &op, const RuleOptions &) {
  return pointwiseExceptDim(op, intAttr(op, "scatter_dimension"));
}

Rule allToAll(Operation &op, const RuleOptions &) {
  std::optional<int64_t> split = intAttr(op, "split_dimension");
  std::optional<int64_t> concat = intAttr(op, "concat_dimension");
  if (!split || !concat || op.numOperands() == 0 || op.numResults() == 0)
    return std::nullopt;
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  const std::vector<int64_t> &out = shapeOf(op.result(0));
  int64_t rank = static_cast<int64_t>(std::min(in.size(), out.size()));
  if (*split < 0 || *split >= rank || *concat < 0 || *concat >= rank)
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder
      .addPointwiseIf(in,
                      [&](int64_t d) { return d != *split && d != *concat; })
      .addFactorToAllOperands(*split, in[*split], FactorType::NeedReplication)
      .addFactorToAllResults(*split, out[*split], FactorType::NeedReplication);
  if (*split != *concat)
    builder
        .addFactorToAllOperands(*concat, in[*concat],
                                FactorType::NeedReplication)
        .addFactorToAllResults(*concat, out[*concat],
                               FactorType::NeedReplication);
  return builder.build();
}

} // namespace shardlab::rules
