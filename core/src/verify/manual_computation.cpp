// sdy.manual_computation (Shardy's ManualComputationOp::verify): manual axes
// not bound by a parent, in/out shardings against the global and local
// types, and the common mesh of all shardings.
#include "verify_ops.h"

#include "sharding/manual_verify.h"

namespace shardlab::verify {

namespace {

std::vector<TensorSharding> shardingsNamed(const Operation &op,
                                           const char *name) {
  const Attr *attr = op.attrs.get(name);
  if (!attr || attr->kind != AttrKind::ShardingPerValue)
    return {};
  return attr->shardings();
}

std::vector<Type> bodyArgTypes(Operation &op) {
  std::vector<Type> types;
  Block &block = op.region(0).front();
  for (size_t i = 0; i < block.numArguments(); ++i)
    types.push_back(block.argument(i)->type);
  return types;
}

std::vector<Type> bodyReturnTypes(Operation &op) {
  Operation *terminator = op.region(0).front().back();
  return terminator ? operandTypes(*terminator) : std::vector<Type>{};
}

bool verifyValues(VerifyContext &ctx, Operation &op, const char *kind,
                  const std::vector<TensorSharding> &shardings,
                  const std::vector<Type> &global,
                  const std::vector<Type> &local) {
  ShardingVerifyOptions options;
  options.already_manual_axes = enclosingManualAxes(op);
  std::optional<std::string> error = verifyManualComputationValues(
      kind, shardings, ctx.meshesOf(shardings), shapeInfos(global),
      shapeInfos(local), manualAxesOf(op), options);
  return !error || ctx.shardingError(op, *error);
}

} // namespace

bool verifyManualComputation(VerifyContext &ctx, Operation &op) {
  if (op.numRegions() != 1 || op.region(0).empty())
    return true;
  std::vector<std::string> manual = manualAxesOf(op);
  if (std::optional<std::string> error =
          verifyManualAxesNotBound(manual, enclosingManualAxes(op)))
    return ctx.shardingError(op, *error);
  std::vector<TensorSharding> in = shardingsNamed(op, "in_shardings");
  std::vector<TensorSharding> out = shardingsNamed(op, "out_shardings");
  bool no_shardings = in.empty() && out.empty();
  // Manual axes with no in/out shardings are accepted, body or not
  // (manual_computation_parse_print.mlir).
  if (!verifyValues(ctx, op, "operand", in, operandTypes(op),
                    bodyArgTypes(op)) ||
      !verifyValues(ctx, op, "result", out, resultTypes(op),
                    bodyReturnTypes(op)))
    return false;
  std::vector<const Mesh *> meshes = ctx.meshesOf(in);
  for (const Mesh *mesh : ctx.meshesOf(out))
    meshes.push_back(mesh);
  std::optional<std::string> error =
      verifyManualComputationMesh(commonMesh(meshes), !no_shardings, manual);
  return !error || ctx.opError(op, *error);
}

} // namespace shardlab::verify
