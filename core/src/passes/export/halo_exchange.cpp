// The halo exchanges of -sdy-resolve-permutation-factors
// (enable-halo-exchange=true): instead of replicating a dimension, each
// device receives the few rows it lacks from its neighbours.
//
// Pad and slice, per moving dimension, inside a manual computation:
//   rows = concatenate(left neighbours' rows..., own rows, right ones...)
//   buffer = pad(rows, low = high = L_out * (interior + 1), interior)
//   out = dynamic_slice(buffer, max(index * stride + offset, 0), L_out)
// where index is the device's shard index (partition_id divided and taken
// modulo along the dimension's axes), stride = L_out - L_in * (interior + 1)
// and offset = the buffer position of the device's first output row on
// device 0. Example: tensor<4x8> sharded [{"a"}, {"b"}] over a=2, b=2,
// padded low = [-1, 0], high = [4, 0]: each device concatenates its 2 rows
// with its right neighbour's (a collective permute [[2, 0], [3, 1]]), pads
// by 4 on both sides and takes 4 rows from 5 + 2 * index.
//
// Reshape splitting one dimension: the same buffer of neighbouring rows,
// and a window of the flat output length at a start read from a table by
// mesh position, reshaped to the device's output block.
//
// Reverse: the dimension is reversed on a mesh whose device ids are
// reversed along its axes (`<mesh>_reversed`), then resharded to the
// original mesh (a collective permute later). When the shards do not
// divide the dimension its padding would end up in front, so the rows are
// first shifted right by the padding, each device taking its left
// neighbours' last rows.
#include "local_builder.h"
#include "permutation_resolver.h"

#include "passes/pass_utils.h"
#include "rules/stablehlo_attrs.h"
#include "sharding/device_layout.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>

namespace shardlab {
namespace {

bool isManual(const AxisRef &ref, const std::vector<std::string> &manual) {
  return std::find(manual.begin(), manual.end(), ref.name) != manual.end();
}

// Shards of dimension `dim` of `sharding` along the manual axes only.
int64_t manualShards(const TensorSharding &sharding, size_t dim,
                     const Mesh &mesh, const std::vector<std::string> &manual) {
  int64_t shards = 1;
  if (dim < sharding.dims.size())
    for (const AxisRef &ref : sharding.dims[dim].axes)
      if (isManual(ref, manual))
        shards *= axisRefSize(ref, mesh);
  return shards;
}

// `shape` rounded up (padded) or divided (local) by the manual shards.
std::vector<int64_t> alongManual(std::vector<int64_t> shape,
                                 const TensorSharding &sharding,
                                 const Mesh &mesh,
                                 const std::vector<std::string> &manual,
                                 bool local) {
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t n = manualShards(sharding, d, mesh, manual);
    const int64_t per_shard = (shape[d] + n - 1) / n;
    shape[d] = local ? per_shard : per_shard * n;
  }
  return shape;
}

std::vector<std::string> unionInMeshOrder(std::vector<std::string> a,
                                          const std::vector<std::string> &b,
                                          const Mesh &mesh) {
  for (const std::string &name : b)
    if (std::find(a.begin(), a.end(), name) == a.end())
      a.push_back(name);
  std::sort(a.begin(), a.end(),
            [&](const std::string &x, const std::string &y) {
              return mesh.axisIndex(x) < mesh.axisIndex(y);
            });
  return a;
}

std::vector<int64_t> allDims(size_t rank) {
  std::vector<int64_t> dims(rank);
  for (size_t d = 0; d < rank; ++d)
    dims[d] = int64_t(d);
  return dims;
}

bool isIota(const Mesh &mesh) {
  for (size_t i = 0; i < mesh.device_ids.size(); ++i)
    if (mesh.device_ids[i] != int64_t(i))
      return false;
  return true;
}

} // namespace

void PermutationResolver::annotate(Operation *op,
                                   const TensorSharding &sharding) {
  op->attrs.set(ctx_.intern("sdy.sharding"),
                ctx_.attrs.shardingPerValue({sharding}));
}

