// -sdy-explicit-gather-scatter-batching: a gather or scatter whose index
// for dimension 0 of the operand comes from an iota along dimension 0 of
// the indices (possibly through reshape, broadcast_in_dim, clamp or select,
// as one input of a concatenate along the index vector dim) indexes that
// dimension row by row: it is an implicit batch dimension. The pass makes it
// an explicit batching dimension of operand and indices, and drops its
// component from the indices, so that propagation sees the batch factor.
// Run per func with MLIR's greedy driver semantics (dead ops are erased).
#include "import_passes.h"
#include "rules/gather_scatter_dims.h"

#include "rules/stablehlo_attrs.h"

#include "passes/canonicalize.h"
#include "passes/pass_utils.h"

#include <algorithm>

namespace shardlab {

namespace {

Operation *definingOp(const Value *value, std::string_view name) {
  Operation *op = value->defining_op;
  return op && op->is(name) ? op : nullptr;
}

int64_t intAttrOr(const Operation &op, std::string_view name,
                  int64_t fallback) {
  return rules::intAttr(op, name).value_or(fallback);
}

// The value an index is computed from, through the ops that keep an iota
// an iota (Shardy's unwrapReshapes).
Value *indexSource(Value *value) {
  while (Operation *op = value->defining_op) {
    if ((op->is("stablehlo.reshape") || op->is("stablehlo.broadcast_in_dim")) &&
        op->numOperands() == 1)
      value = op->operand(0);
    else if (op->is("stablehlo.clamp") && op->numOperands() == 3)
      value = op->operand(1);
    else if (op->is("stablehlo.select") && op->numOperands() == 3)
      value = definingOp(op->operand(2), "stablehlo.iota") ? op->operand(2)
                                                           : op->operand(1);
    else
      break;
  }
  return value;
}

// Whether component `removed` of the index vector comes from an iota along
// dimension 0.
bool isIotaComponent(Value *indices, int64_t index_vector_dim, size_t removed) {
  Value *candidate = indices;
  if (Operation *concat = definingOp(indices, "stablehlo.concatenate")) {
    if (intAttrOr(*concat, "dimension", -1) != index_vector_dim ||
        removed >= concat->numOperands())
      return false;
    candidate = concat->operand(removed);
  }
  Operation *iota = definingOp(indexSource(candidate), "stablehlo.iota");
  return iota && intAttrOr(*iota, "iota_dimension", -1) == 0;
}

// The operands a rewrite touches: the operand indexed (a scatter's first
// input) and the indices, with the indices' operand number.
struct GatherScatterOperands {
  Value *operand = nullptr;
  Value *indices = nullptr;
  size_t indices_index = 0;
};

std::optional<GatherScatterOperands> operandsOf(Operation &op, bool scatter) {
  size_t inputs = scatter ? (op.numOperands() - 1) / 2 : 1;
  if (op.numOperands() < 2 || (scatter && op.numOperands() % 2 == 0))
    return std::nullopt;
  return GatherScatterOperands{op.operand(0), op.operand(inputs), inputs};
}

bool rankedNonScalar(const Value *value) {
  return value->type->isRankedTensor() && value->type->rank() > 0;
}

// Where component `removed` of the index vector sits when dimension 0 is an
// implicit batch dimension, per Shardy's checks; nullopt otherwise.
std::optional<size_t> implicitBatchComponent(const GatherScatterDims &dims,
                                             const GatherScatterOperands &ops) {
  if (!dims.operand_batching_dims.empty() || !rankedNonScalar(ops.operand) ||
      !rankedNonScalar(ops.indices))
    return std::nullopt;
  const std::vector<int64_t> &shape = ops.indices->type->shape;
  int64_t ivd = dims.index_vector_dim;
  if (ivd < 0 || ivd >= static_cast<int64_t>(shape.size()) || shape[ivd] <= 1 ||
      shape[0] != ops.operand->type->shape[0])
    return std::nullopt;
  auto it = std::find(dims.index_map.begin(), dims.index_map.end(), 0);
  if (it == dims.index_map.end())
    return std::nullopt;
  size_t removed = static_cast<size_t>(it - dims.index_map.begin());
  if (!isIotaComponent(ops.indices, ivd, removed) ||
      std::count(dims.collapsed_dims.begin(), dims.collapsed_dims.end(), 0) ==
          0)
    return std::nullopt;
  return removed;
}

Type withDimSize(Context &ctx, Type type, int64_t dim, int64_t size) {
  std::vector<int64_t> shape = type->shape;
  shape[dim] = size;
  return ctx.types.rankedTensor(shape, type->element);
}

Value *createConcat(Operation &before, const std::vector<Value *> &inputs,
                    Type type, int64_t dim, Rewriter &rw) {
  Context &ctx = rw.ctx();
  auto concat =
      makeOp(ctx, "stablehlo.concatenate", inputs, {type}, before.loc);
  concat->attrs.set(ctx.intern("dimension"),
                    ctx.attrs.integer(dim, ctx.types.element("i64")));
  return rw.insertBefore(before, std::move(concat))->result(0);
}

// indices[..., begin:end, ...] along `dim`.
Value *createSlice(Operation &before, Value *indices, int64_t dim,
                   int64_t begin, int64_t end, Rewriter &rw) {
  Context &ctx = rw.ctx();
  const std::vector<int64_t> &shape = indices->type->shape;
  std::vector<int64_t> starts(shape.size(), 0), limits = shape,
                                                strides(shape.size(), 1);
  starts[dim] = begin;
  limits[dim] = end;
  auto slice =
      makeOp(ctx, "stablehlo.slice", {indices},
             {withDimSize(ctx, indices->type, dim, end - begin)}, before.loc);
  Type i64 = ctx.types.element("i64");
  slice->attrs.set(ctx.intern("start_indices"),
                   ctx.attrs.denseArray(i64, starts));
  slice->attrs.set(ctx.intern("limit_indices"),
                   ctx.attrs.denseArray(i64, limits));
  slice->attrs.set(ctx.intern("strides"), ctx.attrs.denseArray(i64, strides));
  return rw.insertBefore(before, std::move(slice))->result(0);
}

// The indices without component `removed` of dimension `dim`: the other
// inputs of a concatenate that builds them one component per input, else
// slices around the component (Shardy's sliceAndConcatenateIndices).
Value *indicesWithout(Operation &op, Value *indices, int64_t dim,
                      size_t removed, Rewriter &rw) {
  int64_t total = indices->type->shape[dim];
  Type type = withDimSize(rw.ctx(), indices->type, dim, total - 1);
  std::vector<Value *> parts;
  Operation *concat = definingOp(indices, "stablehlo.concatenate");
  if (concat && intAttrOr(*concat, "dimension", -1) == dim &&
      static_cast<int64_t>(concat->numOperands()) == total) {
    for (size_t i = 0; i < concat->numOperands(); ++i)
      if (i != removed)
        parts.push_back(concat->operand(i));
  } else {
    int64_t cut = static_cast<int64_t>(removed);
    if (cut > 0)
      parts.push_back(createSlice(op, indices, dim, 0, cut, rw));
    if (cut + 1 < total)
      parts.push_back(createSlice(op, indices, dim, cut + 1, total, rw));
  }
  if (parts.size() == 1)
    return parts[0];
  return createConcat(op, parts, type, dim, rw);
}

// A rebuilt op states its flags explicitly, as Shardy's builders do.
void setFlagsExplicitly(Operation &op, bool scatter, Context &ctx) {
  std::vector<std::string_view> flags = {"indices_are_sorted"};
  if (scatter)
    flags.push_back("unique_indices");
  for (std::string_view flag : flags)
    if (!rules::findAttr(op, flag))
      op.attrs.set(ctx.intern(flag), ctx.attrs.boolean(false));
}

bool makeBatchingExplicit(Operation &op, Rewriter &rw) {
  std::optional<GatherScatterDims> dims = readGatherScatterDims(op);
  if (!dims)
    return false;
  std::optional<GatherScatterOperands> ops = operandsOf(op, dims->scatter);
  std::optional<size_t> removed =
      ops ? implicitBatchComponent(*dims, *ops) : std::nullopt;
  if (!removed)
    return false;
  dims->index_map.erase(dims->index_map.begin() +
                        static_cast<std::ptrdiff_t>(*removed));
  dims->collapsed_dims.erase(
      std::find(dims->collapsed_dims.begin(), dims->collapsed_dims.end(), 0));
  dims->operand_batching_dims = {0};
  dims->indices_batching_dims = {0};
  Operation *old_indices = ops->indices->defining_op;
  op.setOperand(
      ops->indices_index,
      indicesWithout(op, ops->indices, dims->index_vector_dim, *removed, rw));
  writeGatherScatterDims(op, *dims, rw.ctx());
  setFlagsExplicitly(op, dims->scatter, rw.ctx());
  rw.push(old_indices);
  rw.notifyModified(op);
  return true;
}

} // namespace

bool explicitGatherScatterBatchingPass(Module &module, const PassOptions &,
                                       DiagnosticEngine &) {
  forEachFunc(module, [&](Operation &func) {
    applyPatternsGreedily(module, func, makeBatchingExplicit);
  });
  return true;
}

} // namespace shardlab
