// The sdy collectives (all_gather, all_slice, all_to_all,
// collective_permute, all_reduce, reduce_scatter, sharded_to_unreduced,
// replicated_to_unreduced): the checks shared through Shardy's
// CollectiveOpInterface, then each op's own verifier, all from the sharding
// library (collective_verify.h).
#include "verify_ops.h"

#include "sharding/collective_verify.h"
#include "sharding/sharding_utils.h"

namespace shardlab::verify {

namespace {

Operation *manualComputationOfArgument(Value *value) {
  if (!value->isBlockArgument() || !value->owner_block->parent)
    return nullptr;
  Operation *op = value->owner_block->parent->parent;
  return op && op->is("sdy.manual_computation") && op->attrs.get("manual_axes")
             ? op
             : nullptr;
}

CollectiveTraits traitsOf(const Operation &op) {
  CollectiveTraits traits;
  traits.allow_missing_input_sharding = op.is("sdy.all_slice") ||
                                        op.is("sdy.all_reduce") ||
                                        op.is("sdy.reduce_scatter");
  traits.allow_different_meshes = op.is("sdy.collective_permute");
  return traits;
}

const std::vector<std::vector<AxisRef>> &perDimAxes(const Operation &op,
                                                    const char *name) {
  static const std::vector<std::vector<AxisRef>> kNone;
  const Attr *attr = op.attrs.get(name);
  if (!attr || attr->kind != AttrKind::AxisRefListList)
    return kNone;
  return std::get<std::vector<std::vector<AxisRef>>>(attr->payload);
}

const std::vector<AxisRef> &flatAxes(const Operation &op, const char *name) {
  static const std::vector<AxisRef> kNone;
  const Attr *attr = op.attrs.get(name);
  if (!attr || attr->kind != AttrKind::AxisRefList)
    return kNone;
  return std::get<std::vector<AxisRef>>(attr->payload);
}

std::vector<AllToAllParam> allToAllParams(const Operation &op) {
  const Attr *attr = op.attrs.get("params");
  if (!attr)
    return {};
  if (const auto *params =
          std::get_if<std::vector<AllToAllParam>>(&attr->payload))
    return *params;
  return {};
}

ReductionKind reductionKind(const Operation &op) {
  const Attr *attr = op.attrs.get("reduction_kind");
  if (!attr || attr->kind != AttrKind::String)
    return ReductionKind::Sum;
  if (attr->str() == "max")
    return ReductionKind::Max;
  return attr->str() == "min" ? ReductionKind::Min : ReductionKind::Sum;
}

// Emits a library error, with its note at the operand when it has one.
bool emit(VerifyContext &ctx, Operation &op, const CollectiveError &error) {
  ctx.shardingError(op, error.message);
  if (!error.note.empty())
    ctx.note(op.operand(0)->loc, error.note);
  return false;
}

struct CollectiveInputs {
  const TensorSharding &operand;
  const Mesh &operand_mesh;
  const TensorSharding &result;
  const Mesh &mesh;
  int64_t rank;
};

std::optional<CollectiveError> verifyOwn(const Operation &op,
                                         const CollectiveInputs &in) {
  auto wrap =
      [](std::optional<std::string> message) -> std::optional<CollectiveError> {
    if (!message)
      return std::nullopt;
    return CollectiveError{*message, ""};
  };
  if (op.is("sdy.all_gather"))
    return wrap(verifyAllGather(in.operand, in.result,
                                perDimAxes(op, "gathering_axes"), in.mesh));
  if (op.is("sdy.all_slice"))
    return wrap(verifyAllSlice(in.operand, in.result,
                               perDimAxes(op, "slicing_axes"), in.mesh));
  if (op.is("sdy.all_to_all"))
    return wrap(verifyAllToAll(in.operand, in.result, allToAllParams(op),
                               in.mesh, in.rank));
  if (op.is("sdy.collective_permute"))
    return verifyCollectivePermute(in.operand, in.operand_mesh, in.result,
                                   in.mesh);
  if (op.is("sdy.all_reduce"))
    return wrap(verifyAllReduce(in.operand, in.result,
                                flatAxes(op, "reduction_axes"),
                                reductionKind(op), in.mesh));
  if (op.is("sdy.reduce_scatter"))
    return wrap(verifyReduceScatter(in.operand, in.result,
                                    perDimAxes(op, "reduce_scatter_axes"),
                                    reductionKind(op), in.mesh));
  if (op.is("sdy.sharded_to_unreduced"))
    return wrap(verifyShardedToUnreduced(in.operand, in.result,
                                         perDimAxes(op, "axes"), in.mesh));
  return wrap(verifyReplicatedToUnreduced(in.operand, in.result,
                                          flatAxes(op, "axes"), in.mesh));
}

} // namespace

bool isCollective(const Operation &op) {
  for (std::string_view name :
       {"sdy.all_gather", "sdy.all_slice", "sdy.all_to_all",
        "sdy.collective_permute", "sdy.all_reduce", "sdy.reduce_scatter",
        "sdy.sharded_to_unreduced", "sdy.replicated_to_unreduced"})
    if (op.name == name)
      return true;
  return false;
}

bool verifyCollective(VerifyContext &ctx, Operation &op) {
  const Attr *out = op.attrs.get("out_sharding");
  if (!out || out->kind != AttrKind::Sharding || op.numOperands() != 1 ||
      op.numResults() != 1)
    return true;
  const TensorSharding &result = out->sharding();
  const Mesh *mesh = ctx.lookupMesh(result.mesh);
  const TensorSharding *operand = shardingOf(op.operand(0));
  // A manual computation's body argument holds its in sharding with the
  // manual axes in front; the body sees it without them.
  std::optional<TensorSharding> local;
  if (Operation *owner = manualComputationOfArgument(op.operand(0));
      owner && operand) {
    local =
        withoutAxes(*operand, std::get<std::vector<std::string>>(
                                  owner->attrs.get("manual_axes")->payload));
    operand = &*local;
  }
  const Mesh *operand_mesh = operand ? ctx.lookupMesh(operand->mesh) : mesh;
  ShardingVerifyOptions options;
  options.already_manual_axes = enclosingManualAxes(op);
  ValueShapeInfo type = shapeInfo(op.result(0)->type);
  if (std::optional<CollectiveError> error = verifyCollectiveCommon(
          operand, operand_mesh, result, mesh, type, traitsOf(op), options))
    return emit(ctx, op, *error);
  if (!mesh)
    return true;
  int64_t rank = type.kind == ValueShapeInfo::Kind::Ranked
                     ? static_cast<int64_t>(type.dims.size())
                     : static_cast<int64_t>(result.dims.size());
  TensorSharding open = fullyOpenSharding(result.mesh, result.dims.size());
  CollectiveInputs inputs{operand ? *operand : open,
                          operand_mesh ? *operand_mesh : *mesh, result, *mesh,
                          rank};
  if (std::optional<CollectiveError> error = verifyOwn(op, inputs))
    return emit(ctx, op, *error);
  return true;
}

} // namespace shardlab::verify
