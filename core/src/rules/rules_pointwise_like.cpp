// Rules of ops that are pointwise over most dimensions with a few special
// ones: select, clamp, reverse, bitcast_convert, dynamic_update_slice,
// cholesky, sort, fft, batch_norm_inference, rng_bit_generator.
#include "rules/stablehlo_attrs.h"
#include "rules_internal.h"

namespace shardlab::rules {

namespace {

bool isConstantLike(const Value *value) {
  const Operation *def = value->defining_op;
  return def && (def->is("sdy.constant") || def->is("stablehlo.constant") ||
                 def->is("arith.constant"));
}

} // namespace

Rule select(Operation &op, const RuleOptions &) {
  if (op.numResults() != 1)
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(shapeOf(op.result(0)));
  return builder.build();
}

Rule clamp(Operation &op, const RuleOptions &) {
  if (op.numOperands() != 3)
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(shapeOf(op.operand(1)));
  return builder.build();
}

Rule reverse(Operation &op, const RuleOptions &) {
  std::optional<std::vector<int64_t>> dims = intsAttr(op, "dimensions");
  if (!dims || op.numResults() != 1)
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(shapeOf(op.result(0)), [&](int64_t dim) {
    return contains(*dims, dim) ? FactorType::Permutation
                                : FactorType::PassThrough;
  });
  return builder.build();
}

Rule bitcastConvert(Operation &op, const RuleOptions &) {
  if (op.numOperands() != 1 || op.numResults() != 1)
    return std::nullopt;
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  const std::vector<int64_t> &out = shapeOf(op.result(0));
  RuleBuilder builder = builderFor(op);
  // Any dim but the extra minor one of the narrower element type.
  builder.addPointwise(in.size() < out.size() ? in : out);
  if (in.size() < out.size())
    builder.addFactor({kNullDim}, {static_cast<int64_t>(out.size()) - 1},
                      out.back(), FactorType::NeedReplication);
  else if (in.size() > out.size())
    builder.addFactor({static_cast<int64_t>(in.size()) - 1}, {kNullDim},
                      in.back(), FactorType::NeedReplication);
  return builder.build();
}

Rule dynamicUpdateSlice(Operation &op, const RuleOptions &) {
  if (op.numOperands() < 2 || op.numResults() != 1)
    return std::nullopt;
  const std::vector<int64_t> &operand = shapeOf(op.operand(0));
  const std::vector<int64_t> &update = shapeOf(op.operand(1));
  if (operand.size() != update.size())
    return std::nullopt;
  bool constant_indices = true;
  for (size_t i = 2; i < op.numOperands(); ++i)
    constant_indices = constant_indices && isConstantLike(op.operand(i));
  RuleBuilder builder = builderFor(op);
  std::vector<int64_t> dims(op.numOperands(), kNullDim);
  for (size_t d = 0; d < operand.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d);
    if (operand[d] == update[d]) {
      builder.addFactorToAll(dim, operand[d]);
      continue;
    }
    // The operand/result keep their sharding along a sliced dim; the update
    // gets its own factor, replicated unless the indices are constants.
    dims[0] = dim;
    dims[1] = kNullDim;
    builder.addFactor(dims, {dim}, operand[d]);
    dims[0] = kNullDim;
    dims[1] = dim;
    builder.addFactor(dims, {kNullDim}, update[d],
                      constant_indices ? FactorType::PassThrough
                                       : FactorType::NeedReplication);
  }
  return builder.build();
}

Rule cholesky(Operation &op, const RuleOptions &) {
  if (op.numOperands() != 1)
    return std::nullopt;
  const std::vector<int64_t> &shape = shapeOf(op.operand(0));
  int64_t batch_dims = static_cast<int64_t>(shape.size()) - 2;
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(shape, [&](int64_t dim) {
    return dim < batch_dims ? FactorType::PassThrough
                            : FactorType::NeedReplication;
  });
  return builder.build();
}

Rule sort(Operation &op, const RuleOptions &) {
  std::optional<int64_t> sort_dim = intAttr(op, "dimension");
  if (!sort_dim || op.numOperands() == 0)
    return std::nullopt;
  const std::vector<int64_t> &shape = shapeOf(op.operand(0));
  bool others_size_one = true;
  for (size_t d = 0; d < shape.size(); ++d)
    others_size_one = others_size_one &&
                      (static_cast<int64_t>(d) == *sort_dim || shape[d] == 1);
  RuleBuilder builder = builderFor(op);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d);
    if (dim == *sort_dim)
      builder.addFactorToAll(dim, shape[d], FactorType::NeedReplication,
                             others_size_one);
    else
      builder.addFactorToAll(dim, shape[d]);
  }
  return builder.build();
}

Rule fft(Operation &op, const RuleOptions &) {
  std::optional<std::vector<int64_t>> length = intsAttr(op, "fft_length");
  if (!length || op.numOperands() != 1 || op.numResults() != 1)
    return std::nullopt;
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  const std::vector<int64_t> &out = shapeOf(op.result(0));
  if (in.empty() || out.empty())
    return std::nullopt;
  int64_t rank = static_cast<int64_t>(in.size());
  int64_t first_fft_dim = rank - static_cast<int64_t>(length->size());
  RuleBuilder builder = builderFor(op);
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (dim < first_fft_dim)
      builder.addFactorToAll(dim, in[dim]);
    else if (dim < rank - 1)
      builder.addFactorToAll(dim, in[dim], FactorType::NeedReplication);
    else // blocked when RFFT/IRFFT change the last dim
      builder.addFactorToAll(dim, in[dim], FactorType::NeedReplication,
                             in.back() != out.back());
  }
  return builder.build();
}

Rule batchNormInference(Operation &op, const RuleOptions &) {
  std::optional<int64_t> feature = intAttr(op, "feature_index");
  if (!feature || op.numOperands() == 0)
    return std::nullopt;
  const std::vector<int64_t> &shape = shapeOf(op.operand(0));
  RuleBuilder builder = builderFor(op);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d);
    std::vector<int64_t> dims(op.numOperands(), dim == *feature ? 0 : kNullDim);
    dims[0] = dim;
    builder.addFactor(dims, {dim}, shape[d]);
  }
  return builder.build();
}

Rule rngBitGenerator(Operation &op, const RuleOptions &) {
  if (op.numOperands() != 1 || op.numResults() != 2)
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  // The states stay replicated and nothing propagates between them.
  const std::vector<int64_t> &state = shapeOf(op.operand(0));
  for (size_t d = 0; d < state.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d);
    builder.addFactor({dim}, {dim, kNullDim}, state[d],
                      FactorType::NeedReplication, /*blocked=*/true);
  }
  const std::vector<int64_t> &output = shapeOf(op.result(1));
  for (size_t d = 0; d < output.size(); ++d)
    builder.addFactor({kNullDim}, {kNullDim, static_cast<int64_t>(d)},
                      output[d]);
  return builder.build();
}

} // namespace shardlab::rules