Value *PermutationResolver::meshPositionValue(LocalBuilder &b,
                                              const Mesh &mesh) {
  Value *id = b.deviceIndex(use_replica_id_);
  if (isIota(mesh))
    return id;
  std::vector<int64_t> position_of(mesh.device_ids.size(), 0);
  for (size_t p = 0; p < mesh.device_ids.size(); ++p)
    if (mesh.device_ids[p] >= 0 &&
        size_t(mesh.device_ids[p]) < position_of.size())
      position_of[size_t(mesh.device_ids[p])] = int64_t(p);
  return b.lookupAt(position_of, id);
}

Value *PermutationResolver::shardIndexValue(LocalBuilder &b, const Mesh &mesh,
                                            const std::vector<AxisRef> &axes) {
  Value *position = meshPositionValue(b, mesh);
  // The weight of one step of each axis in the mesh position.
  std::vector<int64_t> weights, sizes;
  for (const AxisRef &ref : axes) {
    const int axis = mesh.axisIndex(ref.name);
    int64_t weight = mesh.axes[size_t(axis)].size /
                     (subAxisPreSize(ref) * axisRefSize(ref, mesh));
    for (size_t j = size_t(axis) + 1; j < mesh.axes.size(); ++j)
      weight *= mesh.axes[j].size;
    weights.push_back(weight);
    sizes.push_back(axisRefSize(ref, mesh));
  }
  bool consecutive = !axes.empty();
  for (size_t k = 0; k + 1 < axes.size(); ++k)
    consecutive = consecutive && weights[k] == weights[k + 1] * sizes[k + 1];
  if (!consecutive) {
    std::vector<int64_t> table;
    for (int64_t p = 0; p < mesh.totalSize(); ++p)
      table.push_back(indexAlongAxes(mesh, axes, meshCoordinates(mesh, p)));
    return b.lookupAt(table, position);
  }
  int64_t count = 1;
  for (int64_t size : sizes)
    count *= size;
  Value *index = position;
  if (weights.back() > 1)
    index = b.binary("stablehlo.divide", index, b.scalarI64(weights.back()));
  return b.binary("stablehlo.remainder", index, b.scalarI64(count));
}

Value *PermutationResolver::permute(LocalBuilder &b, Value *value,
                                    const Mesh &mesh,
                                    const std::vector<AxisRef> &axes,
                                    int64_t hops) {
  const int64_t shards = axesTotalSize(axes, mesh);
  std::vector<std::vector<int64_t>> pairs;
  for (int64_t p = 0; p < mesh.totalSize(); ++p) {
    const std::vector<int64_t> coords = meshCoordinates(mesh, p);
    const int64_t target = indexAlongAxes(mesh, axes, coords) + hops;
    if (target < 0 || target >= shards)
      continue;
    const int64_t to =
        meshPosition(mesh, coordinatesWithIndex(mesh, axes, coords, target));
    pairs.push_back({deviceIdAt(mesh, p), deviceIdAt(mesh, to)});
  }
  return b
      .create("stablehlo.collective_permute", {value}, {value->type},
              {{"channel_handle", channelHandleAttr(ctx_, next_channel_++)},
               {"source_target_pairs", b.denseMatrixAttr(pairs)}})
      ->result(0);
}

Operation *PermutationResolver::manualComputation(
    Operation &before, const std::vector<Value *> &operands,
    const std::vector<TensorSharding> &in, const TensorSharding &out,
    const std::vector<std::string> &manual_axes, const Mesh &mesh) {
  LocalBuilder b(ctx_, before);
  Operation *manual = b.create(
      "sdy.manual_computation", operands, {},
      {{"in_shardings", ctx_.attrs.shardingPerValue(in)},
       {"out_shardings", ctx_.attrs.shardingPerValue({out})},
       {"manual_axes", ctx_.attrs.make(Attr{
                           AttrKind::ManualAxes, manual_axes, nullptr, {}})}});
  Block &body = manual->addRegion().addBlock();
  for (size_t i = 0; i < operands.size(); ++i)
    body.addArgument(b.reshaped(operands[i]->type,
                                alongManual(operands[i]->type->shape, in[i],
                                            mesh, manual_axes, true)),
                     before.loc);
  body.push_back(makeOp(ctx_, "sdy.return", {}, {}, before.loc));
  return manual;
}

