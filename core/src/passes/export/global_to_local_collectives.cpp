// The sdy collectives in local form (global_to_local.h): all_gather,
// all_reduce, reduce_scatter, all_to_all and collective_permute become the
// StableHLO collectives over the device groups of their axes; all_slice
// needs no communication and becomes a dynamic_slice at the device's
// offset. A collective over several dimensions is one collective on a
// reshaped and transposed tensor (or, as options say, one per dimension,
// or an all_reduce and a slice).
#include "global_to_local.h"
#include "local_builder.h"

#include "passes/pass_utils.h"
#include "sharding/device_layout.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace shardlab {
namespace {

using DimAxes = std::vector<std::vector<AxisRef>>;

const DimAxes &perDimAxes(const Operation &op, std::string_view name) {
  return std::get<DimAxes>(op.attrs.get(name)->payload);
}

std::vector<size_t> dimsWithAxes(const DimAxes &axes) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < axes.size(); ++d)
    if (!axes[d].empty())
      dims.push_back(d);
  return dims;
}

std::vector<AxisRef> concatAxes(const DimAxes &axes,
                                const std::vector<size_t> &dims) {
  std::vector<AxisRef> all;
  for (size_t d : dims)
    all.insert(all.end(), axes[d].begin(), axes[d].end());
  return all;
}

// How an all_reduce / reduce_scatter combines its operands: its
// `reduction_kind`, else a sum. Shardy writes a sum after every reduce
// over a sharded dimension and every scatter whose updates are split
// across devices, but each device then holds a partial result of the op's
// combiner (convertScatter starts the others from its identity), and those
// combine by that combiner: a reduce-max's by a max, a multiply-scatter's
// by a product. The slices and pads between the op and the collective
// (pad-for-divisibility's) only move its elements.
std::string_view reductionKind(Operation &op) {
  const Attr *kind = op.attrs.get("reduction_kind");
  if (kind && kind->kind == AttrKind::String)
    return kind->str();
  Operation *def = op.operand(0)->defining_op;
  while (def && (def->is("stablehlo.slice") || def->is("stablehlo.pad")))
    def = def->operand(0)->defining_op;
  const bool one_input_reduce =
      def && def->is("stablehlo.reduce") && def->numOperands() == 2;
  if ((one_input_reduce || (def && def->is("stablehlo.scatter"))) &&
      !combinerKind(*def).empty())
    return combinerKind(*def);
  return "sum";
}

// The two-scalar reducer region of an all_reduce / reduce_scatter.
void addReducer(Context &ctx, Operation &op, Type element,
                std::string_view kind) {
  Block &block = op.addRegion().addBlock();
  Type scalar = ctx.types.rankedTensor({}, element);
  Value *lhs = block.addArgument(scalar, op.loc);
  Value *rhs = block.addArgument(scalar, op.loc);
  Operation *combine = block.push_back(
      makeOp(ctx, reductionOpName(kind), {lhs, rhs}, {scalar}, op.loc));
  block.push_back(
      makeOp(ctx, "stablehlo.return", {combine->result(0)}, {}, op.loc));
}

std::vector<int64_t> shapeOf(Value *value) { return value->type->shape; }

} // namespace

void GlobalToLocal::replaceWith(Operation &op, Value *value) {
  if (const TensorSharding *had = globalSharding(op.result(0));
      had && !getSharding(value))
    replaced_shardings_[value] = *had;
  op.result(0)->replaceAllUsesWith(value);
  eraseOp(op);
}

void GlobalToLocal::dropSharding(Operation &op) {
  if (const TensorSharding *had = getSharding(op.result(0)))
    replaced_shardings_[op.result(0)] = *had;
  op.attrs.erase("sdy.sharding");
}

void GlobalToLocal::keepOnlyCallee(Operation &call) {
  for (size_t i = 0; i < call.numResults(); ++i)
    if (const TensorSharding *had = getSharding(call.result(i)))
      replaced_shardings_[call.result(i)] = *had;
  const Attr *callee = call.attrs.get("callee");
  call.attrs.clear();
  if (callee)
    call.attrs.set("callee", callee);
}

