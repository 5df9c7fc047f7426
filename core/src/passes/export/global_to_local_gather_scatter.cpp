// stablehlo.gather and stablehlo.scatter in local form (global_to_local.h).
//
// A gather whose
// operand is sharded only along pass-through dimensions (sliced whole) and
// batching dimensions is local as it is, with its slice sizes divided. When
// it is sharded along a dimension it indexes into (a reduction factor: the
// rows live on different devices), each device gathers what it holds and
// zeros the rest, and the all-reduce that export put after the gather sums
// the pieces:
//   - indexed dimensions (in start_index_map): indices are clamped to the
//     global bounds as gather would, shifted by where the device's shard
//     starts, and masked to those inside it;
//   - other sharded dimensions with slice size 1 are read at index 0, which
//     only the device holding the first shard has.
//
// A scatter into an operand sharded along a dimension it indexes shifts its
// indices by where the device's shard starts: updates that land outside
// the shard are dropped, as scatter drops out-of-bounds windows. When the
// updates are split across devices the operand is not (a reduction the
// all-reduce after the scatter completes), one device of each group keeps
// the operand and the others start from the reduction's identity, so the
// operand is counted once.
#include "global_to_local.h"
#include "local_builder.h"

#include "ir/op_properties.h"
#include "passes/pass_utils.h"
#include "rules/gather_scatter_dims.h"
#include "sharding/device_layout.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace shardlab {
namespace {

// reduce(`mask`, true) with `and` over dimension `dim`.
Value *allAlong(LocalBuilder &b, Value *mask, int64_t dim) {
  Context &ctx = b.ctx();
  Type scalar = b.tensorOf({}, ctx.types.element("i1"));
  Value *init = b.splat(scalar, 1);
  std::vector<int64_t> shape = mask->type->shape;
  shape.erase(shape.begin() + dim);
  Operation *reduce = b.create("stablehlo.reduce", {mask, init},
                               {b.reshaped(mask->type, shape)},
                               {{"dimensions", b.denseArrayAttr({dim})}});
  Block &body = reduce->addRegion().addBlock();
  Value *lhs = body.addArgument(scalar, reduce->loc);
  Value *rhs = body.addArgument(scalar, reduce->loc);
  Operation *both = body.push_back(
      makeOp(ctx, "stablehlo.and", {lhs, rhs}, {scalar}, reduce->loc));
  body.push_back(
      makeOp(ctx, "stablehlo.return", {both->result(0)}, {}, reduce->loc));
  return reduce->result(0);
}

// The identity of the scatter's combiner (its region's one op), as a
// scalar of `element`; nullopt for a combiner it cannot name.
std::optional<double> identityOf(Operation &scatter, Type element) {
  Block &body = scatter.region(0).front();
  Operation *combine = body.front();
  if (!combine || combine == body.back())
    return std::nullopt;
  if (combine->is("stablehlo.add") || combine->is("stablehlo.or") ||
      combine->is("stablehlo.xor"))
    return 0.0;
  if (combine->is("stablehlo.multiply"))
    return 1.0;
  if (combine->is("stablehlo.and"))
    return element->text == "i1" ? 1.0 : -1.0;
  // An infinity stands for the smallest / largest value of an integer
  // type (denseSplatOf).
  if (combine->is("stablehlo.maximum"))
    return -std::numeric_limits<double>::infinity();
  if (combine->is("stablehlo.minimum"))
    return std::numeric_limits<double>::infinity();
  return std::nullopt;
}

// Offsets of the device's shard along each indexed dimension, as one index
// vector broadcast to the indices' shape (`starts[k]` null: 0).
Value *indexVector(LocalBuilder &b, const std::vector<Value *> &starts,
                   Type index_type, int64_t vector_dim) {
  if (starts.size() == 1)
    return b.broadcast(starts[0], index_type, {});
  std::vector<Value *> pieces;
  for (Value *start : starts)
    pieces.push_back(b.reshape(start, {1}));
  Value *joined =
      b.create("stablehlo.concatenate", pieces,
               {b.tensorOf({int64_t(starts.size())}, index_type->element)},
               {{"dimension", b.int64Attr(0)}})
          ->result(0);
  return b.broadcast(joined, index_type, {vector_dim});
}

} // namespace