Value *PermutationResolver::finishManualComputation(
    Operation *manual, Value *result, const TensorSharding &out,
    const Mesh &mesh, const std::vector<std::string> &manual_axes,
    const std::vector<int64_t> &shape) {
  Block &body = manual->region(0).front();
  body.back()->setOperands({result});
  std::vector<int64_t> global = result->type->shape;
  for (size_t d = 0; d < global.size(); ++d)
    global[d] *= manualShards(out, d, mesh, manual_axes);
  LocalBuilder after(ctx_, *manual->nextInBlock());
  manual->setResultTypes({after.reshaped(result->type, global)});
  Value *value = manual->result(0);
  if (global == shape)
    return value;
  Operation *slice = after.sliceFromStart(value, shape);
  annotate(slice, out);
  return slice->result(0);
}

Value *PermutationResolver::withNeighbourRows(LocalBuilder &b, Value *rows,
                                              size_t dim, int64_t left,
                                              int64_t right, const Mesh &mesh,
                                              const TensorSharding &sharding) {
  const std::vector<AxisRef> &axes = sharding.dims[dim].axes;
  std::vector<Value *> parts;
  for (int64_t k = left; k >= 1; --k)
    parts.push_back(permute(b, rows, mesh, axes, k));
  parts.push_back(rows);
  for (int64_t k = 1; k <= right; ++k)
    parts.push_back(permute(b, rows, mesh, axes, -k));
  if (parts.size() == 1)
    return rows;
  Operation *concat = b.concatenate(parts, int64_t(dim));
  annotate(concat, replicated(sharding, rows->type->shape.size()));
  return concat->result(0);
}

Value *PermutationResolver::haloStep(LocalBuilder &b, Value *rows,
                                     Value *pad_value, size_t dim,
                                     const DimShift &shift, const Mesh &mesh,
                                     const TensorSharding &sharding) {
  const size_t rank = rows->type->shape.size();
  const std::vector<AxisRef> &axes = sharding.dims[dim].axes;
  const TensorSharding closed = replicated(sharding, rank);
  const int64_t step = shift.interior + 1;
  Value *joined = withNeighbourRows(b, rows, dim, shift.left_hops,
                                    shift.right_hops, mesh, sharding);
  const int64_t border = shift.out_local * step;
  std::vector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  low[dim] = high[dim] = border;
  interior[dim] = shift.interior;
  Operation *buffer = b.pad(joined, pad_value, low, high, interior);
  annotate(buffer, closed);
  Value *index = shardIndexValue(b, mesh, axes);
  Value *stride = b.scalarI64(shift.out_local - shift.in_local * step);
  Value *offset =
      b.scalarI64(border - shift.low + shift.left_hops * shift.in_local * step);
  Value *start = b.binary(
      "stablehlo.add", b.binary("stablehlo.multiply", index, stride), offset);
  Value *zero = b.scalarI64(0);
  std::vector<Value *> starts(rank, zero);
  starts[dim] = b.binary("stablehlo.maximum", start, zero);
  std::vector<int64_t> sizes = rows->type->shape;
  sizes[dim] = shift.out_local;
  Value *window = b.dynamicSlice(buffer->result(0), starts, sizes);
  annotate(window->defining_op, closed);
  return window;
}