const TensorSharding *GlobalToLocal::globalSharding(Value *value) const {
  if (auto outside = outside_shardings_.find(value);
      outside != outside_shardings_.end())
    return &outside->second;
  if (const TensorSharding *own = getSharding(value))
    return own;
  auto it = replaced_shardings_.find(value);
  return it == replaced_shardings_.end() ? nullptr : &it->second;
}

Value *GlobalToLocal::allReduce(LocalBuilder &b, const Mesh &mesh,
                                const TensorSharding &sharding, Value *input,
                                const std::vector<AxisRef> &axes,
                                std::string_view kind) {
  Operation *reduce =
      b.create("stablehlo.all_reduce", {input}, {input->type},
               {{"channel_handle", nextChannelHandle()},
                {"replica_groups", replicaGroups(b, mesh, sharding, axes)},
                {"use_global_device_ids", ctx.attrs.unit()}});
  addReducer(ctx, *reduce, input->type->element, kind);
  return reduce->result(0);
}

bool GlobalToLocal::convertAllGather(Operation &op) {
  const TensorSharding &out = opSharding(op, "out_sharding");
  const Mesh *mesh = meshOf(out, op);
  if (!mesh)
    return false;
  const DimAxes &axes = perDimAxes(op, "gathering_axes");
  const std::vector<size_t> dims = dimsWithAxes(axes);
  LocalBuilder b(ctx, op);
  Value *current = op.operand(0);
  auto gather = [&](Value *input, int64_t dim,
                    const std::vector<AxisRef> &group_axes) {
    std::vector<int64_t> shape = shapeOf(input);
    shape[size_t(dim)] *= axesTotalSize(group_axes, *mesh);
    return b
        .create("stablehlo.all_gather", {input},
                {b.reshaped(input->type, shape)},
                {{"all_gather_dim", b.int64Attr(dim)},
                 {"channel_handle", nextChannelHandle()},
                 {"replica_groups", replicaGroups(b, *mesh, out, group_axes)},
                 {"use_global_device_ids", ctx.attrs.unit()}})
        ->result(0);
  };
  if (dims.size() == 1 || (options.per_dim_all_gather && !dims.empty())) {
    for (size_t i = dims.size(); i-- > 0;)
      current = gather(current, int64_t(dims[i]), axes[dims[i]]);
  } else if (!dims.empty()) {
    // One all_gather of everything on a new major dimension, then each
    // gathered factor moves in front of its own dimension.
    const std::vector<int64_t> local = shapeOf(current);
    std::vector<int64_t> lifted{1};
    lifted.insert(lifted.end(), local.begin(), local.end());
    Value *gathered =
        gather(b.reshape(current, lifted), 0, concatAxes(axes, dims));
    std::vector<int64_t> split;
    for (size_t d : dims)
      split.push_back(axesTotalSize(axes[d], *mesh));
    const int64_t factors = int64_t(split.size());
    split.insert(split.end(), local.begin(), local.end());
    std::vector<int64_t> perm;
    for (size_t d = 0; d < local.size(); ++d) {
      const auto at = std::find(dims.begin(), dims.end(), d);
      if (at != dims.end())
        perm.push_back(at - dims.begin());
      perm.push_back(factors + int64_t(d));
    }
    Value *moved = b.transpose(b.reshape(gathered, split), perm);
    current = b.reshape(moved, localType(op.result(0)->type, &out)->shape);
  }
  replaceWith(op, current);
  return true;
}

