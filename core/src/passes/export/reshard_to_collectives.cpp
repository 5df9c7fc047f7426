// -sdy-reshard-to-collectives: every sdy.reshard between two shardings on
// the same mesh axes becomes a chain of sdy.all_slice, collective_permute,
// all_to_all and all_gather. The state machine (CollectiveChain) keeps the
// per-dim difference between the current and the wanted sharding and shrinks
// it collective by collective, in the order Shardy's CollectiveInserter uses,
// so that the printed chain is the one Shardy prints.
#include "export_passes.h"
#include "reshard_to_collectives_state.h"

#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/mesh.h"

namespace shardlab {

namespace {

// The sharding of `value` seen through sdy.propagation_barrier ops.
Value *bypassBarriers(Value *value) {
  while (value->defining_op &&
         value->defining_op->is("sdy.propagation_barrier"))
    value = value->defining_op->operand(0);
  return value;
}

// The sharding of `value`, where a data-flow op's block argument reads its
// edge owner's (Shardy's getSharding on a ShardableDataFlowOp target).
std::optional<TensorSharding> valueSharding(Value *value) {
  if (value->isBlockArgument()) {
    Value *owner = edgeOwnerFromTarget(value);
    if (owner)
      return edgeOwnerSharding(owner);
  }
  if (const TensorSharding *sharding = getSharding(value))
    return *sharding;
  return std::nullopt;
}

bool isMaximalOn(const Module &module, const TensorSharding *sharding) {
  if (!sharding)
    return false;
  const Mesh *mesh = lookupMesh(module, *sharding);
  return mesh && mesh->isMaximal();
}

// Same mesh symbol, or meshes equal up to the order of device ids.
bool equivalentOnMesh(const Module &module, const TensorSharding &in,
                      const TensorSharding &out) {
  if (in.mesh == out.mesh)
    return true;
  const Mesh *in_mesh = lookupMesh(module, in);
  const Mesh *out_mesh = lookupMesh(module, out);
  return in_mesh && out_mesh && equalsIgnoringDeviceIds(*in_mesh, *out_mesh);
}

// Shardy's legality check: whether the reshard stays as it is.
bool keepReshard(const Module &module, Operation &reshard,
                 bool keep_redundant) {
  std::optional<TensorSharding> found =
      valueSharding(bypassBarriers(reshard.operand(0)));
  const TensorSharding *in = found ? &*found : nullptr;
  const TensorSharding &out = opSharding(reshard);
  if (keep_redundant && (in ? isEquivalent(*in, out) : isFullyReplicated(out)))
    return true;
  if (isMaximalOn(module, in) || isMaximalOn(module, &out))
    return true;
  if (isFullyReplicated(out))
    return false;
  return in && !equivalentOnMesh(module, *in, out);
}

// Rewrites one reshard; returns false when Shardy's pattern fails to match.
bool lowerReshard(Module &module, Operation &reshard) {
  Value *input = bypassBarriers(reshard.operand(0));
  TensorSharding out = opSharding(reshard);
  std::optional<TensorSharding> found = valueSharding(input);
  size_t rank = out.dims.size();
  TensorSharding in = found ? *found : fullyOpenSharding(out.mesh, rank);
  if (in.dims.size() != rank)
    return false;
  if (isFullyReplicated(out)) {
    if (isFullyReplicated(in)) {
      replaceOp(reshard, {reshard.operand(0)});
      return true;
    }
    out = fullyClosedSharding(in.mesh, rank);
  }
  if (!equivalentOnMesh(module, in, out))
    return false;
  const Mesh *mesh = lookupMesh(module, in);
  if (!mesh)
    return false;
  CollectiveChain chain(module.ctx(), reshard, *mesh, input, in, out);
  replaceOp(reshard, {chain.insert()});
  return true;
}

} // namespace

bool reshardToCollectivesPass(Module &module, const PassOptions &options,
                              DiagnosticEngine &) {
  bool keep_redundant = options.flag("keep-redundant-reshards");
  std::vector<Operation *> reshards;
  if (!mayContain(module, {"sdy.reshard"}))
    return markUnchanged(module);
  walk(module.op(), [&](Operation &op) {
    if (op.is("sdy.reshard"))
      reshards.push_back(&op);
  });
  for (Operation *reshard : reshards)
    if (!keepReshard(module, *reshard, keep_redundant))
      lowerReshard(module, *reshard);
  return true;
}

} // namespace shardlab
