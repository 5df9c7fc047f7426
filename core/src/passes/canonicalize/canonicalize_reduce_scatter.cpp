// Reduce-scatter fusion: `all_reduce {R} x` whose users are all the same
// `all_slice [S...]` becomes `reduce_scatter [P...] x` where each P is the
// longest prefix of S (per dim) made of axes in R, plus an all_slice of the
// remaining slicing axes; it applies only when every axis of R is used.
#include "canonicalize_passes.h"
#include "canonicalize_patterns.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <optional>

namespace shardlab::canon {

namespace {

using PerDimAxes = std::vector<std::vector<AxisRef>>;

const PerDimAxes &slicingAxes(const Operation &op) {
  return std::get<PerDimAxes>(op.attrs.get("slicing_axes")->payload);
}

struct FusionAxes {
  PerDimAxes reduce_scatter;
  PerDimAxes residual;
  bool has_residual = false;
};

std::optional<FusionAxes> splitSlicingAxes(const Operation &all_reduce,
                                           const Operation &all_slice) {
  std::vector<AxisRef> remaining = std::get<std::vector<AxisRef>>(
      all_reduce.attrs.get("reduction_axes")->payload);
  FusionAxes result;
  for (const std::vector<AxisRef> &dim : slicingAxes(all_slice)) {
    size_t i = 0;
    std::vector<AxisRef> prefix;
    for (; i < dim.size(); ++i) {
      auto it = std::find(remaining.begin(), remaining.end(), dim[i]);
      if (it == remaining.end())
        break;
      prefix.push_back(dim[i]);
      remaining.erase(it);
    }
    result.reduce_scatter.push_back(prefix);
    result.residual.emplace_back(dim.begin() + i, dim.end());
    result.has_residual = result.has_residual || i < dim.size();
  }
  if (!remaining.empty())
    return std::nullopt;
  return result;
}

// The reduce_scatter's out sharding: the operand's dims extended by the
// reduce-scatter axes, with the all_slice's replicated/unreduced axes.
TensorSharding fusedSharding(Operation &all_reduce, Operation &all_slice,
                             const PerDimAxes &axes, const Mesh &mesh) {
  const TensorSharding &reduce_out = opSharding(all_reduce, "out_sharding");
  const TensorSharding &slice_out = opSharding(all_slice, "out_sharding");
  const TensorSharding *in = getSharding(all_reduce.operand(0));
  TensorSharding result = slice_out;
  result.mesh = reduce_out.mesh;
  result.dims.clear();
  for (size_t d = 0; d < axes.size(); ++d) {
    DimSharding dim;
    if (in && d < in->dims.size())
      dim.axes = in->dims[d].axes;
    for (const AxisRef &axis : axes[d])
      addAxisOrMerge(dim.axes, axis, mesh);
    result.dims.push_back(std::move(dim));
  }
  return result;
}

// All users of `all_reduce` are all_slices like `all_slice`, none before it.
bool isFirstOfIdenticalSlices(Operation &all_reduce, Operation &all_slice) {
  for (Operation *user : usersOf(all_reduce.result(0)))
    if (!user->is("sdy.all_slice") ||
        slicingAxes(*user) != slicingAxes(all_slice) ||
        (user->parentBlock() == all_slice.parentBlock() &&
         isBeforeInBlock(user, &all_slice)))
      return false;
  return true;
}

} // namespace

bool reduceScatterFusion(Operation &all_slice, Rewriter &rw) {
  Operation *all_reduce = all_slice.operand(0)->defining_op;
  if (!all_reduce || !all_reduce->is("sdy.all_reduce") ||
      !isFirstOfIdenticalSlices(*all_reduce, all_slice))
    return false;
  const Mesh *mesh =
      lookupMesh(rw.module(), opSharding(*all_reduce, "out_sharding"));
  std::optional<FusionAxes> axes = splitSlicingAxes(*all_reduce, all_slice);
  if (!mesh || !axes)
    return false;
  Context &ctx = rw.ctx();
  Value *input = all_reduce->operand(0);
  auto rs = makeOp(ctx, "sdy.reduce_scatter", {input}, {input->type},
                   all_reduce->loc);
  rs->attrs.set(
      ctx.intern("reduce_scatter_axes"),
      ctx.attrs.make(
          Attr{AttrKind::AxisRefListList, axes->reduce_scatter, nullptr, {}}));
  if (const Attr *kind = all_reduce->attrs.get("reduction_kind"))
    rs->attrs.set(ctx.intern("reduction_kind"), kind);
  setOpSharding(
      *rs, fusedSharding(*all_reduce, all_slice, axes->reduce_scatter, *mesh),
      ctx, "out_sharding");
  Value *result = rw.insertBefore(all_slice, std::move(rs))->result(0);
  if (axes->has_residual) {
    auto slice =
        makeOp(ctx, "sdy.all_slice", {result}, {input->type}, all_slice.loc);
    slice->attrs.set(
        ctx.intern("slicing_axes"),
        ctx.attrs.make(
            Attr{AttrKind::AxisRefListList, axes->residual, nullptr, {}}));
    slice->attrs.set(ctx.intern("out_sharding"),
                     all_slice.attrs.get("out_sharding"));
    result = rw.insertBefore(all_slice, std::move(slice))->result(0);
  }
  for (Operation *user : usersOf(all_reduce->result(0)))
    rw.replaceOp(*user, {result});
  rw.eraseOp(*all_reduce);
  return true;
}

} // namespace shardlab::canon
