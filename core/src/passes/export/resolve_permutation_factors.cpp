// -sdy-resolve-permutation-factors: an op whose sharded dimension moves data
// between devices (a permutation factor: pad, slice, reverse, a reshape that
// splits or merges non-divisibly, a window of a convolution, reduce_window
// or select_and_scatter, a concatenated dimension) cannot run shard by
// shard. This pass makes it so, one of two ways:
//
// - replication: the operands are resharded with those
//   dimensions replicated, the op runs on whole dimensions, and its result
//   is resharded back; the reshards later become all-gathers and slices.
//
//     %0 = stablehlo.pad %arg0, %c, low = [-1, 0], high = [4, 0] ...
//          {sdy.sharding = <[<@mesh, [{"a"}, {"b"}]>]>}
//   becomes
//     %r = sdy.reshard %arg0 <@mesh, [{}, {"b"}]>
//     %p = stablehlo.pad %r, %c, ... {sdy.sharding = <[<@mesh, [{}, {"b"}]>]>}
//     %0 = sdy.reshard %p <@mesh, [{"a"}, {"b"}]>
//
// - halo exchange (the default, as Shardy's; `enable-halo-exchange=false`
//   replicates instead): for pads and slices that need rows from at most
//   two devices away on either side, for reshapes that split one
//   dimension, and for reverses, a manual computation where each device
//   receives just the rows it is missing with collective permutes
//   (halo_exchange.cpp). Other ops are replicated either way.
//
// Dimensions whose shards already hold what their devices compute (a pad
// that only adds rows where a device ends, a slice that keeps every
// device's rows in place) are left alone: convert-global-to-local handles
// them. Ops inside manual computations are already per device.
#include "export_passes.h"
#include "local_builder.h"
#include "permutation_resolver.h"

#include "passes/pass_utils.h"
#include "rules/stablehlo_attrs.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>

