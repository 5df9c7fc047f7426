// Rules of the data-movement ops: transpose, broadcast_in_dim, concatenate,
// slice, pad, dynamic_slice, dynamic_update_slice, reverse, bitcast_convert.
#include "rules/stablehlo_attrs.h"
#include "rules_internal.h"

#include <algorithm>

namespace shardlab::rules {

namespace {

bool oneToOne(const Operation &op) {
  return op.numOperands() >= 1 && op.numResults() == 1;
}

// The operand of a slice producing `value`, else `value` itself.
const Value *beforeSlice(const Value *value) {
  const Operation *def = value->defining_op;
  if (def && def->is("stablehlo.slice") && def->numOperands() == 1)
    return def->operand(0);
  return value;
}

bool isSliceResult(const Value *value) {
  return value->defining_op && value->defining_op->is("stablehlo.slice");
}

// The concat dimension needs a permutation when the operands are slices
// (concat(slice(a), slice(b))) or slices of, and, one tensor
// (concat(slice(x), x, slice(x))); otherwise replication.
FactorType concatDimType(const Operation &op) {
  bool all_slices = true, any_slice = false, same_source = true;
  const Value *source = beforeSlice(op.operand(0));
  for (size_t i = 0; i < op.numOperands(); ++i) {
    bool is_slice = isSliceResult(op.operand(i));
    all_slices = all_slices && is_slice;
    any_slice = any_slice || is_slice;
    same_source = same_source && beforeSlice(op.operand(i)) == source;
  }
  if (all_slices || (same_source && any_slice))
    return FactorType::Permutation;
  return FactorType::NeedReplication;
}

} // namespace

Rule transpose(Operation &op, const RuleOptions &) {
  std::optional<std::vector<int64_t>> perm = intsAttr(op, "permutation");
  if (!oneToOne(op) || !perm)
    return std::nullopt;
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  RuleBuilder builder = builderFor(op);
  for (size_t out_dim = 0; out_dim < perm->size(); ++out_dim) {
    int64_t in_dim = (*perm)[out_dim];
    if (in_dim < 0 || in_dim >= static_cast<int64_t>(in.size()))
      return std::nullopt;
    builder.addFactor({in_dim}, {static_cast<int64_t>(out_dim)}, in[in_dim]);
  }
  return builder.build();
}

Rule broadcastInDim(Operation &op, const RuleOptions &) {
  std::optional<std::vector<int64_t>> dims =
      intsAttr(op, "broadcast_dimensions");
  if (!oneToOne(op) || !dims)
    return std::nullopt;
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  const std::vector<int64_t> &out = shapeOf(op.result(0));
  std::vector<int64_t> out_to_in(out.size(), kNullDim);
  for (size_t in_dim = 0; in_dim < dims->size(); ++in_dim) {
    int64_t out_dim = (*dims)[in_dim];
    if (out_dim < 0 || out_dim >= static_cast<int64_t>(out.size()) ||
        in_dim >= in.size())
      return std::nullopt;
    out_to_in[out_dim] = static_cast<int64_t>(in_dim);
  }
  RuleBuilder builder = builderFor(op);
  for (size_t out_dim = 0; out_dim < out.size(); ++out_dim) {
    int64_t in_dim = out_to_in[out_dim];
    if (in_dim != kNullDim && in[in_dim] == 1 && out[out_dim] != 1) {
      // Expanded in place: the operand dim gets its own size-1 factor.
      builder.addFactor({in_dim}, {kNullDim}, 1);
      in_dim = kNullDim;
    }
    builder.addFactor({in_dim}, {static_cast<int64_t>(out_dim)}, out[out_dim]);
  }
  return builder.build();
}

Rule concatenate(Operation &op, const RuleOptions &options) {
  std::optional<int64_t> dim = intAttr(op, "dimension");
  if (!dim || op.numOperands() == 0 || op.numResults() != 1)
    return std::nullopt;
  FactorType concat_type = concatDimType(op);
  RuleBuilder builder = builderFor(op);
  builder.addPointwiseIf(
      shapeOf(op.result(0)),
      [&](int64_t d) { return !options.conservative || d != *dim; },
      [&](int64_t d) {
        return d == *dim ? concat_type : FactorType::PassThrough;
      });
  return builder.build();
}

Rule slice(Operation &op, const RuleOptions &options) {
  if (!oneToOne(op))
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder.addPointwiseWithDiffTypeForMismatch(
      shapeOf(op.operand(0)), shapeOf(op.result(0)), FactorType::Permutation,
      options.conservative);
  return builder.build();
}

Rule pad(Operation &op, const RuleOptions &options) {
  return slice(op, options);
}

Rule dynamicSlice(Operation &op, const RuleOptions &) {
  if (!oneToOne(op))
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder.addPointwiseWithDiffTypeForMismatch(
      shapeOf(op.operand(0)), shapeOf(op.result(0)),
      FactorType::NeedReplication, /*mismatch_blocked=*/true);
  return builder.build();
}

} // namespace shardlab::rules
