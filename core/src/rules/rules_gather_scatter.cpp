// Rules of gather and scatter, which share one factor layout: offset
// (window) dims between the input and the slices, batch dims between the
// slices, the indices and (if explicit) the input, collapsed (inserted)
// dims on the input only, and the index vector dim on the indices only.
#include "rules/gather_scatter_dims.h"
#include "rules/stablehlo_attrs.h"
#include "rules_internal.h"

#include <functional>

namespace shardlab::rules {

namespace {

using AddFactorFn = std::function<void(int64_t input_dim, int64_t indices_dim,
                                       int64_t slices_dim, int64_t size,
                                       FactorType type, bool blocked)>;

// The shapes involved and whether the op is a scatter (and if so, whether
// its body is one supported reduction).
struct GatherScatterShapes {
  const std::vector<int64_t> &input, &slices, &indices;
  bool is_scatter = false;
  bool scatter_reduces = false;
};

// Factors of an offset (window) dimension `slices_dim` of size `size`,
// mapped to `input_dim` of the input.
void addOffsetDim(const GatherScatterShapes &shapes, const AddFactorFn &add,
                  int64_t input_dim, int64_t slices_dim, int64_t size) {
  int64_t input_size = shapes.input[input_dim];
  if (input_size == size) {
    add(input_dim, kNullDim, slices_dim, input_size, FactorType::PassThrough,
        false);
  } else if (shapes.is_scatter) {
    add(input_dim, kNullDim, kNullDim, input_size, FactorType::NeedReplication,
        false);
    add(kNullDim, kNullDim, slices_dim, size, FactorType::NeedReplication,
        false);
  } else if (size == 1) {
    // Sharding the input dim needs an all-reduce of the result.
    add(input_dim, kNullDim, kNullDim, input_size, FactorType::Reduction,
        false);
    add(kNullDim, kNullDim, slices_dim, size, FactorType::NeedReplication,
        false);
  } else {
    add(input_dim, kNullDim, slices_dim, input_size,
        FactorType::NeedReplication, true);
  }
}

// The factor of batch dimension `slices_dim` (the `batch_pos`-th one).
bool addBatchDim(const GatherScatterShapes &shapes,
                 const GatherScatterDims &dims, const AddFactorFn &add,
                 int64_t batch_pos, int64_t slices_dim) {
  int64_t indices_dim =
      batch_pos < dims.index_vector_dim ? batch_pos : batch_pos + 1;
  if (indices_dim >= static_cast<int64_t>(shapes.indices.size()))
    return false;
  int64_t input_dim = kNullDim;
  for (size_t i = 0; i < dims.indices_batching_dims.size(); ++i)
    if (dims.indices_batching_dims[i] == indices_dim &&
        i < dims.operand_batching_dims.size())
      input_dim = dims.operand_batching_dims[i];
  FactorType type = FactorType::PassThrough;
  if (shapes.is_scatter && input_dim == kNullDim)
    type = shapes.scatter_reduces ? FactorType::Reduction
                                  : FactorType::NeedReplication;
  add(input_dim, indices_dim, slices_dim, shapes.slices[slices_dim], type,
      false);
  return true;
}

bool addGatherScatterFactors(const GatherScatterShapes &shapes,
                             const GatherScatterDims &dims,
                             const AddFactorFn &add) {
  const int64_t input_rank = static_cast<int64_t>(shapes.input.size());
  int64_t input_dim = 0, batch_pos = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(shapes.slices.size()); ++d) {
    if (!contains(dims.offset_dims, d)) {
      if (!addBatchDim(shapes, dims, add, batch_pos++, d))
        return false;
      continue;
    }
    while (contains(dims.collapsed_dims, input_dim) ||
           contains(dims.operand_batching_dims, input_dim))
      ++input_dim;
    if (input_dim >= input_rank)
      return false;
    addOffsetDim(shapes, add, input_dim++, d, shapes.slices[d]);
  }
  for (int64_t dim : dims.collapsed_dims) {
    if (dim < 0 || dim >= input_rank)
      return false;
    int64_t size = shapes.input[dim];
    FactorType type = shapes.is_scatter ? FactorType::PassThrough
                      : size == 1       ? FactorType::NeedReplication
                                        : FactorType::Reduction;
    add(dim, kNullDim, kNullDim, size, type, false);
  }
  if (dims.index_vector_dim < static_cast<int64_t>(shapes.indices.size()))
    add(kNullDim, dims.index_vector_dim, kNullDim,
        shapes.indices[dims.index_vector_dim], FactorType::NeedReplication,
        false);
  return true;
}

// Whether the result `index` of the scatter body is `op(arg[index],
// arg[index + n])` (either order) for one common op kind `kind`.
bool isReductionOf(const Value *value, Block &block, size_t index, size_t n,
                   std::string_view &kind) {
  const Operation *def = value->defining_op;
  if (!def || def->numOperands() != 2 || !value->type ||
      !value->type->isRankedTensor())
    return false;
  bool is_pred = value->type->element && value->type->element->text == "i1";
  bool logical =
      is_pred && (def->is("stablehlo.and") || def->is("stablehlo.or"));
  if (!logical && !def->is("stablehlo.add") && !def->is("stablehlo.multiply") &&
      !def->is("stablehlo.maximum") && !def->is("stablehlo.minimum"))
    return false;
  if (!kind.empty() && kind != def->name)
    return false;
  kind = def->name;
  const Value *a = block.argument(index), *b = block.argument(index + n);
  return (def->operand(0) == a && def->operand(1) == b) ||
         (def->operand(0) == b && def->operand(1) == a);
}

// Shardy's getCommonSupportedReductionOp(scatter) != nullptr.
bool hasCommonReduction(Operation &op, size_t num_inputs) {
  if (op.numRegions() == 0 || op.region(0).empty())
    return false;
  Block &block = op.region(0).front();
  Operation *ret = block.back();
  if (block.numArguments() != 2 * num_inputs || !ret ||
      !ret->is("stablehlo.return") || ret->numOperands() != num_inputs)
    return false;
  std::string_view kind;
  for (size_t i = 0; i < num_inputs; ++i)
    if (!isReductionOf(ret->operand(i), block, i, num_inputs, kind))
      return false;
  return true;
}

} // namespace

