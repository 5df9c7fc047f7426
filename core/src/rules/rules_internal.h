// Shared pieces of the rule registry's per-op builders: shapes of operands
// and results, a builder sized for an op, and the per-op entry points that
// registry.cpp dispatches to by op name.
#pragma once

#include "rules/rule_builder.h"
#include "shardlab/ir/diagnostics.h"

#include <optional>
#include <vector>

namespace shardlab::rules {

/// What every per-op builder may consult besides the op.
struct RuleOptions {
  bool conservative = false;
  DiagnosticEngine *warnings = nullptr;
};

using Rule = std::optional<OpShardingRule>;
using RuleFn = Rule (*)(Operation &op, const RuleOptions &options);

/// The static shape of a ranked tensor value; empty for anything else
/// (scalars, tokens, tuples).
const std::vector<int64_t> &shapeOf(const Value *value);
/// True when `value` is a ranked tensor with no dynamic dimension.
bool hasStaticShape(const Value *value);
/// A builder with one tensor mapping per operand and result of `op`.
RuleBuilder builderFor(const Operation &op);
/// Shardy's buildPointwise: factor i = dim i of the first result.
Rule buildPointwise(Operation &op);
/// True when `dims` contains `dim`.
bool contains(const std::vector<int64_t> &dims, int64_t dim);

// Per-op builders (rules_*.cpp).
Rule pointwise(Operation &op, const RuleOptions &options);
Rule allGather(Operation &op, const RuleOptions &options);
Rule allToAll(Operation &op, const RuleOptions &options);
Rule reduceScatter(Operation &op, const RuleOptions &options);
Rule bitcastConvert(Operation &op, const RuleOptions &options);
Rule batchNormInference(Operation &op, const RuleOptions &options);
Rule broadcastInDim(Operation &op, const RuleOptions &options);
Rule cholesky(Operation &op, const RuleOptions &options);
Rule clamp(Operation &op, const RuleOptions &options);
Rule concatenate(Operation &op, const RuleOptions &options);
Rule convolution(Operation &op, const RuleOptions &options);
Rule customCall(Operation &op, const RuleOptions &options);
Rule dotGeneral(Operation &op, const RuleOptions &options);
Rule dot(Operation &op, const RuleOptions &options);
Rule dynamicSlice(Operation &op, const RuleOptions &options);
Rule dynamicUpdateSlice(Operation &op, const RuleOptions &options);
Rule fft(Operation &op, const RuleOptions &options);
Rule gather(Operation &op, const RuleOptions &options);
Rule pad(Operation &op, const RuleOptions &options);
Rule reduce(Operation &op, const RuleOptions &options);
Rule reduceWindow(Operation &op, const RuleOptions &options);
Rule reshape(Operation &op, const RuleOptions &options);
Rule reverse(Operation &op, const RuleOptions &options);
Rule rngBitGenerator(Operation &op, const RuleOptions &options);
Rule scatter(Operation &op, const RuleOptions &options);
Rule selectAndScatter(Operation &op, const RuleOptions &options);
Rule select(Operation &op, const RuleOptions &options);
Rule slice(Operation &op, const RuleOptions &options);
Rule sort(Operation &op, const RuleOptions &options);
Rule transpose(Operation &op, const RuleOptions &options);
Rule triangularSolve(Operation &op, const RuleOptions &options);

} // namespace shardlab::rules
