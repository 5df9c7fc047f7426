// The ops -sdy-insert-explicit-reshards creates: reshards at an insertion
// point, and the unreduced-axis collectives (all_reduce when unreduced axes
// become replicated, replicated_to_unreduced / sharded_to_unreduced when
// they are added), as in Shardy's explicit_reshards_util.
#include "explicit_reshards_util.h"
#include "export_passes.h"

#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

namespace shardlab {

InsertPoint pointBefore(Operation &op) { return {op.parentBlock(), &op}; }

InsertPoint pointAfter(Operation &op) {
  return {op.parentBlock(), op.nextInBlock()};
}

InsertPoint pointAfterValue(Value *value) {
  if (value->defining_op)
    return pointAfter(*value->defining_op);
  return {value->owner_block, value->owner_block->front()};
}

Operation *insertAt(const InsertPoint &point, std::unique_ptr<Operation> op) {
  return point.before ? point.block->insertBefore(point.before, std::move(op))
                      : point.block->push_back(std::move(op));
}

Operation *createReshard(Context &ctx, const InsertPoint &point, Value *input,
                         const TensorSharding &sharding) {
  auto reshard = makeOp(ctx, "sdy.reshard", {input}, {input->type}, input->loc);
  setOpSharding(*reshard, sharding, ctx);
  return insertAt(point, std::move(reshard));
}

namespace {

// `name %input` with flat or per-dim `axes` and `out_sharding`.
Operation *createCollective(Context &ctx, const InsertPoint &point,
                            std::string_view name, Value *input,
                            std::string_view axes_attr, Attr axes,
                            const TensorSharding &out) {
  auto op = makeOp(ctx, name, {input}, {input->type}, input->loc);
  op->attrs.set(ctx.intern(axes_attr), ctx.attrs.make(std::move(axes)));
  setOpSharding(*op, out, ctx, "out_sharding");
  return insertAt(point, std::move(op));
}

Operation *createAllReduce(Context &ctx, const InsertPoint &point, Value *input,
                           std::vector<AxisRef> axes,
                           const TensorSharding &out) {
  Operation *op = createCollective(
      ctx, point, "sdy.all_reduce", input, "reduction_axes",
      Attr{AttrKind::AxisRefList, std::move(axes), nullptr, {}}, out);
  if (out.unreduced_kind != ReductionKind::Sum)
    op->attrs.set(ctx.intern("reduction_kind"),
                  ctx.attrs.string(reductionKindName(out.unreduced_kind)));
  return op;
}

// The split of the target's new unreduced axes into sharded ones (taken
// from dims whose target axes are a prefix of the input's) and the dims the
// input keeps; `need_reshard` when a dim cannot be reached that way.
struct UnreducedSplit {
  std::vector<std::vector<AxisRef>> axes_per_dim;
  std::vector<AxisRef> s2u;
  std::vector<DimSharding> tmp_dims;
  bool need_reshard = false;
};

UnreducedSplit splitUnreduced(const TensorSharding &in,
                              const TensorSharding &out,
                              const std::vector<AxisRef> &new_axes,
                              const Mesh &mesh) {
  UnreducedSplit split{{}, {}, out.dims, false};
  split.axes_per_dim.resize(in.dims.size());
  for (size_t d = 0; d < in.dims.size() && d < out.dims.size(); ++d) {
    const std::vector<AxisRef> &in_axes = in.dims[d].axes;
    const std::vector<AxisRef> &out_axes = out.dims[d].axes;
    PrefixStatus status = axisListPrefixStatus(out_axes, in_axes);
    if (status == PrefixStatus::NotAPrefix) {
      split.need_reshard = true;
      continue;
    }
    if (status != PrefixStatus::StrictPrefix)
      continue;
    std::vector<AxisRef> diff;
    size_t n = out_axes.size();
    if (n > 0 && !(out_axes.back() == in_axes[n - 1]))
      if (auto suffix =
              getSuffixWithoutOverlap(in_axes[n - 1], out_axes.back(), mesh))
        diff.push_back(*suffix);
    diff.insert(diff.end(), in_axes.begin() + n, in_axes.end());
    if (!getAxisSetDiff(diff, new_axes, mesh).empty()) {
      split.need_reshard = true;
      continue;
    }
    split.axes_per_dim[d] = diff;
    split.s2u.insert(split.s2u.end(), diff.begin(), diff.end());
    split.tmp_dims[d] = in.dims[d];
  }
  return split;
}

} // namespace

std::optional<TensorSharding> allReduceIfUnreducedToReplicated(
    Module &module, OpOperand &use, const std::optional<TensorSharding> &source,
    const TensorSharding *user, const InsertPoint &point) {
  const Mesh *mesh = source ? lookupMesh(module, *source) : nullptr;
  if (!mesh || source->unreduced.empty())
    return source;
  std::vector<AxisRef> axes =
      getAxisSetDiff(source->unreduced,
                     user ? user->unreduced : std::vector<AxisRef>{}, *mesh);
  if (axes.empty())
    return source;
  TensorSharding reduced = *source;
  reduced.unreduced = getAxisSetDiff(source->unreduced, axes, *mesh);
  Operation *all_reduce =
      createAllReduce(module.ctx(), point, use.value, axes, reduced);
  use.set(all_reduce->result(0));
  return reduced;
}

std::optional<TensorSharding>
insertUnreducedCollectives(Module &module, OpOperand &use,
                           const TensorSharding *target,
                           const InsertPoint &point) {
  std::optional<TensorSharding> in = shardingOf(use.value);
  const Mesh *mesh = in ? lookupMesh(module, *in) : nullptr;
  if (!mesh || !target || target->unreduced.empty())
    return std::nullopt;
  std::vector<AxisRef> new_axes =
      getAxisSetDiff(target->unreduced, in->unreduced, *mesh);
  if (new_axes.empty())
    return std::nullopt;
  UnreducedSplit split = splitUnreduced(*in, *target, new_axes, *mesh);
  Context &ctx = module.ctx();
  Value *input = use.value, *result = input;
  TensorSharding last = *in;
  if (split.need_reshard) {
    last.dims = split.tmp_dims;
    result = createReshard(ctx, point, result, last)->result(0);
  }
  std::vector<AxisRef> r2u = getAxisSetDiff(new_axes, split.s2u, *mesh);
  if (!r2u.empty()) {
    std::vector<AxisRef> unreduced = in->unreduced;
    unreduced.insert(unreduced.end(), r2u.begin(), r2u.end());
    sortAndMergeAxes(unreduced, *mesh);
    last = TensorSharding{in->mesh, split.tmp_dims, target->replicated,
                          unreduced, target->unreduced_kind};
    result = createCollective(
                 ctx, point, "sdy.replicated_to_unreduced", result, "axes",
                 Attr{AttrKind::AxisRefList, r2u, nullptr, {}}, last)
                 ->result(0);
  }
  if (!split.s2u.empty()) {
    last = *target;
    result =
        createCollective(
            ctx, point, "sdy.sharded_to_unreduced", result, "axes",
            Attr{AttrKind::AxisRefListList, split.axes_per_dim, nullptr, {}},
            last)
            ->result(0);
  }
  if (result == input)
    return std::nullopt;
  use.set(result);
  return last;
}

bool convertReshardToUnreducedCollectives(Module &module, Operation &op) {
  if (!op.is("sdy.reshard"))
    return false;
  TensorSharding target = opSharding(op);
  if (!insertUnreducedCollectives(module, op.operandUse(0), &target,
                                  pointBefore(op)))
    return false;
  op.result(0)->replaceAllUsesWith(op.operand(0));
  eraseOp(op);
  return true;
}

void allReduceOperandsIfUnreducedToReplicated(Module &module, Operation &op) {
  if (op.numResults() == 0)
    return;
  // The result's sharding attribute, which inserting all-reduces before the
  // op does not replace (the arena keeps it alive either way).
  const TensorSharding *user = nullptr;
  bool user_read = false;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    // Cheap test first: erasing manual axes never adds unreduced axes.
    const TensorSharding *raw = getSharding(op.operand(i));
    if (!raw || raw->unreduced.empty())
      continue;
    if (!user_read) {
      user = getSharding(op.result(0));
      user_read = true;
    }
    if (std::optional<TensorSharding> in = shardingOf(op.operand(i)))
      allReduceIfUnreducedToReplicated(module, op.operandUse(i), in, user,
                                       pointBefore(op));
  }
}

void allReduceResults(Module &module, Operation &op,
                      std::vector<AxisRef> reduction_axes, const Mesh &mesh,
                      const MeshRef &mesh_ref) {
  if (op.numResults() == 0 || reduction_axes.empty())
    return;
  if (const TensorSharding *first = getSharding(op.result(0)))
    reduction_axes = getAxisSetDiff(reduction_axes, first->unreduced, mesh);
  if (reduction_axes.empty())
    return;
  sortAndMergeAxes(reduction_axes, mesh);
  InsertPoint point = pointAfter(op);
  for (size_t i = 0; i < op.numResults(); ++i) {
    Value *result = op.result(i);
    const TensorSharding *s = getSharding(result);
    TensorSharding out =
        s ? *s : fullyClosedSharding(mesh_ref, result->type->shape.size());
    Operation *all_reduce =
        createAllReduce(module.ctx(), point, result, reduction_axes, out);
    result->replaceAllUsesExcept(all_reduce->result(0), all_reduce);
  }
}

} // namespace shardlab
