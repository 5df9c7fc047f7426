// The ops that are more than a change of type in local form
// (global_to_local.h): sharded constants and iotas depend on where the
// device's shard starts; a slice or pad of a sharded dimension is cut at
// local bounds, with a dynamic_slice at the device's offset where shards
// do not all look alike; a dynamic_update_slice into a sharded dimension
// its update does not span writes the part of the update that lands in the
// device's shard; a concatenation along a sharded dimension has no local
// form.
#include "global_to_local.h"
#include "local_builder.h"

#include "passes/pass_utils.h"
#include "rules/stablehlo_attrs.h"
#include "sharding/device_layout.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <numeric>

namespace shardlab {
namespace {

const std::vector<int64_t> &intsOf(const Operation &op, std::string_view name) {
  return op.attrs.get(name)->ints();
}

// All elements equal: literals are compacted to one element when they are.
bool isSplat(const Attr &value) {
  const DenseReader reader = value.denseReader();
  return reader.valid() && reader.isSplat();
}

} // namespace

// A splat keeps its value at the local shape; other sharded literals stay
// global and each device slices its part out.
bool GlobalToLocal::convertConstant(Operation &op) {
  const TensorSharding *sharding = getSharding(op.result(0));
  if (!sharding && op.is("stablehlo.constant"))
    return true;
  const Attr *value = op.attrs.get("value");
  Type global = op.result(0)->type;
  Type local = localType(global, sharding);
  LocalBuilder b(ctx, op);
  const Mesh *mesh = sharding ? meshOf(*sharding, op) : nullptr;
  if (sharding && !mesh)
    return false;
  // Unsharded: the literal as it is. (A dimension of 1 over 2 shards has
  // the same local size, but the second shard is padding.)
  bool sharded = false;
  for (size_t d = 0; mesh && d < sharding->dims.size(); ++d)
    sharded = sharded || axesTotalSize(sharding->dims[d].axes, *mesh) > 1;
  if (!sharded) {
    replaceWith(op, b.constant(value));
    return true;
  }
  if (isSplat(*value) && local == global) {
    // Same local size: only a dimension of padding could differ, and a
    // splat's padding may hold its value.
    replaceWith(op, b.constant(value));
    return true;
  }
  if (isSplat(*value)) {
    Attr splat = *value;
    splat.type = local;
    replaceWith(op, b.constant(ctx.attrs.make(std::move(splat))));
    return true;
  }
  Value *whole = b.constant(value);
  // A dimension its shards do not divide is padded first: a dynamic_slice
  // that reached past the edge would be moved back (its start clamped).
  std::vector<int64_t> padded = global->shape;
  std::vector<Value *> starts;
  for (size_t d = 0; d < local->shape.size(); ++d) {
    const int64_t shards = axesTotalSize(sharding->dims[d].axes, *mesh);
    padded[d] = std::max(padded[d], local->shape[d] * shards);
    starts.push_back(
        shardOffset(b, *mesh, sharding->dims[d].axes, local->shape[d]));
  }
  if (padded != global->shape)
    whole = b.padHighWithZeros(whole, padded)->result(0);
  replaceWith(op, b.dynamicSlice(whole, starts, local->shape));
  return true;
}

// iota along a sharded dimension: the local iota plus the index where the
// device's shard starts.
bool GlobalToLocal::convertIota(Operation &op) {
  const TensorSharding *sharding = getSharding(op.result(0));
  const int64_t dim = op.attrs.get("iota_dimension")->intValue();
  Type local = localType(op.result(0)->type, sharding);
  LocalBuilder b(ctx, op);
  Value *iota = b.create("stablehlo.iota", {}, {local},
                         {{"iota_dimension", b.int64Attr(dim)}})
                    ->result(0);
  if (!sharding || size_t(dim) >= sharding->dims.size() ||
      sharding->dims[size_t(dim)].axes.empty()) {
    replaceWith(op, iota);
    return true;
  }
  const Mesh *mesh = meshOf(*sharding, op);
  if (!mesh)
    return false;
  Value *offset = shardOffset(b, *mesh, sharding->dims[size_t(dim)].axes,
                              local->shape[size_t(dim)]);
  Value *typed = b.convert(offset, local->element);
  replaceWith(op,
              b.binary("stablehlo.add", iota, b.broadcast(typed, local, {})));
  return true;
}

// A slice of a sharded dimension keeps its start and stride and ends after
// the local number of elements.
// A slice whose shards are smaller than its operand's (36 rows in 2 shards
// of 18 sliced [1:35] to 2 shards of 17) starts at another local row on
// each device: device i's rows begin at start + i * (17 - 18), row 1 on
// device 0 and row 0 on device 1. Each device slices at its own start (a
// table lookup; the operand is padded so that no start is clamped).
// -sdy-resolve-permutation-factors has made sure no row comes from another
// device. False when every device starts at the same row.
bool GlobalToLocal::sliceStartsByDevice(Operation &op,
                                        const TensorSharding &sharding,
                                        Type local) {
  const std::vector<int64_t> &starts = intsOf(op, "start_indices");
  const std::vector<int64_t> &strides = intsOf(op, "strides");
  Value *input = op.operand(0);
  const std::vector<int64_t> &in_local = input->type->shape;
  const Mesh *mesh = lookupMesh(module, sharding);
  if (!mesh)
    return false;
  std::vector<size_t> varying;
  for (size_t d = 0; d < in_local.size() && d < sharding.dims.size(); ++d)
    if (axesTotalSize(sharding.dims[d].axes, *mesh) > 1 &&
        local->shape[d] != in_local[d])
      varying.push_back(d);
  for (int64_t stride : strides)
    if (stride != 1)
      return false;
  if (varying.empty())
    return false;
  LocalBuilder b(ctx, op);
  std::vector<int64_t> room = in_local;
  for (size_t d : varying)
    room[d] += local->shape[d];
  Value *padded = b.padHighWithZeros(input, room)->result(0);
  std::vector<Value *> at;
  for (size_t d = 0; d < in_local.size(); ++d) {
    Value *start = b.scalarI64(starts[d]);
    if (std::find(varying.begin(), varying.end(), d) != varying.end())
      start = b.binary("stablehlo.add", start,
                       shardOffset(b, *mesh, sharding.dims[d].axes,
                                   local->shape[d] - in_local[d]));
    at.push_back(start);
  }
  Value *sliced = b.dynamicSlice(padded, at, local->shape);
  global_types_.emplace(sliced, op.result(0)->type);
  replaceWith(op, sliced);
  return true;
}

bool GlobalToLocal::convertSlice(Operation &op) {
  const TensorSharding *sharding = getSharding(op.result(0));
  // Unsharded or replicated: left as it is, sharding and all (as Shardy's
  // pass leaves a replicated op it has nothing to do on).
  if (!sharding || isFullyReplicated(*sharding)) {
    localizeResults(op);
    return true;
  }
  Type global = op.result(0)->type;
  Type local = localType(global, sharding);
  std::vector<int64_t> limits = intsOf(op, "limit_indices");
  const std::vector<int64_t> &starts = intsOf(op, "start_indices");
  const std::vector<int64_t> &strides = intsOf(op, "strides");
  const std::vector<int64_t> &in_shape = op.operand(0)->type->shape;
  if (sliceStartsByDevice(op, *sharding, local))
    return true;
  for (size_t d = 0; d < limits.size(); ++d)
    if (local->shape[d] != global->shape[d])
      limits[d] =
          std::min(in_shape[d], starts[d] + local->shape[d] * strides[d]);
  op.attrs.set(ctx.intern("limit_indices"),
               ctx.attrs.denseArray(ctx.types.element("i64"), limits));
  dropSharding(op);
  setLocalType(op.result(0), local);
  return true;
}

namespace {

// How one dimension of a pad is done locally: the pad every device
// applies, and where each shard (by index) starts in its padded tensor.
struct LocalPadDim {
  int64_t low = 0, high = 0, interior = 0;
  std::vector<int64_t> offsets; ///< by shard index; empty: all zero
};

// Shard k of the output starts at k * out; its first input element is
// input element k * in, at low + k * in * (interior + 1) globally. Padding
// every shard with the same low (the largest any shard needs) and high
// makes each shard's output a window of its padded tensor.
LocalPadDim localPadDim(int64_t low, int64_t high, int64_t interior, int64_t in,
                        int64_t out, int64_t shards) {
  const int64_t stride = interior + 1;
  LocalPadDim pad{low, high, interior, {}};
  if (shards <= 1)
    return pad;
  int64_t local_low = 0;
  for (int64_t k = 0; k < shards; ++k)
    local_low = std::max(local_low, low + k * (in * stride - out));
  int64_t end = 0;
  bool shifted = false;
  std::vector<int64_t> offsets;
  for (int64_t k = 0; k < shards; ++k) {
    const int64_t offset = k * out - low - k * in * stride + local_low;
    offsets.push_back(offset);
    shifted = shifted || offset != 0;
    end = std::max(end, offset + out);
  }
  pad.low = local_low;
  pad.high = end - (local_low + (in - 1) * stride + 1);
  if (shifted)
    pad.offsets = std::move(offsets);
  return pad;
}

} // namespace

bool GlobalToLocal::convertPad(Operation &op) {
  const TensorSharding *sharding = getSharding(op.result(0));
  if (!sharding || isFullyReplicated(*sharding)) { // as convertSlice
    localizeResults(op);
    return true;
  }
  const Mesh *mesh = meshOf(*sharding, op);
  if (!mesh)
    return false;
  Type local = localType(op.result(0)->type, sharding);
  const std::vector<int64_t> &in = op.operand(0)->type->shape;
  const std::vector<int64_t> &lows = intsOf(op, "edge_padding_low");
  const std::vector<int64_t> &highs = intsOf(op, "edge_padding_high");
  const std::vector<int64_t> &interiors = intsOf(op, "interior_padding");
  std::vector<LocalPadDim> dims;
  std::vector<int64_t> low, high, padded;
  bool needs_slice = false;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t shards = shardedSize(sharding->dims[d], *mesh);
    dims.push_back(localPadDim(lows[d], highs[d], interiors[d], in[d],
                               local->shape[d], shards));
    const LocalPadDim &pad = dims.back();
    low.push_back(pad.low);
    high.push_back(pad.high);
    padded.push_back(pad.low + pad.high +
                     (in[d] > 0 ? (in[d] - 1) * (pad.interior + 1) + 1 : 0));
    needs_slice =
        needs_slice || !pad.offsets.empty() || padded.back() != local->shape[d];
  }
  LocalBuilder b(ctx, op);
  Value *result = b.create("stablehlo.pad", {op.operand(0), op.operand(1)},
                           {needs_slice ? b.reshaped(local, padded) : local},
                           {{"edge_padding_low", b.denseArrayAttr(low)},
                            {"edge_padding_high", b.denseArrayAttr(high)},
                            {"interior_padding", b.denseArrayAttr(interiors)}})
                      ->result(0);
  if (needs_slice) {
    std::vector<Value *> starts;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].offsets.empty()) {
        starts.push_back(b.scalarI64(0));
        continue;
      }
      std::vector<int64_t> table =
          shardIndexByDevice(*mesh, sharding->dims[d].axes);
      for (int64_t &entry : table)
        entry = dims[d].offsets[size_t(entry)];
      starts.push_back(b.lookup(table, useReplicaId()));
    }
    result = b.dynamicSlice(result, starts, local->shape);
  }
  replaceWith(op, result);
  return true;
}