namespace shardlab {
namespace {

// Hops a halo exchange goes at most (further: replication).
constexpr int64_t kMaxHaloHops = 2;

bool sameAxes(const TensorSharding &a, const TensorSharding &b, size_t dim) {
  const bool a_has = dim < a.dims.size(), b_has = dim < b.dims.size();
  if (!a_has || !b_has)
    return (a_has ? a.dims[dim].axes.empty() : true) &&
           (b_has ? b.dims[dim].axes.empty() : true);
  return a.dims[dim].axes == b.dims[dim].axes;
}

std::vector<int64_t> ints(const Operation &op, std::string_view name,
                          size_t rank, int64_t fallback) {
  std::optional<std::vector<int64_t>> values = rules::intsAttr(op, name);
  if (!values || values->size() != rank)
    return std::vector<int64_t>(rank, fallback);
  return *values;
}

// Whether a strided slice along one dimension keeps each device's output
// rows on the device that holds them (out row o is input row
// start + o * stride).
bool stridedSliceStaysLocal(int64_t in_size, int64_t out_size, int64_t start,
                            int64_t stride, int64_t shards) {
  const int64_t in_local = (in_size + shards - 1) / shards;
  const int64_t out_local = (out_size + shards - 1) / shards;
  for (int64_t i = 0; i < shards; ++i) {
    const int64_t first = i * out_local;
    const int64_t last = std::min((i + 1) * out_local, out_size) - 1;
    if (first > last)
      continue;
    if ((start + first * stride) / in_local != i ||
        (start + last * stride) / in_local != i)
      return false;
  }
  return true;
}

// A window along one dimension that reads exactly the element it writes.
bool isPassthroughWindow(const Operation &op, size_t rank, int64_t window_size,
                         size_t attr_index) {
  if (window_size != 1)
    return false;
  for (const char *name :
       {"window_strides", "base_dilations", "window_dilations", "lhs_dilation",
        "rhs_dilation"}) {
    std::optional<std::vector<int64_t>> values = rules::intsAttr(op, name);
    if (values && attr_index < values->size() && (*values)[attr_index] != 1)
      return false;
  }
  if (const Attr *padding = rules::findAttr(op, "padding")) {
    std::optional<std::vector<int64_t>> values =
        rules::denseInts(*padding, 2 * rank);
    if (!values || values->size() < 2 * attr_index + 2 ||
        (*values)[2 * attr_index] != 0 || (*values)[2 * attr_index + 1] != 0)
      return false;
  }
  return true;
}

// Either spelling of a constant: propagation's import makes
// stablehlo.constant an sdy.constant, and export leaves it so.
bool isZeroConstant(const Value *value) {
  const Operation *def = value->defining_op;
  if (!def || !(def->is("stablehlo.constant") || def->is("sdy.constant")))
    return false;
  const Attr *attr = def->attrs.get("value");
  if (!attr || attr->kind != AttrKind::DenseElements)
    return false;
  // Zero of either sign: -0.0 pads as 0.0 does.
  const DenseReader reader = attr->denseReader();
  if (!reader.valid())
    return false;
  const unsigned parts =
      reader.layout().kind == ElementLayout::Kind::Complex ? 2 : 1;
  for (int64_t i = 0; i < (reader.isSplat() ? 1 : reader.size()); ++i)
    for (unsigned part = 0; part < parts; ++part) {
      const uint64_t bits = reader.bits(i, part);
      const FloatFormat *format = reader.layout().float_format;
      if (format ? !isZeroBits(bits, *format) : bits != 0)
        return false;
    }
  return true;
}

} // namespace

std::vector<std::string> axisNamesOf(const TensorSharding &sharding,
                                     const std::vector<int64_t> &dims,
                                     const Mesh &mesh) {
  std::vector<std::string> names;
  for (const MeshAxis &axis : mesh.axes)
    for (int64_t dim : dims)
      if (size_t(dim) < sharding.dims.size() &&
          std::any_of(
              sharding.dims[size_t(dim)].axes.begin(),
              sharding.dims[size_t(dim)].axes.end(),
              [&](const AxisRef &ref) { return ref.name == axis.name; }) &&
          std::find(names.begin(), names.end(), axis.name) == names.end())
        names.push_back(axis.name.str());
  return names;
}

PermutationResolver::PermutationResolver(Module &module, bool halo_exchange,
                                         bool use_replica_id)
    : module_(module), ctx_(module.ctx()), meshes_(module),
      halo_exchange_(halo_exchange), use_replica_id_(use_replica_id),
      next_channel_(firstFreeChannelId(module)) {}

TensorSharding PermutationResolver::replicated(const TensorSharding &like,
                                               size_t rank) {
  return fullyClosedSharding(like.mesh, rank);
}

void PermutationResolver::resolve(Operation &op) {
  if (op.is("stablehlo.pad") || op.is("stablehlo.slice"))
    resolvePadOrSlice(op);
  else if (op.is("stablehlo.reshape"))
    resolveReshape(op);
  else if (op.is("stablehlo.reverse"))
    resolveReverse(op);
  else if (op.is("stablehlo.convolution") || op.is("stablehlo.reduce_window") ||
           op.is("stablehlo.select_and_scatter"))
    resolveWindowed(op);
  else if (op.is("stablehlo.concatenate"))
    resolveConcatenate(op);
}

void PermutationResolver::replicate(
    Operation &op, const std::vector<std::vector<int64_t>> &operand_dims,
    const std::vector<std::vector<int64_t>> &result_dims) {
  auto cleared = [](TensorSharding sharding, const std::vector<int64_t> &dims) {
    for (int64_t dim : dims)
      if (size_t(dim) < sharding.dims.size())
        sharding.dims[size_t(dim)].axes.clear();
    return sharding;
  };
  for (size_t i = 0; i < operand_dims.size() && i < op.numOperands(); ++i) {
    const TensorSharding *current = getSharding(op.operand(i));
    if (!current || operand_dims[i].empty())
      continue;
    const TensorSharding wanted = cleared(*current, operand_dims[i]);
    if (wanted == *current)
      continue;
    reshardOperandBefore(op, i, wanted, ctx_);
    changed_ = true;
  }
  Operation *after = op.nextInBlock();
  for (size_t i = 0; i < result_dims.size() && i < op.numResults(); ++i) {
    const TensorSharding *current = getSharding(op.result(i));
    if (!current || result_dims[i].empty())
      continue;
    const TensorSharding wanted = cleared(*current, result_dims[i]);
    if (wanted == *current)
      continue;
    reshardResultBack(op, i, wanted, after, ctx_);
    changed_ = true;
  }
}

void PermutationResolver::resolvePadOrSlice(Operation &op) {
  const TensorSharding *out = getSharding(op.result(0));
  const Mesh *mesh = out ? meshOf(*out) : nullptr;
  if (!mesh)
    return;
  const std::vector<int64_t> &shape = op.operand(0)->type->shape;
  const size_t rank = shape.size();
  const TensorSharding *in_sharding = getSharding(op.operand(0));
  const TensorSharding in = in_sharding ? *in_sharding : replicated(*out, rank);
  const bool is_pad = op.is("stablehlo.pad");
  std::vector<int64_t> low, high, interior, strides(rank, 1);
  if (is_pad) {
    low = ints(op, "edge_padding_low", rank, 0);
    high = ints(op, "edge_padding_high", rank, 0);
    interior = ints(op, "interior_padding", rank, 0);
  } else {
    const std::vector<int64_t> start = ints(op, "start_indices", rank, 0);
    const std::vector<int64_t> limit = ints(op, "limit_indices", rank, 0);
    strides = ints(op, "strides", rank, 1);
    interior.assign(rank, 0);
    for (size_t d = 0; d < rank; ++d) {
      low.push_back(-start[d]);
      high.push_back(limit[d] - shape[d]);
    }
  }
  std::vector<DimShift> shifts;
  std::vector<int64_t> moving;
  // A device with no neighbour on a side receives zeros from the collective
  // permute; in a pad's output those rows stand for padding, so the halo
  // form is exact only when the padding value is zero.
  bool can_halo = halo_exchange_ && (!is_pad || isZeroConstant(op.operand(1)));
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in_shards = shardedSizeAt(in, d, *mesh);
    const int64_t out_shards = shardedSizeAt(*out, d, *mesh);
    if (!sameAxes(in, *out, d)) {
      shifts.push_back(analyzeDimShift(shape[d], low[d], high[d], 0, 1));
      moving.push_back(int64_t(d));
      can_halo = false;
      continue;
    }
    if (strides[d] != 1) {
      const int64_t out_size = op.result(0)->type->shape[d];
      shifts.push_back(analyzeDimShift(shape[d], low[d], high[d], 0, 1));
      if (in_shards > 1 && !stridedSliceStaysLocal(shape[d], out_size, -low[d],
                                                   strides[d], in_shards)) {
        moving.push_back(int64_t(d));
        can_halo = false;
      }
      continue;
    }
    shifts.push_back(
        analyzeDimShift(shape[d], low[d], high[d], interior[d], out_shards));
    const DimShift &shift = shifts.back();
    if (!shift.needsCommunication())
      continue;
    moving.push_back(int64_t(d));
    if (shift.left_hops > kMaxHaloHops || shift.right_hops > kMaxHaloHops)
      can_halo = false;
  }
  if (moving.empty())
    return;
  if (can_halo) {
    haloPadOrSlice(op, in, *out, *mesh, shifts);
    return;
  }
  replicate(op, {moving}, {moving});
}