Rule gather(Operation &op, const RuleOptions &) {
  std::optional<GatherScatterDims> dims = readGatherScatterDims(op);
  if (!dims || op.numOperands() != 2 || op.numResults() != 1)
    return std::nullopt;
  GatherScatterShapes shapes{shapeOf(op.operand(0)), shapeOf(op.result(0)),
                             shapeOf(op.operand(1))};
  RuleBuilder builder = builderFor(op);
  bool ok = addGatherScatterFactors(
      shapes, *dims,
      [&](int64_t input_dim, int64_t indices_dim, int64_t slices_dim,
          int64_t size, FactorType type, bool blocked) {
        builder.addFactor({input_dim, indices_dim}, {slices_dim}, size, type,
                          blocked);
      });
  return ok ? builder.build() : std::nullopt;
}

Rule scatter(Operation &op, const RuleOptions &) {
  std::optional<GatherScatterDims> dims = readGatherScatterDims(op);
  size_t n = op.numResults();
  if (!dims || n == 0 || op.numOperands() != 2 * n + 1)
    return std::nullopt;
  GatherScatterShapes shapes{shapeOf(op.operand(0)), shapeOf(op.operand(n + 1)),
                             shapeOf(op.operand(n)), true,
                             hasCommonReduction(op, n)};
  RuleBuilder builder = builderFor(op);
  bool ok = addGatherScatterFactors(
      shapes, *dims,
      [&](int64_t input_dim, int64_t indices_dim, int64_t slices_dim,
          int64_t size, FactorType type, bool blocked) {
        std::vector<int64_t> operand_dims(n, input_dim);
        operand_dims.push_back(indices_dim);
        operand_dims.insert(operand_dims.end(), n, slices_dim);
        builder.addFactor(operand_dims, std::vector<int64_t>(n, input_dim),
                          size, type, blocked);
      });
  return ok ? builder.build() : std::nullopt;
}

} // namespace shardlab::rules
