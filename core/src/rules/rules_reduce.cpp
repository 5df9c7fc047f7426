// Rules of the reducing and windowed ops: reduce, reduce_window,
// select_and_scatter, and of triangular_solve.
#include "rules/stablehlo_attrs.h"
#include "rules_internal.h"

namespace shardlab::rules {

namespace {

// A windowed dim maps 1:1 between operand and result when its window and
// stride are 1 and it has no padding.
bool isWindowPassthroughDim(const Operation &op, size_t rank, int64_t dim) {
  if (const Attr *padding = findAttr(op, "padding")) {
    std::optional<std::vector<int64_t>> values = denseInts(*padding, 2 * rank);
    if (!values || static_cast<int64_t>(values->size()) < 2 * dim + 2 ||
        (*values)[2 * dim] != 0 || (*values)[2 * dim + 1] != 0)
      return false;
  }
  for (const char *name : {"window_strides", "window_dimensions"}) {
    std::optional<std::vector<int64_t>> values = intsAttr(op, name);
    if (values && !values->empty() &&
        (dim >= static_cast<int64_t>(values->size()) || (*values)[dim] != 1))
      return false;
  }
  return true;
}

} // namespace

Rule reduce(Operation &op, const RuleOptions &) {
  std::optional<std::vector<int64_t>> reduced = intsAttr(op, "dimensions");
  size_t num_inputs = op.numResults();
  if (!reduced || num_inputs == 0 || op.numOperands() != 2 * num_inputs)
    return std::nullopt;
  const std::vector<int64_t> &shape = shapeOf(op.operand(0));
  RuleBuilder builder = builderFor(op);
  std::vector<int64_t> operand_dims(op.numOperands(), kNullDim);
  int64_t out_dim = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d);
    std::fill_n(operand_dims.begin(), num_inputs, dim);
    if (contains(*reduced, dim)) {
      builder.addFactor(operand_dims,
                        std::vector<int64_t>(num_inputs, kNullDim), shape[d],
                        FactorType::Reduction);
    } else {
      builder.addFactor(operand_dims,
                        std::vector<int64_t>(num_inputs, out_dim++), shape[d]);
    }
  }
  return builder.build();
}

Rule reduceWindow(Operation &op, const RuleOptions &options) {
  if (op.numResults() == 0)
    return std::nullopt;
  const std::vector<int64_t> &shape = shapeOf(op.result(0));
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(
      shape,
      [&](int64_t dim) {
        return isWindowPassthroughDim(op, shape.size(), dim)
                   ? FactorType::PassThrough
                   : FactorType::Permutation;
      },
      [&](FactorType type) {
        return options.conservative && type == FactorType::Permutation;
      });
  return builder.build();
}

Rule selectAndScatter(Operation &op, const RuleOptions &options) {
  if (op.numOperands() != 3 || op.numResults() != 1)
    return std::nullopt;
  const std::vector<int64_t> &out = shapeOf(op.result(0));
  const std::vector<int64_t> &source = shapeOf(op.operand(1));
  if (source.size() != out.size())
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d);
    if (isWindowPassthroughDim(op, out.size(), dim)) {
      builder.addFactorToAll(dim, out[d]);
      continue;
    }
    // The source dim is replicated; operand -> result is a permutation.
    builder.addFactor({kNullDim, dim, kNullDim}, {kNullDim}, source[d],
                      FactorType::NeedReplication, options.conservative);
    builder.addFactor({dim, kNullDim, kNullDim}, {dim}, out[d],
                      FactorType::Permutation, options.conservative);
  }
  return builder.build();
}

Rule triangularSolve(Operation &op, const RuleOptions &) {
  if (op.numOperands() != 2 || op.numResults() != 1)
    return std::nullopt;
  const std::vector<int64_t> &a = shapeOf(op.operand(0));
  const std::vector<int64_t> &b = shapeOf(op.operand(1));
  if (a.size() < 2 || b.size() != a.size())
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(std::vector<int64_t>(a.begin(), a.end() - 2));
  int64_t dim1 = static_cast<int64_t>(a.size()) - 2, dim2 = dim1 + 1;
  const Attr *transpose = findAttr(op, "transpose_a");
  bool transposed = transpose && transpose->kind == AttrKind::Opaque &&
                    transpose->text.find("NO_TRANSPOSE") == std::string::npos &&
                    (transpose->text.find("TRANSPOSE") != std::string::npos ||
                     transpose->text.find("ADJOINT") != std::string::npos);
  const FactorType nr = FactorType::NeedReplication;
  if (boolAttr(op, "left_side", false)) {
    // op(a) @ result = b
    int64_t a_free = transposed ? dim2 : dim1;
    int64_t a_contracting = transposed ? dim1 : dim2;
    builder.addFactor({a_free, dim1}, {kNullDim}, a[a_free], nr)
        .addFactor({kNullDim, dim2}, {dim2}, b[dim2], nr)
        .addFactor({a_contracting, kNullDim}, {dim1}, a[a_contracting], nr);
  } else {
    // result @ op(a) = b
    int64_t a_free = transposed ? dim1 : dim2;
    int64_t a_contracting = transposed ? dim2 : dim1;
    builder.addFactor({kNullDim, dim1}, {dim1}, b[dim1], nr)
        .addFactor({a_free, dim2}, {kNullDim}, a[a_free], nr)
        .addFactor({a_contracting, kNullDim}, {dim2}, a[a_contracting], nr);
  }
  return builder.build();
}

} // namespace shardlab::rules