void PermutationResolver::resolveReshape(Operation &op) {
  const TensorSharding *out = getSharding(op.result(0));
  const Mesh *mesh = out ? meshOf(*out) : nullptr;
  if (!mesh)
    return;
  const std::vector<int64_t> &in_shape = op.operand(0)->type->shape;
  const std::vector<int64_t> &out_shape = op.result(0)->type->shape;
  const TensorSharding *in_sharding = getSharding(op.operand(0));
  const TensorSharding in =
      in_sharding ? *in_sharding : replicated(*out, in_shape.size());
  std::vector<int64_t> in_dims, out_dims;
  size_t non_trivial = 0;
  const ReshapeGroup *moving_group = nullptr;
  ReshapeMove moving_move;
  const std::vector<ReshapeGroup> groups = reshapeGroups(in_shape, out_shape);
  for (const ReshapeGroup &group : groups) {
    non_trivial += group.isOneToOne() ? 0 : 1;
    ReshapeMove move =
        analyzeReshapeGroup(group, in_shape, in, out_shape, *out, *mesh);
    if (!move.needs_communication)
      continue;
    for (size_t d = group.in_begin; d < group.in_end; ++d)
      in_dims.push_back(int64_t(d));
    for (size_t d = group.out_begin; d < group.out_end; ++d)
      out_dims.push_back(int64_t(d));
    moving_group = moving_group ? nullptr : &group;
    moving_move = std::move(move);
  }
  if (in_dims.empty() && out_dims.empty())
    return;
  // One split group, nothing else reshaped: each device's output is one
  // run of the split dimension, a window of its neighbours' rows.
  if (halo_exchange_ && moving_group && non_trivial == 1 &&
      moving_group->isSplit() && moving_move.analyzed &&
      moving_move.contiguous && moving_move.left_hops <= kMaxHaloHops &&
      moving_move.right_hops <= kMaxHaloHops) {
    haloReshape(op, in, *out, *mesh, *moving_group, moving_move);
    return;
  }
  replicate(op, {in_dims}, {out_dims});
}