void PermutationResolver::haloPadOrSlice(Operation &op,
                                         const TensorSharding &in,
                                         const TensorSharding &out,
                                         const Mesh &mesh,
                                         const std::vector<DimShift> &shifts) {
  const bool is_pad = op.is("stablehlo.pad");
  LocalBuilder outer(ctx_, op);
  Value *input = op.operand(0);
  const std::vector<int64_t> shape = input->type->shape;
  const size_t rank = shape.size();
  Value *pad_value =
      is_pad ? op.operand(1)
             : outer.splat(outer.tensorOf({}, input->type->element), 0);
  const std::vector<int64_t> padded = paddedShape(shape, in, mesh);
  if (padded != shape) {
    Operation *pre = outer.padHighTo(input, pad_value, padded);
    annotate(pre, in);
    input = pre->result(0);
  }
  const std::vector<std::string> manual_axes =
      unionInMeshOrder(axisNamesOf(in, allDims(rank), mesh),
                       axisNamesOf(out, allDims(rank), mesh), mesh);
  Operation *manual = manualComputation(
      op, {input, pad_value}, {in, replicated(in, 0)}, out, manual_axes, mesh);
  Block &body = manual->region(0).front();
  LocalBuilder b(ctx_, *body.back());
  Value *rows = body.argument(0);
  for (size_t d = 0; d < rank; ++d)
    if (shifts[d].shards > 1 && !shifts[d].isIdentity())
      rows = haloStep(b, rows, body.argument(1), d, shifts[d], mesh, in);
  // What the unsharded dimensions do, on whole rows.
  std::vector<int64_t> local = rows->type->shape;
  std::vector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  std::vector<int64_t> start(rank, 0), limit = local, strides(rank, 1);
  bool any = false;
  for (size_t d = 0; d < rank; ++d) {
    if (shifts[d].shards > 1)
      continue;
    if (is_pad) {
      low[d] = shifts[d].low;
      high[d] = shifts[d].high;
      interior[d] = shifts[d].interior;
      any = any || low[d] || high[d] || interior[d];
    } else {
      start[d] = -shifts[d].low;
      limit[d] = shape[d] + shifts[d].high;
      strides[d] = rules::intsAttr(op, "strides")
                       .value_or(std::vector<int64_t>(rank, 1))[d];
      any = any || start[d] != 0 || limit[d] != local[d] || strides[d] != 1;
    }
  }
  if (any) {
    Operation *last = is_pad
                          ? b.pad(rows, body.argument(1), low, high, interior)
                          : b.slice(rows, start, limit, strides);
    annotate(last, replicated(in, rank));
    rows = last->result(0);
  }
  Value *result = finishManualComputation(manual, rows, out, mesh, manual_axes,
                                          op.result(0)->type->shape);
  op.result(0)->replaceAllUsesWith(result);
  eraseOp(op);
  changed_ = true;
}