bool GlobalToLocal::convertAllSlice(Operation &op) {
  const TensorSharding &out = opSharding(op, "out_sharding");
  const Mesh *mesh = meshOf(out, op);
  if (!mesh)
    return false;
  const DimAxes &axes = perDimAxes(op, "slicing_axes");
  if (dimsWithAxes(axes).empty()) {
    replaceWith(op, op.operand(0));
    return true;
  }
  const std::vector<int64_t> local = localType(op.result(0)->type, &out)->shape;
  LocalBuilder b(ctx, op);
  std::vector<Value *> starts;
  for (size_t d = 0; d < local.size(); ++d)
    starts.push_back(shardOffset(b, *mesh, axes[d], local[d]));
  replaceWith(op, b.dynamicSlice(op.operand(0), starts, local));
  return true;
}

bool GlobalToLocal::convertAllReduce(Operation &op) {
  const TensorSharding &out = opSharding(op, "out_sharding");
  const Mesh *mesh = meshOf(out, op);
  if (!mesh)
    return false;
  const auto &axes =
      std::get<std::vector<AxisRef>>(op.attrs.get("reduction_axes")->payload);
  if (axes.empty()) {
    replaceWith(op, op.operand(0));
    return true;
  }
  LocalBuilder b(ctx, op);
  replaceWith(op,
              allReduce(b, *mesh, out, op.operand(0), axes, reductionKind(op)));
  return true;
}

bool GlobalToLocal::convertReduceScatter(Operation &op) {
  const TensorSharding &out = opSharding(op, "out_sharding");
  const Mesh *mesh = meshOf(out, op);
  if (!mesh)
    return false;
  const DimAxes &axes = perDimAxes(op, "reduce_scatter_axes");
  const std::vector<size_t> dims = dimsWithAxes(axes);
  Value *input = op.operand(0);
  if (dims.empty()) {
    replaceWith(op, input);
    return true;
  }
  const std::vector<int64_t> local = localType(op.result(0)->type, &out)->shape;
  const std::string_view kind = reductionKind(op);
  LocalBuilder b(ctx, op);
  auto scatter = [&](Value *operand, int64_t dim,
                     const std::vector<AxisRef> &group_axes,
                     const std::vector<int64_t> &shape) {
    Operation *rs = b.create(
        "stablehlo.reduce_scatter", {operand}, {b.reshaped(input->type, shape)},
        {{"channel_handle", nextChannelHandle()},
         {"replica_groups", replicaGroups(b, *mesh, out, group_axes)},
         {"scatter_dimension", b.int64Attr(dim)},
         {"use_global_device_ids", ctx.attrs.unit()}});
    addReducer(ctx, *rs, input->type->element, kind);
    return rs->result(0);
  };
  if (dims.size() == 1) {
    replaceWith(op, scatter(input, int64_t(dims[0]), axes[dims[0]], local));
    return true;
  }
  if (options.combine_multi_dim_reduce_scatter) {
    // Each scattered dimension splits into [shards, local]; the shard
    // factors move to the front and become the one scattered dimension.
    const std::vector<int64_t> in_shape = shapeOf(input);
    std::vector<int64_t> split, front, rest;
    for (size_t d = 0; d < in_shape.size(); ++d) {
      if (!axes[d].empty()) {
        const int64_t shards = axesTotalSize(axes[d], *mesh);
        front.push_back(int64_t(split.size()));
        split.push_back(shards);
        split.push_back(in_shape[d] / shards);
        rest.push_back(int64_t(split.size()) - 1);
      } else {
        rest.push_back(int64_t(split.size()));
        split.push_back(in_shape[d]);
      }
    }
    std::vector<int64_t> perm = front;
    perm.insert(perm.end(), rest.begin(), rest.end());
    Value *moved = b.transpose(b.reshape(input, split), perm);
    std::vector<int64_t> merged{1};
    for (int64_t f : front)
      merged[0] *= split[size_t(f)];
    merged.insert(merged.end(), local.begin(), local.end());
    Value *flat = b.reshape(moved, merged);
    merged[0] = 1;
    Value *scattered = scatter(flat, 0, concatAxes(axes, dims), merged);
    replaceWith(op, b.reshape(scattered, local));
    return true;
  }
  // An all_reduce over every axis, then each device keeps its slice.
  Value *reduced =
      allReduce(b, *mesh, out, input, concatAxes(axes, dims), kind);
  std::vector<Value *> starts;
  for (size_t d = 0; d < local.size(); ++d)
    starts.push_back(shardOffset(b, *mesh, axes[d], local[d]));
  replaceWith(op, b.dynamicSlice(reduced, starts, local));
  return true;
}