// Feature and batch groups split across devices with the dimension that
// holds them: a device convolves fewer groups.
bool GlobalToLocal::convertConvolution(Operation &op) {
  const TensorSharding *sharding = getSharding(op.result(0));
  localizeResults(op);
  const Attr *dims_attr = op.attrs.get("dimension_numbers");
  const std::optional<rules::ConvDims> dims =
      dims_attr && dims_attr->kind == AttrKind::Opaque
          ? rules::parseConvDims(dims_attr->text)
          : std::nullopt;
  if (!sharding || !dims)
    return true;
  const Mesh *mesh = meshOf(*sharding, op);
  if (!mesh)
    return false;
  auto shards = [&](const TensorSharding *s, int64_t dim) -> int64_t {
    return s && dim >= 0 && size_t(dim) < s->dims.size()
               ? shardedSize(s->dims[size_t(dim)], *mesh)
               : 1;
  };
  auto divide = [&](std::string_view name, int64_t by) {
    const Attr *count = op.attrs.get(name);
    if (!count || by <= 1)
      return;
    const int64_t groups = count->intValue();
    op.attrs.set(ctx.intern(name),
                 ctx.attrs.integer(groups / std::gcd(groups, by),
                                   ctx.types.element("i64")));
  };
  divide("feature_group_count",
         shards(globalSharding(op.operand(0)), dims->input_feature));
  divide("batch_group_count", shards(sharding, dims->output_feature));
  // Shardy rebuilds a convolution (without its sharding) when a tensor of
  // it is split; one whose tensors are all whole keeps its attributes.
  auto split = [&](const TensorSharding *s) {
    for (size_t d = 0; s && d < s->dims.size(); ++d)
      if (shardedSize(s->dims[d], *mesh) > 1)
        return true;
    return false;
  };
  if (split(sharding) || split(globalSharding(op.operand(0))) ||
      split(globalSharding(op.operand(1))))
    dropSharding(op);
  return true;
}