void PermutationResolver::resolveReverse(Operation &op) {
  const TensorSharding *out = getSharding(op.result(0));
  const Mesh *mesh = out ? meshOf(*out) : nullptr;
  if (!mesh)
    return;
  std::vector<int64_t> sharded;
  for (int64_t dim :
       rules::intsAttr(op, "dimensions").value_or(std::vector<int64_t>{}))
    if (shardedSizeAt(*out, size_t(dim), *mesh) > 1)
      sharded.push_back(dim);
  if (sharded.empty())
    return;
  const TensorSharding *in = getSharding(op.operand(0));
  if (halo_exchange_ && in && in->dims == out->dims) {
    haloReverse(op, *out, *mesh, sharded);
    return;
  }
  replicate(op, {sharded}, {sharded});
}

void PermutationResolver::resolveWindowed(Operation &op) {
  const TensorSharding *out = getSharding(op.result(0));
  const Mesh *mesh = out ? meshOf(*out) : nullptr;
  if (!mesh || op.numResults() == 0)
    return;
  const size_t rank = op.result(0)->type->shape.size();
  auto sharded = [&](size_t operand, int64_t dim) {
    const TensorSharding *s = getSharding(op.operand(operand));
    return s && shardedSizeAt(*s, size_t(dim), *mesh) > 1;
  };
  if (op.is("stablehlo.convolution")) {
    const Attr *attr = op.attrs.get("dimension_numbers");
    const std::optional<rules::ConvDims> dims =
        attr && attr->kind == AttrKind::Opaque
            ? rules::parseConvDims(attr->text)
            : std::nullopt;
    if (!dims)
      return;
    std::vector<int64_t> lhs_dims, out_dims;
    const std::vector<int64_t> &kernel = op.operand(1)->type->shape;
    for (size_t i = 0; i < dims->input_spatial.size(); ++i) {
      const int64_t window = kernel[size_t(dims->kernel_spatial[i])];
      const int64_t lhs = dims->input_spatial[i], res = dims->output_spatial[i];
      if (isPassthroughWindow(op, dims->input_spatial.size(), window, i) ||
          (!sharded(0, lhs) && shardedSizeAt(*out, size_t(res), *mesh) == 1))
        continue;
      lhs_dims.push_back(lhs);
      out_dims.push_back(res);
    }
    if (!lhs_dims.empty())
      replicate(op, {lhs_dims, {}}, {out_dims});
    return;
  }
  const std::vector<int64_t> windows = ints(op, "window_dimensions", rank, 1);
  std::vector<int64_t> dims;
  for (size_t d = 0; d < rank; ++d)
    if (!isPassthroughWindow(op, rank, windows[d], d) &&
        (sharded(0, int64_t(d)) || shardedSizeAt(*out, d, *mesh) > 1))
      dims.push_back(int64_t(d));
  if (dims.empty())
    return;
  if (op.is("stablehlo.select_and_scatter")) {
    replicate(op, {dims, dims, {}}, {dims});
    return;
  }
  // reduce_window: N inputs, then N init values; N results.
  std::vector<std::vector<int64_t>> operand_dims(op.numOperands());
  std::vector<std::vector<int64_t>> result_dims(op.numResults(), dims);
  for (size_t i = 0; i < op.numResults() && i < op.numOperands(); ++i)
    operand_dims[i] = dims;
  replicate(op, operand_dims, result_dims);
}

void PermutationResolver::resolveConcatenate(Operation &op) {
  const TensorSharding *out = getSharding(op.result(0));
  const Mesh *mesh = out ? meshOf(*out) : nullptr;
  const std::optional<int64_t> dim = rules::intAttr(op, "dimension");
  if (!mesh || !dim)
    return;
  bool sharded = shardedSizeAt(*out, size_t(*dim), *mesh) > 1;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const TensorSharding *s = getSharding(op.operand(i));
    sharded = sharded || (s && shardedSizeAt(*s, size_t(*dim), *mesh) > 1);
  }
  if (!sharded)
    return;
  replicate(op, std::vector<std::vector<int64_t>>(op.numOperands(), {*dim}),
            {{*dim}});
}

bool resolvePermutationFactorsPass(Module &module, const PassOptions &options,
                                   DiagnosticEngine &) {
  if (module.per_device)
    return markUnchanged(module);
  std::vector<Operation *> ops;
  forEachFunc(module, [&](Operation &func) {
    walk(func, [&](Operation &op) {
      // (A reduce_window may have several results.)
      if (op.numResults() >= 1 && !enclosingManualComputation(op))
        ops.push_back(&op);
    });
  });
  const bool use_replica_id = options.integer("partition-count") == 1 &&
                              options.integer("replica-count") > 1;
  PermutationResolver resolver(module, options.flag("enable-halo-exchange"),
                               use_replica_id);
  for (Operation *op : ops)
    resolver.resolve(*op);
  return resolver.changed() || markUnchanged(module);
}

} // namespace shardlab