bool GlobalToLocal::convertScatter(Operation &op) {
  const std::optional<GatherScatterDims> dims = readGatherScatterDims(op);
  const size_t inputs = (op.numOperands() - 1) / 2;
  if (!dims || inputs == 0) {
    localizeResults(op);
    return true;
  }
  writeGatherScatterDims(op, *dims, ctx); // as MLIR prints them
  Value *indices = op.operand(inputs);
  Value *updates = op.operand(inputs + 1);
  const TensorSharding *sharding = globalSharding(op.operand(0));
  const TensorSharding *update_sharding = globalSharding(updates);
  const Mesh *mesh = sharding          ? lookupMesh(module, *sharding)
                     : update_sharding ? lookupMesh(module, *update_sharding)
                                       : nullptr;
  localizeResults(op);
  if (!mesh)
    return true;
  LocalBuilder b(ctx, op);
  // Updates split along their scatter (non-window) dimensions: one device
  // per group keeps the operand.
  std::vector<AxisRef> split;
  if (update_sharding)
    for (size_t d = 0; d < update_sharding->dims.size(); ++d)
      if (std::count(dims->offset_dims.begin(), dims->offset_dims.end(),
                     int64_t(d)) == 0)
        for (const AxisRef &axis : update_sharding->dims[d].axes)
          split.push_back(axis);
  const std::optional<double> identity =
      identityOf(op, op.operand(0)->type->element);
  if (!split.empty() && identity) {
    Type element = op.operand(0)->type->element;
    Value *neutral = b.splat(b.tensorOf({}, element), *identity);
    Value *is_first = isFirstOfGroup(b, *mesh, split);
    for (size_t i = 0; i < inputs; ++i)
      op.setOperand(i, keepWhere(b, is_first, op.operand(i), neutral));
  }
  // Indices into sharded operand dimensions become local.
  if (!sharding)
    return true;
  const std::vector<int64_t> &local = op.operand(0)->type->shape;
  std::vector<bool> sharded(dims->index_map.size(), false);
  bool any = false;
  for (size_t k = 0; k < dims->index_map.size(); ++k) {
    const size_t d = size_t(dims->index_map[k]);
    sharded[k] = d < sharding->dims.size() &&
                 shardedSize(sharding->dims[d], *mesh) > 1 &&
                 std::count(dims->operand_batching_dims.begin(),
                            dims->operand_batching_dims.end(), int64_t(d)) == 0;
    any = any || sharded[k];
  }
  if (!any)
    return true;
  std::vector<Value *> starts(sharded.size(), nullptr);
  for (size_t k = 0; k < sharded.size(); ++k)
    if (!sharded[k])
      starts[k] = b.scalarI64(0);
  for (size_t k = 0; k < sharded.size(); ++k)
    if (sharded[k]) {
      const size_t d = size_t(dims->index_map[k]);
      starts[k] =
          b.convert(shardOffset(b, *mesh, sharding->dims[d].axes, local[d]),
                    indices->type->element);
    }
  Value *shift = indexVector(b, starts, indices->type, dims->index_vector_dim);
  op.setOperand(inputs, b.binary("stablehlo.subtract", indices, shift));
  return true;
}