bool GlobalToLocal::checkConcatenate(Operation &op) {
  const TensorSharding *sharding = getSharding(op.result(0));
  const int64_t dim = op.attrs.get("dimension")->intValue();
  if (!sharding || size_t(dim) >= sharding->dims.size() ||
      sharding->dims[size_t(dim)].axes.empty())
    return true;
  diags.error(op.loc, "dimension " + std::to_string(dim) +
                          " is sharded but the concatenation is on this "
                          "dimension.");
  diags.error(op.loc, "failed to legalize operation 'stablehlo.concatenate' "
                      "that was explicitly marked illegal");
  return false;
}

// A dynamic_update_slice whose operand is split along a dimension the
// update does not span (Shardy's rule keeps the operand's dimension a
// pass-through factor and leaves it to XLA): on each device, the start
// clamped as the op clamps it, shifted to where the device's shard starts;
// the shard padded by the update's size on both sides, so that an update
// that starts before the shard or ends after it writes the padding there
// (the op would clamp it onto the shard's rows); then the shard cut out.
//
//   dynamic_update_slice %x, %u, %i    (%x: 16 rows over 4 devices, %u: 3)
// becomes, on each device (4 rows, shard starting at r)
//   %p = pad %x_local, low = [3], high = [3]                    (10 rows)
//   %s = clamp(0, %i, 13) - r + 3
//   %d = dynamic_update_slice %p, %u, %s
//   slice %d [3:7]
bool GlobalToLocal::convertDynamicUpdateSlice(Operation &op) {
  Value *operand = op.operand(0), *update = op.operand(1);
  const TensorSharding *sharding = globalSharding(operand);
  const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
  localizeResults(op);
  if (!mesh || !operand->type->isRankedTensor() ||
      !update->type->isRankedTensor())
    return true;
  const std::vector<int64_t> local = operand->type->shape;
  const std::vector<int64_t> global = globalType(operand)->shape;
  const std::vector<int64_t> piece = globalType(update)->shape;
  const size_t rank = local.size();
  if (op.numOperands() != 2 + rank || sharding->dims.size() != rank ||
      global.size() != rank || piece.size() != rank)
    return true;
  std::vector<int64_t> margin(rank, 0);
  bool any = false;
  for (size_t d = 0; d < rank; ++d)
    if (shardedSize(sharding->dims[d], *mesh) > 1 && piece[d] != global[d] &&
        update->type->shape[d] == piece[d]) {
      margin[d] = piece[d];
      any = true;
    }
  if (!any)
    return true;
  LocalBuilder b(ctx, op);
  for (size_t d = 0; d < rank; ++d) {
    if (margin[d] == 0)
      continue;
    Value *index = op.operand(2 + d);
    Type scalar = index->type;
    Value *last = b.splat(scalar, double(global[d] - piece[d]));
    Value *clamped =
        b.create("stablehlo.clamp", {b.splat(scalar, 0), index, last}, {scalar})
            ->result(0);
    Value *offset =
        b.convert(shardOffset(b, *mesh, sharding->dims[d].axes, local[d]),
                  scalar->element);
    Value *start = b.binary("stablehlo.subtract", clamped, offset);
    op.setOperand(2 + d, b.binary("stablehlo.add", start,
                                  b.splat(scalar, double(margin[d]))));
  }
  Value *zero = b.splat(b.tensorOf({}, operand->type->element), 0);
  Value *padded =
      b.pad(operand, zero, margin, margin, std::vector<int64_t>(rank, 0))
          ->result(0);
  op.setOperand(0, padded);
  Value *result = op.result(0);
  result->type = padded->type;
  LocalBuilder post(ctx, *op.nextInBlock());
  std::vector<int64_t> limit(rank);
  for (size_t d = 0; d < rank; ++d)
    limit[d] = margin[d] + local[d];
  Operation *shard =
      post.slice(result, margin, limit, std::vector<int64_t>(rank, 1));
  result->replaceAllUsesExcept(shard->result(0), shard);
  return true;
}

} // namespace shardlab
