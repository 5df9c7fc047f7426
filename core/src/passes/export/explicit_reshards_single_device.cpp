// Single-device (maximal mesh) ops in -sdy-insert-explicit-reshards: an op
// whose result is on a maximal mesh gets its operands resharded to that
// device (through the global mesh, replicated) and its results resharded
// back to the global mesh and then to what their users expect.
#include "explicit_reshards_util.h"
#include "export_passes.h"

#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

namespace shardlab {

namespace {

// The first module-level mesh with axes (Shardy's getGlobalMeshOp).
std::optional<MeshRef> globalMesh(Module &module) {
  for (Operation &op : module.body())
    if (op.is("sdy.mesh")) {
      const Mesh &mesh = op.attrs.get("mesh")->mesh();
      if (!mesh.isMaximal() && !mesh.axes.empty())
        return MeshRef{op.attrs.get("sym_name")->str(), std::nullopt};
    }
  return std::nullopt;
}

TensorSharding replicatedOn(const MeshRef &mesh, size_t rank) {
  return fullyClosedSharding(mesh, rank);
}

void reshardOperandsToDevice(Module &module, Operation &op,
                             const TensorSharding &device,
                             const MeshRef &global) {
  Context &ctx = module.ctx();
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Value *operand = op.operand(i);
    if (!operand->type->isRankedTensor())
      continue;
    size_t rank = operand->type->shape.size();
    const TensorSharding *s = getSharding(operand);
    TensorSharding source = s ? *s : replicatedOn(global, rank);
    if (isEquivalent(source, device) && source.mesh == device.mesh)
      continue;
    Value *input = operand;
    if (!(isFullyReplicated(source) && source.mesh == global))
      input =
          createReshard(ctx, pointBefore(op), input, replicatedOn(global, rank))
              ->result(0);
    op.setOperand(
        i, createReshard(ctx, pointBefore(op), input, device)->result(0));
  }
}

void reshardResultsFromDevice(Module &module, Operation &op,
                              const std::vector<const TensorSharding *> &out,
                              const MeshRef &global) {
  Context &ctx = module.ctx();
  Operation *last = &op;
  for (size_t i = 0; i < op.numResults(); ++i) {
    Value *result = op.result(i);
    if (!result->type->isRankedTensor())
      continue;
    TensorSharding replicated =
        replicatedOn(global, result->type->shape.size());
    TensorSharding target = replicated;
    if (out[i] && !isSingleDeviceSharding(module, *out[i]))
      target = *out[i];
    Operation *repl = createReshard(ctx, pointAfter(*last), result, replicated);
    result->replaceAllUsesExcept(repl->result(0), repl);
    last = repl;
    if (target == replicated)
      continue;
    Operation *tiled =
        createReshard(ctx, pointAfter(*last), repl->result(0), target);
    repl->result(0)->replaceAllUsesExcept(tiled->result(0), tiled);
    last = tiled;
  }
}

} // namespace

bool isSingleDeviceSharding(const Module &module,
                            const TensorSharding &sharding) {
  const Mesh *mesh = lookupMesh(module, sharding);
  return mesh && mesh->isMaximal();
}

bool processSingleDeviceOp(Module &module, Operation &op,
                           const std::vector<const TensorSharding *> &out,
                           DiagnosticEngine &diags) {
  std::optional<int64_t> device_id;
  MeshRef device_mesh;
  for (const TensorSharding *s : out) {
    if (!s || !isSingleDeviceSharding(module, *s))
      continue;
    int64_t id = lookupMesh(module, *s)->device_ids.front();
    if (device_id && *device_id != id) {
      diags.error(op.loc, "'" + std::string(op.name) +
                              "' op has conflicting single-device result "
                              "shardings");
      return false;
    }
    device_id = id;
    device_mesh = s->mesh;
  }
  std::optional<MeshRef> global = globalMesh(module);
  if (!global)
    return true;
  TensorSharding device = fullyClosedSharding(device_mesh, 0);
  reshardOperandsToDevice(module, op, device, *global);
  reshardResultsFromDevice(module, op, out, *global);
  Context &ctx = module.ctx();
  for (size_t i = 0; i < op.numResults(); ++i) {
    Value *result = op.result(i);
    if (result->type->isRankedTensor())
      setSharding(result, device, ctx);
    else if (result->type->kind == TypeKind::Token)
      setSharding(result, fullyClosedSharding(*global, 0), ctx);
  }
  return true;
}

bool verifyNoSingleDeviceFuncShardings(Module &module, Operation &func,
                                       DiagnosticEngine &diags) {
  if (func.numRegions() == 0 || func.region(0).empty())
    return true;
  Block &body = func.region(0).front();
  auto fail = [&](const char *kind, size_t i) {
    diags.error(func.loc, "'func.func' op function " + std::string(kind) + " " +
                              std::to_string(i) +
                              " cannot have a single-device (maximal) "
                              "sharding attribute");
    return false;
  };
  for (size_t i = 0; i < body.numArguments(); ++i)
    if (const TensorSharding *s = getSharding(body.argument(i));
        s && isSingleDeviceSharding(module, *s))
      return fail("argument", i);
  Operation *ret = terminatorOf(func);
  for (size_t i = 0; ret && i < ret->numOperands(); ++i)
    if (const TensorSharding *s = getFuncResultSharding(func, i);
        s && isSingleDeviceSharding(module, *s))
      return fail("result", i);
  return true;
}

} // namespace shardlab