bool GlobalToLocal::convertGather(Operation &op) {
  const std::optional<GatherScatterDims> dims = readGatherScatterDims(op);
  Value *operand = op.operand(0);
  const TensorSharding *sharding = globalSharding(operand);
  const Attr *sizes_attr = op.attrs.get("slice_sizes");
  const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
  if (!dims || !mesh || !sizes_attr ||
      sharding->dims.size() != operand->type->shape.size()) {
    localizeResults(op);
    return true;
  }
  const std::vector<int64_t> &local = operand->type->shape;
  // The operand's real size: a padded dimension's last shard holds
  // padding, which a clamped index must not reach.
  const std::vector<int64_t> &unpadded = globalType(operand)->shape;
  std::vector<int64_t> slice_sizes = sizes_attr->ints();
  std::vector<size_t> indexed, unindexed; // operand dims, by kind
  for (size_t d = 0; d < local.size(); ++d) {
    const int64_t shards = shardedSize(sharding->dims[d], *mesh);
    const bool batching =
        std::count(dims->operand_batching_dims.begin(),
                   dims->operand_batching_dims.end(), int64_t(d)) != 0;
    if (shards <= 1 || batching)
      continue;
    // Sliced whole (padded or not): the local dimension, which the result
    // holds sharded as the operand is.
    if (slice_sizes[d] == local[d] * shards || slice_sizes[d] == unpadded[d]) {
      slice_sizes[d] = local[d];
      continue;
    }
    const bool in_map = std::count(dims->index_map.begin(),
                                   dims->index_map.end(), int64_t(d)) != 0;
    (in_map ? indexed : unindexed).push_back(d);
  }
  op.attrs.set(ctx.intern("slice_sizes"),
               ctx.attrs.denseArray(ctx.types.element("i64"), slice_sizes));
  writeGatherScatterDims(op, *dims, ctx); // as MLIR prints them
  localizeResults(op);
  if (indexed.empty() && unindexed.empty())
    return true;

  LocalBuilder b(ctx, op);
  Value *indices = op.operand(1);
  Type index_type = indices->type;
  const int64_t vector_dim = dims->index_vector_dim;
  const size_t count = dims->index_map.size();
  auto global = [&](size_t d) {
    return std::min(local[d] * shardedSize(sharding->dims[d], *mesh),
                    unpadded[d]);
  };
  Value *mask = nullptr;
  if (!indexed.empty()) {
    // Clamped as gather clamps start indices, then made local.
    Value *zero = b.splat(index_type, 0);
    Value *upper = nullptr;
    if (count == 1) {
      upper =
          b.splat(index_type, double(global(size_t(dims->index_map[0])) - 1));
    } else {
      std::vector<int64_t> limits;
      for (int64_t d : dims->index_map)
        limits.push_back(global(size_t(d)) - 1);
      upper = b.broadcast(b.vectorI64(limits), index_type, {vector_dim});
    }
    Value *clamped =
        b.create("stablehlo.clamp", {zero, indices, upper}, {index_type})
            ->result(0);
    std::vector<Value *> starts(count), lasts(count);
    Type element = index_type->element;
    for (size_t k = 0; k < count; ++k) {
      const size_t d = size_t(dims->index_map[k]);
      if (std::find(indexed.begin(), indexed.end(), d) == indexed.end())
        continue;
      starts[k] = b.convert(
          shardOffset(b, *mesh, sharding->dims[d].axes, local[d]), element);
      lasts[k] =
          b.binary("stablehlo.add", starts[k],
                   b.splat(b.tensorOf({}, element), double(local[d] - 1)));
    }
    // Unsharded index components: from 0 to the last global index.
    for (size_t k = 0; k < count; ++k)
      if (!starts[k]) {
        starts[k] = b.scalarI64(0);
        lasts[k] = b.scalarI64(global(size_t(dims->index_map[k])) - 1);
      }
    Value *first = indexVector(b, starts, index_type, vector_dim);
    Value *last = indexVector(b, lasts, index_type, vector_dim);
    op.setOperand(1, b.binary("stablehlo.subtract", clamped, first));
    Value *above = b.compare("GE", clamped, first);
    Value *below = b.compare("LE", clamped, last);
    mask = b.binary("stablehlo.and", above, below);
  }
  // Dimensions read at index 0: only the first shard's devices have it.
  Value *first_shard = nullptr;
  for (size_t d : unindexed) {
    Value *offset = shardOffset(b, *mesh, sharding->dims[d].axes, local[d]);
    Value *at_zero = b.compare("EQ", offset, b.scalarI64(0));
    first_shard =
        first_shard ? b.binary("stablehlo.and", first_shard, at_zero) : at_zero;
  }
  if (mask && first_shard)
    mask = b.binary("stablehlo.and", mask,
                    b.broadcast(first_shard, mask->type, {}));

  // After the gather: keep what this device held, zeros elsewhere.
  Operation *after = op.nextInBlock();
  LocalBuilder post(ctx, *after);
  Value *gathered = op.result(0);
  Type result_type = gathered->type;
  Type flags = post.tensorOf(result_type->shape, ctx.types.element("i1"));
  Value *keep = nullptr;
  if (mask) {
    if (vector_dim < int64_t(index_type->shape.size()))
      mask = allAlong(post, mask, vector_dim);
    std::vector<int64_t> batch;
    for (int64_t d = 0; d < int64_t(result_type->shape.size()); ++d)
      if (std::count(dims->offset_dims.begin(), dims->offset_dims.end(), d) ==
          0)
        batch.push_back(d);
    keep = post.broadcast(mask, flags, batch);
  } else {
    keep = post.broadcast(first_shard, flags, {});
  }
  Value *zeros = post.splat(result_type, 0);
  std::vector<OpOperand *> uses;
  for (OpOperand *use = gathered->firstUse(); use; use = use->next_use)
    uses.push_back(use);
  Value *selected =
      post.create("stablehlo.select", {keep, gathered, zeros}, {result_type})
          ->result(0);
  for (OpOperand *use : uses)
    use->set(selected);
  return true;
}

} // namespace shardlab
