// -sdy-resolve-single-device-sharding: an op whose results live on one
// device (a maximal mesh `<[], device_ids=[d]>`) runs on that device only.
//
//   %1 = sdy.reshard %0 <@dev0, []>
//   %2 = stablehlo.custom_call @Op(%1) {sdy.sharding = <[<@dev0, []>]>}
//   %3 = sdy.reshard %2 <@mesh, [{}, {}]>
// becomes
//   %p = stablehlo.compare EQ, (partition_id as i64), 0
//   %2 = "stablehlo.if"(%p) ({ %r = stablehlo.custom_call @Op(%0) ...
//                              stablehlo.return %r },
//                            { stablehlo.return (zeros) })
//   %3 = sdy.all_reduce {"x"} %2 out_sharding=<@mesh, [{}, {}]>
// The other devices produce zeros (a fresh token for a token), so an
// all-reduce over the mesh's axes gives every device the value; a reshard
// to another replicated mesh follows the all-reduce.
#include "export_passes.h"
#include "local_builder.h"

#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

namespace shardlab {
namespace {

// The device of a sharding on a maximal mesh, or -1.
int64_t singleDevice(const Module &module, const TensorSharding *sharding) {
  const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
  return mesh && mesh->isMaximal() ? mesh->device_ids.front() : -1;
}

// The device all of `op`'s single-device results live on, or -1.
int64_t deviceOf(const Module &module, Operation &op) {
  int64_t device = -1;
  for (size_t i = 0; i < op.numResults(); ++i)
    if (int64_t d = singleDevice(module, getSharding(op.result(i))); d >= 0)
      device = d;
  return device;
}

// The first mesh of the module with axes: the one the all-reduce spans.
const Operation *replicatedMesh(Module &module) {
  for (Operation &op : module.body())
    if (op.is("sdy.mesh")) {
      const Attr *mesh = op.attrs.get("mesh");
      if (mesh && mesh->kind == AttrKind::Mesh && !mesh->mesh().axes.empty())
        return &op;
    }
  return nullptr;
}

void fillElseRegion(Context &ctx, Operation &if_op,
                    const std::vector<Type> &types, Location loc) {
  Block &block = if_op.addRegion().addBlock();
  Operation *ret =
      block.push_back(makeOp(ctx, "stablehlo.return", {}, {}, loc));
  LocalBuilder b(ctx, *ret);
  std::vector<Value *> zeros;
  for (Type type : types)
    zeros.push_back(
        type->isTensor()
            ? b.splat(type, 0)
            : b.create("stablehlo.create_token", {}, {type})->result(0));
  ret->setOperands(zeros);
}

// Replaces `reshard` of a single-device value by an all-reduce over the
// replicated mesh (and a reshard to the mesh it wanted, when another one).
void replaceReshard(Module &module, Operation &reshard, const Operation &mesh) {
  Context &ctx = module.ctx();
  const TensorSharding target = opSharding(reshard);
  const std::string mesh_name = mesh.attrs.get("sym_name")->str();
  MeshRef mesh_ref;
  mesh_ref.symbol = mesh_name;
  const TensorSharding replicated =
      fullyClosedSharding(mesh_ref, target.dims.size());
  std::vector<AxisRef> axes;
  for (const MeshAxis &axis : mesh.attrs.get("mesh")->mesh().axes)
    axes.push_back({axis.name, std::nullopt});
  LocalBuilder b(ctx, reshard);
  Operation *reduce = b.create(
      "sdy.all_reduce", {reshard.operand(0)}, {reshard.result(0)->type},
      {{"reduction_axes",
        ctx.attrs.make(Attr{AttrKind::AxisRefList, axes, nullptr, {}})},
       {"out_sharding", ctx.attrs.sharding(replicated)}});
  Value *result = reduce->result(0);
  if (!(target == replicated)) {
    Operation *moved = b.create("sdy.reshard", {result}, {result->type},
                                {{"sharding", ctx.attrs.sharding(target)}});
    result = moved->result(0);
  }
  reshard.result(0)->replaceAllUsesWith(result);
  eraseOp(reshard);
}

void resolve(Module &module, Operation &op, int64_t device,
             const Operation *mesh) {
  Context &ctx = module.ctx();
  // Operands resharded onto the device are read as they were.
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Operation *def = op.operand(i)->defining_op;
    if (def && def->is("sdy.reshard") &&
        singleDevice(module, &opSharding(*def)) == device)
      op.setOperand(i, def->operand(0));
  }
  LocalBuilder b(ctx, op);
  Value *index = b.deviceIndex(false);
  Value *is_device = b.compare("EQ", index, b.scalarI64(device));
  const std::vector<Type> types = resultTypes(op);
  Operation *if_op = b.create("stablehlo.if", {is_device}, types);
  Block &then_block = if_op->addRegion().addBlock();
  Operation *inner = then_block.push_back(op.parentBlock()->take(&op));
  inner->attrs.erase("sdy.sharding");
  std::vector<Value *> results;
  for (size_t i = 0; i < inner->numResults(); ++i)
    results.push_back(inner->result(i));
  then_block.push_back(makeOp(ctx, "stablehlo.return", results, {}, op.loc));
  fillElseRegion(ctx, *if_op, types, op.loc);
  for (size_t i = 0; i < results.size(); ++i) {
    // Uses outside the if read its result; the return inside keeps the op's.
    std::vector<OpOperand *> outside;
    for (OpOperand *use = results[i]->firstUse(); use; use = use->next_use)
      if (use->owner->parentOp() != if_op)
        outside.push_back(use);
    for (OpOperand *use : outside)
      use->set(if_op->result(i));
  }
  for (size_t i = 0; i < if_op->numResults(); ++i)
    for (Operation *user : usersOf(if_op->result(i)))
      if (mesh && user->is("sdy.reshard") &&
          singleDevice(module, &opSharding(*user)) < 0)
        replaceReshard(module, *user, *mesh);
}

} // namespace

bool resolveSingleDeviceShardingPass(Module &module, const PassOptions &,
                                     DiagnosticEngine &) {
  std::vector<std::pair<Operation *, int64_t>> ops;
  walk(module.op(), [&](Operation &op) {
    if (!op.is("sdy.reshard") && op.attrs.get("sdy.sharding"))
      if (int64_t device = deviceOf(module, op); device >= 0)
        ops.push_back({&op, device});
  });
  if (ops.empty())
    return markUnchanged(module);
  const Operation *mesh = replicatedMesh(module);
  for (auto &[op, device] : ops)
    resolve(module, *op, device, mesh);
  // The reshards onto single devices have no users left.
  for (Operation *reshard : opsNamed(module, "sdy.reshard"))
    if (!reshard->result(0)->hasUses() &&
        singleDevice(module, &opSharding(*reshard)) >= 0)
      eraseOp(*reshard);
  return true;
}

} // namespace shardlab