void PermutationResolver::haloReshape(Operation &op, const TensorSharding &in,
                                      const TensorSharding &out,
                                      const Mesh &mesh,
                                      const ReshapeGroup &group,
                                      const ReshapeMove &move) {
  LocalBuilder outer(ctx_, op);
  Value *input = op.operand(0);
  const std::vector<int64_t> shape = input->type->shape;
  const std::vector<int64_t> &out_shape = op.result(0)->type->shape;
  const size_t rank = shape.size(), dim = group.in_begin;
  Value *zero = outer.splat(outer.tensorOf({}, input->type->element), 0);
  std::vector<int64_t> group_out_dims;
  for (size_t d = group.out_begin; d < group.out_end; ++d)
    group_out_dims.push_back(int64_t(d));
  const std::vector<std::string> manual_axes =
      unionInMeshOrder(axisNamesOf(in, {int64_t(dim)}, mesh),
                       axisNamesOf(out, group_out_dims, mesh), mesh);
  const std::vector<int64_t> padded =
      alongManual(shape, in, mesh, manual_axes, false);
  if (padded != shape) {
    Operation *pre = outer.padHighTo(input, zero, padded);
    annotate(pre, in);
    input = pre->result(0);
  }
  Operation *manual = manualComputation(
      op, {input, zero}, {in, replicated(in, 0)}, out, manual_axes, mesh);
  Block &body = manual->region(0).front();
  LocalBuilder b(ctx_, *body.back());
  Value *rows = body.argument(0);
  const int64_t in_local = rows->type->shape[dim];
  Value *joined = withNeighbourRows(b, rows, dim, move.left_hops,
                                    move.right_hops, mesh, in);
  const int64_t border = move.out_flat_local;
  std::vector<int64_t> low(rank, 0), high(rank, 0), none(rank, 0);
  low[dim] = high[dim] = border;
  Operation *buffer = b.pad(joined, body.argument(1), low, high, none);
  annotate(buffer, replicated(in, rank));
  // Where each device's output run starts in the buffer, by mesh position.
  const int64_t last_start =
      buffer->result(0)->type->shape[dim] - move.out_flat_local;
  std::vector<int64_t> starts_by_position;
  for (size_t p = 0; p < move.flat_start.size(); ++p)
    starts_by_position.push_back(
        std::clamp<int64_t>(border + move.flat_start[p] -
                                (move.in_index[p] - move.left_hops) * in_local,
                            0, last_start));
  Value *start = b.lookupAt(starts_by_position, meshPositionValue(b, mesh));
  std::vector<Value *> starts(rank, nullptr);
  starts[dim] = start;
  if (rank > 1) {
    Value *zero_index = b.scalarI64(0);
    for (Value *&other : starts)
      other = other ? other : zero_index;
  }
  std::vector<int64_t> sizes = rows->type->shape;
  sizes[dim] = move.out_flat_local;
  Value *run = b.dynamicSlice(buffer->result(0), starts, sizes);
  annotate(run->defining_op, replicated(in, rank));
  Value *block =
      b.reshape(run, alongManual(out_shape, out, mesh, manual_axes, true));
  Value *result =
      finishManualComputation(manual, block, out, mesh, manual_axes, out_shape);
  op.result(0)->replaceAllUsesWith(result);
  eraseOp(op);
  changed_ = true;
}

Value *PermutationResolver::shiftRows(LocalBuilder &b, Value *rows, size_t dim,
                                      int64_t shift, const Mesh &mesh,
                                      const TensorSharding &sharding) {
  const std::vector<AxisRef> &axes = sharding.dims[dim].axes;
  const size_t rank = rows->type->shape.size();
  const int64_t local = rows->type->shape[dim];
  // Row j comes from the device shift / local + (j < shift % local) hops
  // left: its last shift % local rows, then the first rows of the one
  // nearer.
  const int64_t far = shift / local + 1, part = shift % local;
  Value *nearer = far > 1 ? permute(b, rows, mesh, axes, far - 1) : rows;
  Value *farther = permute(b, rows, mesh, axes, far);
  std::vector<int64_t> start(rank, 0), limit = rows->type->shape,
                                       strides(rank, 1);
  start[dim] = local - part;
  Operation *tail = b.slice(farther, start, limit, strides);
  start[dim] = 0;
  limit[dim] = local - part;
  Operation *head = b.slice(nearer, start, limit, strides);
  Operation *concat =
      b.concatenate({tail->result(0), head->result(0)}, int64_t(dim));
  annotate(concat, replicated(sharding, rank));
  return concat->result(0);
}

