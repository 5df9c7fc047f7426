// -sdy-inline-meshes: every sharding (and StableHLO replica-group mesh)
// names its mesh inline; the sdy.mesh symbols go.
#include "export_passes.h"
#include "passes/pass_utils.h"
#include "passes/replica_group_mesh.h"

namespace shardlab {

namespace {

// Replaces `mesh = @name` in StableHLO replica groups by the StableHLO
// spelling of the named mesh.
void inlineReplicaGroupMeshes(Module &module) {
  if (!mayHoldReplicaGroupMeshes(module))
    return;
  Context &ctx = module.ctx();
  walk(module.op(), [&](Operation &op) {
    if (!isReplicaGroupMeshCollective(op))
      return;
    const Attr *attr = op.attrs.get("replica_groups");
    if (!attr || attr->kind != AttrKind::Opaque)
      return;
    std::optional<ReplicaGroupMeshAxesText> groups =
        splitReplicaGroupMeshAxes(attr->text);
    std::optional<std::string> symbol =
        groups ? groups->symbol() : std::nullopt;
    if (!symbol)
      return;
    const Mesh *mesh = lookupMesh(module, *symbol);
    if (!mesh)
      return;
    groups->mesh = printStablehloMesh(*mesh);
    op.attrs.set(ctx.intern("replica_groups"),
                 ctx.attrs.opaque(groups->text()));
  });
}

} // namespace

bool inlineMeshesPass(Module &module, const PassOptions &, DiagnosticEngine &) {
  transformShardings(module, [&](TensorSharding &sharding) {
    if (sharding.mesh.inline_mesh)
      return;
    if (const Mesh *mesh = lookupMesh(module, sharding.mesh)) {
      sharding.mesh.inline_mesh = *mesh;
      sharding.mesh.symbol.clear();
    }
  });
  inlineReplicaGroupMeshes(module);
  eraseMeshOps(module);
  return true;
}

} // namespace shardlab
