// Canonicalization of the sdy collectives (label sdy-collective): collectives
// with nothing to do fold to their input, all_slice of a matching all_gather
// and all_reduce of a matching replicated_to_unreduced cancel out,
// all_reduce of sharded_to_unreduced becomes an all_gather, all_reduce
// followed by all_slice becomes reduce_scatter (+ a residual all_slice), and
// chained all_to_alls on disjoint dims fuse.
#include "canonicalize_passes.h"
#include "canonicalize_patterns.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/mesh.h"

#include <algorithm>
#include <set>

namespace shardlab::canon {

namespace {

using PerDimAxes = std::vector<std::vector<AxisRef>>;

const PerDimAxes &perDim(const Operation &op, std::string_view attr) {
  return std::get<PerDimAxes>(op.attrs.get(attr)->payload);
}
const std::vector<AxisRef> &flatAxes(const Operation &op,
                                     std::string_view attr) {
  return std::get<std::vector<AxisRef>>(op.attrs.get(attr)->payload);
}
const std::vector<AllToAllParam> &allToAllParams(const Operation &op) {
  return std::get<std::vector<AllToAllParam>>(op.attrs.get("params")->payload);
}

bool allEmpty(const PerDimAxes &axes) {
  for (const auto &dim : axes)
    if (!dim.empty())
      return false;
  return true;
}

Operation *definingOp(Operation &op, std::string_view name) {
  Operation *def = op.operand(0)->defining_op;
  return def && def->is(name) ? def : nullptr;
}

// Replaces `op` by its input.
bool foldToInput(Operation &op, Rewriter &rw) {
  rw.replaceOp(op, {op.operand(0)});
  return true;
}

// A new collective `name` on `input` before `before`.
Operation *createCollective(Rewriter &rw, Operation &before,
                            std::string_view name, Value *input,
                            std::string_view axes_attr, const Attr *axes,
                            const TensorSharding &out_sharding) {
  auto op = makeOp(rw.ctx(), name, {input}, {input->type}, before.loc);
  if (!axes_attr.empty())
    op->attrs.set(rw.ctx().intern(axes_attr), axes);
  setOpSharding(*op, out_sharding, rw.ctx(), "out_sharding");
  return rw.insertBefore(before, std::move(op));
}

bool collectivePermuteNoop(Operation &op, Rewriter &rw) {
  const TensorSharding *in = getSharding(op.operand(0));
  if (!in || !isEquivalent(*in, opSharding(op, "out_sharding")))
    return false;
  return foldToInput(op, rw);
}

bool allSliceOfAllGather(Operation &op, Rewriter &rw) {
  Operation *gather = definingOp(op, "sdy.all_gather");
  if (!gather ||
      perDim(*gather, "gathering_axes") != perDim(op, "slicing_axes"))
    return false;
  rw.replaceOp(op, {gather->operand(0)});
  return true;
}

bool allReduceOfReplicatedToUnreduced(Operation &op, Rewriter &rw) {
  Operation *r2u = definingOp(op, "sdy.replicated_to_unreduced");
  if (!r2u || flatAxes(*r2u, "axes") != flatAxes(op, "reduction_axes"))
    return false;
  rw.replaceOp(op, {r2u->operand(0)});
  return true;
}

bool allReduceOfShardedToUnreduced(Operation &op, Rewriter &rw) {
  Operation *s2u = definingOp(op, "sdy.sharded_to_unreduced");
  if (!s2u)
    return false;
  const Mesh *mesh = lookupMesh(rw.module(), opSharding(*s2u, "out_sharding"));
  if (!mesh)
    return false;
  std::vector<AxisRef> axes;
  for (const auto &dim : perDim(*s2u, "axes"))
    axes.insert(axes.end(), dim.begin(), dim.end());
  sortAndMergeAxes(axes, *mesh);
  if (axes != flatAxes(op, "reduction_axes"))
    return false;
  Operation *gather = createCollective(
      rw, op, "sdy.all_gather", s2u->operand(0), "gathering_axes",
      s2u->attrs.get("axes"), opSharding(op, "out_sharding"));
  rw.replaceOp(op, {gather->result(0)});
  return true;
}

bool allToAllFusion(Operation &op, Rewriter &rw) {
  Operation *inner = definingOp(op, "sdy.all_to_all");
  if (!inner || !op.operand(0)->hasOneUse())
    return false;
  std::vector<AllToAllParam> params = allToAllParams(*inner);
  const std::vector<AllToAllParam> &outer = allToAllParams(op);
  params.insert(params.end(), outer.begin(), outer.end());
  std::set<int64_t> dims;
  for (const AllToAllParam &param : params)
    if (!dims.insert(param.src_dim).second ||
        !dims.insert(param.tgt_dim).second)
      return false;
  std::stable_sort(params.begin(), params.end(),
                   [](const AllToAllParam &a, const AllToAllParam &b) {
                     return a.src_dim < b.src_dim;
                   });
  const Attr *attr = rw.ctx().attrs.make(
      Attr{AttrKind::AllToAllParams, std::move(params), nullptr, {}});
  Operation *fused =
      createCollective(rw, op, "sdy.all_to_all", inner->operand(0), "params",
                       attr, opSharding(op, "out_sharding"));
  rw.replaceOp(op, {fused->result(0)});
  return true;
}

} // namespace

bool applyCollectivePatterns(Operation &op, Rewriter &rw, unsigned labels) {
  if (!(labels & kLabelCollective))
    return false;
  if (op.is("sdy.all_gather"))
    return allEmpty(perDim(op, "gathering_axes")) && foldToInput(op, rw);
  if (op.is("sdy.all_slice"))
    return allSliceOfAllGather(op, rw) ||
           (allEmpty(perDim(op, "slicing_axes")) && foldToInput(op, rw)) ||
           reduceScatterFusion(op, rw);
  if (op.is("sdy.all_reduce"))
    return allReduceOfReplicatedToUnreduced(op, rw) ||
           (flatAxes(op, "reduction_axes").empty() && foldToInput(op, rw)) ||
           allReduceOfShardedToUnreduced(op, rw);
  if (op.is("sdy.all_to_all"))
    return allToAllFusion(op, rw) ||
           (!op.result(0)->hasUses() && foldToInput(op, rw));
  if (op.is("sdy.collective_permute"))
    return collectivePermuteNoop(op, rw);
  if (op.is("sdy.reduce_scatter"))
    return allEmpty(perDim(op, "reduce_scatter_axes")) && foldToInput(op, rw);
  return false;
}

} // namespace shardlab::canon