bool GlobalToLocal::convertAllToAll(Operation &op) {
  const TensorSharding &out = opSharding(op, "out_sharding");
  const Mesh *mesh = meshOf(out, op);
  if (!mesh)
    return false;
  std::vector<AllToAllParam> params =
      std::get<std::vector<AllToAllParam>>(op.attrs.get("params")->payload);
  const std::vector<int64_t> local = localType(op.result(0)->type, &out)->shape;
  Value *input = op.operand(0);
  LocalBuilder b(ctx, op);
  auto exchange = [&](Value *operand, int64_t split_dim, int64_t concat_dim,
                      const std::vector<AxisRef> &group_axes,
                      const std::vector<int64_t> &shape) {
    return b
        .create("stablehlo.all_to_all", {operand},
                {b.reshaped(input->type, shape)},
                {{"channel_handle", nextChannelHandle()},
                 {"concat_dimension", b.int64Attr(concat_dim)},
                 {"replica_groups", replicaGroups(b, *mesh, out, group_axes)},
                 {"split_count", b.int64Attr(axesTotalSize(group_axes, *mesh))},
                 {"split_dimension", b.int64Attr(split_dim)}})
        ->result(0);
  };
  if (params.size() == 1) {
    const AllToAllParam &p = params.front();
    replaceWith(op, exchange(input, p.tgt_dim, p.src_dim, p.axes, local));
    return true;
  }
  // Several parameters: split each target dimension into [shards, rest],
  // bring the shard factors (in target-dimension order) to the front as one
  // dimension, exchange along it, and put each received factor in front of
  // its source dimension.
  std::stable_sort(params.begin(), params.end(),
                   [](const AllToAllParam &lhs, const AllToAllParam &rhs) {
                     return lhs.tgt_dim < rhs.tgt_dim;
                   });
  const std::vector<int64_t> in_shape = shapeOf(input);
  std::vector<int64_t> split, front, rest, rest_shape, factors;
  std::vector<AxisRef> group_axes;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const auto p = std::find_if(params.begin(), params.end(),
                                [&](const AllToAllParam &param) {
                                  return param.tgt_dim == int64_t(d);
                                });
    int64_t size = in_shape[d];
    if (p != params.end()) {
      const int64_t shards = axesTotalSize(p->axes, *mesh);
      front.push_back(int64_t(split.size()));
      split.push_back(shards);
      factors.push_back(shards);
      size /= shards;
    }
    rest.push_back(int64_t(split.size()));
    split.push_back(size);
    rest_shape.push_back(size);
  }
  for (const AllToAllParam &p : params)
    group_axes.insert(group_axes.end(), p.axes.begin(), p.axes.end());
  std::vector<int64_t> perm = front;
  perm.insert(perm.end(), rest.begin(), rest.end());
  Value *moved = b.transpose(b.reshape(input, split), perm);
  std::vector<int64_t> merged{std::accumulate(factors.begin(), factors.end(),
                                              int64_t{1}, std::multiplies<>())};
  merged.insert(merged.end(), rest_shape.begin(), rest_shape.end());
  Value *exchanged =
      exchange(b.reshape(moved, merged), 0, 0, group_axes, merged);
  std::vector<int64_t> unmerged = factors;
  unmerged.insert(unmerged.end(), rest_shape.begin(), rest_shape.end());
  std::vector<int64_t> back;
  const int64_t k = int64_t(factors.size());
  for (size_t d = 0; d < in_shape.size(); ++d) {
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].src_dim == int64_t(d))
        back.push_back(int64_t(i));
    back.push_back(k + int64_t(d));
  }
  Value *placed = b.transpose(b.reshape(exchanged, unmerged), back);
  replaceWith(op, b.reshape(placed, local));
  return true;
}

