// Rules of the contracting ops: dot, dot_general and convolution.
#include "rules/stablehlo_attrs.h"
#include "rules_internal.h"

#include <algorithm>

namespace shardlab::rules {

namespace {

bool inRange(int64_t dim, const std::vector<int64_t> &shape) {
  return dim >= 0 && dim < static_cast<int64_t>(shape.size());
}

// Factors of one spatial dimension of a convolution: the lhs dim is split
// into "number of windows" (shared with the output, permutation) and
// "window size" (shared with the kernel, reduction), larger first, each only
// when it is > 1 after what the other took.
void addSpatialFactors(RuleBuilder &builder, int64_t lhs_dim, int64_t rhs_dim,
                       int64_t out_dim, int64_t lhs_size, int64_t num_windows,
                       int64_t window_size) {
  int64_t remaining = lhs_size;
  auto add = [&](int64_t size, bool contracting) {
    size = std::min(remaining, size);
    if (size <= 1)
      return;
    builder.addFactor({lhs_dim, contracting ? rhs_dim : kNullDim},
                      {contracting ? kNullDim : out_dim}, size,
                      contracting ? FactorType::Reduction
                                  : FactorType::Permutation);
    remaining /= size;
  };
  if (num_windows >= window_size) {
    add(num_windows, false);
    add(window_size, true);
  } else {
    add(window_size, true);
    add(num_windows, false);
  }
}

bool validConvDims(const ConvDims &dims, const std::vector<int64_t> &lhs,
                   const std::vector<int64_t> &rhs,
                   const std::vector<int64_t> &out) {
  bool ok =
      inRange(dims.input_batch, lhs) && inRange(dims.input_feature, lhs) &&
      inRange(dims.kernel_input_feature, rhs) &&
      inRange(dims.kernel_output_feature, rhs) &&
      inRange(dims.output_batch, out) && inRange(dims.output_feature, out);
  for (size_t i = 0; ok && i < dims.input_spatial.size(); ++i)
    ok = inRange(dims.input_spatial[i], lhs) &&
         inRange(dims.kernel_spatial[i], rhs) &&
         inRange(dims.output_spatial[i], out);
  return ok;
}

} // namespace

Rule dotGeneral(Operation &op, const RuleOptions &) {
  const Attr *attr = findAttr(op, "dot_dimension_numbers");
  std::optional<DotDims> dims = attr ? dotDims(*attr) : std::nullopt;
  if (!dims || op.numOperands() != 2 || op.numResults() != 1)
    return std::nullopt;
  const std::vector<int64_t> &lhs = shapeOf(op.operand(0));
  const std::vector<int64_t> &rhs = shapeOf(op.operand(1));
  RuleBuilder builder = builderFor(op);
  int64_t out_dim = 0;
  for (size_t i = 0; i < dims->lhs_batching.size(); ++i) {
    int64_t lhs_dim = dims->lhs_batching[i];
    if (!inRange(lhs_dim, lhs))
      return std::nullopt;
    builder.addFactor({lhs_dim, dims->rhs_batching[i]}, {out_dim++},
                      lhs[lhs_dim]);
  }
  for (int64_t i = 0; i < static_cast<int64_t>(lhs.size()); ++i)
    if (!contains(dims->lhs_contracting, i) && !contains(dims->lhs_batching, i))
      builder.addFactor({i, kNullDim}, {out_dim++}, lhs[i]);
  for (int64_t i = 0; i < static_cast<int64_t>(rhs.size()); ++i)
    if (!contains(dims->rhs_contracting, i) && !contains(dims->rhs_batching, i))
      builder.addFactor({kNullDim, i}, {out_dim++}, rhs[i]);
  for (size_t i = 0; i < dims->lhs_contracting.size(); ++i) {
    int64_t lhs_dim = dims->lhs_contracting[i];
    if (!inRange(lhs_dim, lhs))
      return std::nullopt;
    builder.addFactor({lhs_dim, dims->rhs_contracting[i]}, {kNullDim},
                      lhs[lhs_dim], FactorType::Reduction);
  }
  return builder.build();
}

Rule dot(Operation &op, const RuleOptions &) {
  if (op.numOperands() != 2 || op.numResults() != 1)
    return std::nullopt;
  const std::vector<int64_t> &lhs = shapeOf(op.operand(0));
  const std::vector<int64_t> &rhs = shapeOf(op.operand(1));
  if (lhs.empty() || rhs.empty())
    return std::nullopt;
  bool lhs_matrix = lhs.size() == 2, rhs_matrix = rhs.size() == 2;
  RuleBuilder builder = builderFor(op);
  if (lhs_matrix)
    builder.addFactor({0, kNullDim}, {0}, lhs[0]);
  if (rhs_matrix)
    builder.addFactor({kNullDim, 1}, {lhs_matrix ? 1 : 0}, rhs[1]);
  builder.addFactor({lhs_matrix ? 1 : 0, 0}, {kNullDim}, rhs[0],
                    FactorType::Reduction);
  return builder.build();
}

Rule convolution(Operation &op, const RuleOptions &options) {
  const Attr *attr = findAttr(op, "dimension_numbers");
  std::optional<ConvDims> dims = attr && attr->kind == AttrKind::Opaque
                                     ? parseConvDims(attr->text)
                                     : std::nullopt;
  if (!dims || op.numOperands() != 2 || op.numResults() != 1)
    return std::nullopt;
  const std::vector<int64_t> &lhs = shapeOf(op.operand(0));
  const std::vector<int64_t> &rhs = shapeOf(op.operand(1));
  const std::vector<int64_t> &out = shapeOf(op.result(0));
  if (!validConvDims(*dims, lhs, rhs, out))
    return std::nullopt;
  int64_t batch_groups = intAttr(op, "batch_group_count").value_or(1);
  int64_t feature_groups = intAttr(op, "feature_group_count").value_or(1);
  if (batch_groups < 1 || feature_groups < 1)
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  if (batch_groups > 1)
    builder.addFactor({dims->input_batch, dims->kernel_output_feature},
                      {dims->output_feature}, batch_groups);
  builder.addFactor({dims->input_batch, kNullDim}, {dims->output_batch},
                    out[dims->output_batch]);
  for (size_t i = 0; !options.conservative && i < dims->input_spatial.size();
       ++i) {
    int64_t lhs_dim = dims->input_spatial[i], rhs_dim = dims->kernel_spatial[i];
    int64_t out_dim = dims->output_spatial[i];
    addSpatialFactors(builder, lhs_dim, rhs_dim, out_dim, lhs[lhs_dim],
                      out[out_dim], rhs[rhs_dim]);
  }
  if (feature_groups > 1)
    builder.addFactor({dims->input_feature, dims->kernel_output_feature},
                      {dims->output_feature}, feature_groups);
  builder.addFactor({dims->input_feature, dims->kernel_input_feature},
                    {kNullDim}, rhs[dims->kernel_input_feature],
                    FactorType::Reduction);
  int64_t out_features =
      out[dims->output_feature] / (batch_groups * feature_groups);
  if (out_features > 1)
    builder.addFactor({kNullDim, dims->kernel_output_feature},
                      {dims->output_feature}, out_features);
  return builder.build();
}

} // namespace shardlab::rules