std::string PermutationResolver::meshSymbolWithIds(const std::string &symbol,
                                                   const Mesh &mesh) {
  Block &top = module_.body();
  auto taken = [&](const std::string &name) {
    for (Operation &op : top) {
      const Attr *sym = op.attrs.get("sym_name");
      if (sym && sym->str() == name)
        return true;
    }
    return false;
  };
  for (Operation &op : top)
    if (op.is("sdy.mesh") && op.attrs.get("mesh")->mesh() == mesh)
      return op.attrs.get("sym_name")->str();
  const std::string base = symbol + "_reversed";
  std::string name = base;
  for (int64_t i = 0; taken(name); ++i)
    name = base + "_" + std::to_string(i);
  auto mesh_op = makeOp(ctx_, "sdy.mesh", {}, {}, module_.op().loc);
  mesh_op->attrs.set(ctx_.intern("sym_name"), ctx_.attrs.string(name));
  mesh_op->attrs.set(ctx_.intern("mesh"),
                     ctx_.attrs.make(Attr{AttrKind::Mesh, mesh, nullptr, {}}));
  top.insertBefore(top.front(), std::move(mesh_op));
  return name;
}

void PermutationResolver::haloReverse(Operation &op,
                                      const TensorSharding &sharding,
                                      const Mesh &mesh,
                                      const std::vector<int64_t> &dims) {
  const std::vector<int64_t> shape = op.result(0)->type->shape;
  std::vector<int64_t> shifted, padded = shape;
  for (int64_t dim : dims) {
    const int64_t shards = shardedSize(sharding.dims[size_t(dim)], mesh);
    padded[size_t(dim)] = (shape[size_t(dim)] + shards - 1) / shards * shards;
    if (padded[size_t(dim)] != shape[size_t(dim)])
      shifted.push_back(dim);
  }
  Value *input = op.operand(0);
  if (!shifted.empty()) {
    LocalBuilder outer(ctx_, op);
    Operation *pre = outer.padHighWithZeros(input, padded);
    annotate(pre, sharding);
    const std::vector<std::string> manual_axes =
        axisNamesOf(sharding, shifted, mesh);
    Operation *manual = manualComputation(op, {pre->result(0)}, {sharding},
                                          sharding, manual_axes, mesh);
    Block &body = manual->region(0).front();
    LocalBuilder b(ctx_, *body.back());
    Value *rows = body.argument(0);
    for (int64_t dim : shifted)
      rows =
          shiftRows(b, rows, size_t(dim),
                    padded[size_t(dim)] - shape[size_t(dim)], mesh, sharding);
    input = finishManualComputation(manual, rows, sharding, mesh, manual_axes,
                                    padded);
  }
  // The device holding shard i of a reversed dimension now holds n - 1 - i.
  Mesh reversed = mesh;
  reversed.device_ids.assign(size_t(mesh.totalSize()), 0);
  for (int64_t p = 0; p < mesh.totalSize(); ++p) {
    std::vector<int64_t> coords = meshCoordinates(mesh, p);
    for (int64_t dim : dims) {
      const std::vector<AxisRef> &axes = sharding.dims[size_t(dim)].axes;
      const int64_t shards = axesTotalSize(axes, mesh);
      coords = coordinatesWithIndex(
          mesh, axes, coords, shards - 1 - indexAlongAxes(mesh, axes, coords));
    }
    reversed.device_ids[size_t(p)] =
        deviceIdAt(mesh, meshPosition(mesh, coords));
  }
  TensorSharding on_reversed = sharding;
  if (sharding.mesh.symbol.empty())
    on_reversed.mesh.inline_mesh = reversed;
  else
    on_reversed.mesh = MeshRef{
        meshSymbolWithIds(sharding.mesh.symbol, reversed), std::nullopt};
  LocalBuilder at(ctx_, op);
  Operation *reverse =
      at.create("stablehlo.reverse", {input}, {input->type},
                {{"dimensions", rules::findAttr(op, "dimensions")}});
  annotate(reverse, on_reversed);
  Value *result = at.create("sdy.reshard", {reverse->result(0)}, {input->type},
                            {{"sharding", ctx_.attrs.sharding(sharding)}})
                      ->result(0);
  if (padded != shape) {
    Operation *slice = at.sliceFromStart(result, shape);
    annotate(slice, sharding);
    result = slice->result(0);
  }
  op.result(0)->replaceAllUsesWith(result);
  eraseOp(op);
  changed_ = true;
}

} // namespace shardlab