bool GlobalToLocal::convertCollectivePermute(Operation &op) {
  const TensorSharding &out = opSharding(op, "out_sharding");
  const Mesh *out_mesh = meshOf(out, op);
  if (!out_mesh)
    return false;
  Value *input = op.operand(0);
  const TensorSharding *in = globalSharding(input);
  const Mesh *in_mesh = in ? meshOf(*in, op) : out_mesh;
  if (!in_mesh)
    return false;
  const TensorSharding from =
      in ? *in
         : TensorSharding{out.mesh,
                          std::vector<DimSharding>(out.dims.size()),
                          {},
                          {},
                          ReductionKind::Sum};
  std::vector<std::vector<int64_t>> pairs;
  for (const auto &[source, target] :
       permutationPairs(*in_mesh, from, *out_mesh, out))
    pairs.push_back({source, target});
  LocalBuilder b(ctx, op);
  Value *result = b.create("stablehlo.collective_permute", {input},
                           {localType(op.result(0)->type, &out)},
                           {{"channel_handle", nextChannelHandle()},
                            {"source_target_pairs", b.denseMatrixAttr(pairs)}})
                      ->result(0);
  replaceWith(op, result);
  return true;
}

namespace {

// The value a device holding no part of an unreduced value contributes to
// its reduction (an infinity is an integer type's extreme: denseSplatOf).
double unreducedIdentity(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Max:
    return -std::numeric_limits<double>::infinity();
  case ReductionKind::Min:
    return std::numeric_limits<double>::infinity();
  case ReductionKind::Sum:
    break;
  }
  return 0.0;
}

} // namespace

// Each group along the axes keeps the value once: the first device holds it,
// the others the reduction's identity, so that the reduction gives it back.
bool GlobalToLocal::convertReplicatedToUnreduced(Operation &op) {
  const TensorSharding &out = opSharding(op, "out_sharding");
  const Mesh *mesh = meshOf(out, op);
  if (!mesh)
    return false;
  const auto &axes =
      std::get<std::vector<AxisRef>>(op.attrs.get("axes")->payload);
  Value *input = op.operand(0);
  if (axes.empty() || out.unreduced_kind != ReductionKind::Sum) {
    // max and min of copies of one value are that value.
    replaceWith(op, input);
    return true;
  }
  LocalBuilder b(ctx, op);
  Value *zero = b.splat(b.tensorOf({}, input->type->element), 0);
  Value *is_first = isFirstOfGroup(b, *mesh, axes);
  replaceWith(op, keepWhere(b, is_first, input, zero));
  return true;
}

// Each device's shard, in place in a tensor of the size the dimensions have
// without the axes (they are the minor-most of each dimension's, as an
// all_gather's), the reduction's identity around it.
bool GlobalToLocal::convertShardedToUnreduced(Operation &op) {
  const TensorSharding &out = opSharding(op, "out_sharding");
  const Mesh *mesh = meshOf(out, op);
  if (!mesh)
    return false;
  const DimAxes &axes = perDimAxes(op, "axes");
  Value *input = op.operand(0);
  if (dimsWithAxes(axes).empty()) {
    replaceWith(op, input);
    return true;
  }
  const std::vector<int64_t> local = localType(op.result(0)->type, &out)->shape;
  LocalBuilder b(ctx, op);
  Type element = input->type->element;
  Value *around = b.splat(b.tensorOf(local, element),
                          unreducedIdentity(out.unreduced_kind));
  std::vector<Value *> operands{around, input};
  for (size_t d = 0; d < local.size(); ++d)
    operands.push_back(shardOffset(b, *mesh, axes[d], input->type->shape[d]));
  replaceWith(
      op, b.create("stablehlo.dynamic_update_slice", operands, {around->type})
              ->result(0));
  return true;
}

} // namespace shardlab
