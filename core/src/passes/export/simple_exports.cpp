// Export passes that strip or rewrite attributes without looking at the
// data flow: remove-sharding-groups, sharding-constraint-to-reshard,
// drop-sharding-rules, drop-sharding-and-mesh,
// remove-propagation-debug-info, close-shardings and inline-meshes.
#include "export_passes.h"
#include "shardlab/passes/pass_utils.h"
#include "shardlab/passes/replica_group_mesh.h"

namespace shardlab {

namespace {

// The ops of `kind` nested in the module, collected before any is erased.
std::vector<Operation *> opsNamed(Module &module, std::string_view kind) {
  std::vector<Operation *> ops;
  if (!mayContain(module, {kind}))
    return ops;
  walk(module.op(), [&](Operation &op) {
    if (op.is(kind))
      ops.push_back(&op);
  });
  return ops;
}

// Meshes are symbols of the module: only its body holds them.
void eraseMeshOps(Module &module) {
  for (Operation *op = module.body().front(); op;) {
    Operation *next = op->nextInBlock();
    if (op->is("sdy.mesh"))
      eraseOp(*op);
    op = next;
  }
}

// Replaces `mesh = @name` in StableHLO replica groups by the StableHLO
// spelling of the named mesh.
void inlineReplicaGroupMeshes(Module &module) {
  Context &ctx = module.ctx();
  walk(module.op(), [&](Operation &op) {
    const Attr *attr = op.attrs.get("replica_groups");
    if (!attr || attr->kind != AttrKind::Opaque)
      return;
    std::optional<ReplicaGroupMeshAxesText> groups =
        splitReplicaGroupMeshAxes(attr->text);
    std::optional<std::string> symbol =
        groups ? groups->symbol() : std::nullopt;
    if (!symbol)
      return;
    const Operation *mesh_op = module.lookupSymbol(*symbol);
    if (!mesh_op || !mesh_op->is("sdy.mesh"))
      return;
    groups->mesh = printStablehloMesh(mesh_op->attrs.get("mesh")->mesh());
    op.attrs.set(ctx.intern("replica_groups"),
                 ctx.attrs.opaque(groups->text()));
  });
}

} // namespace

bool removeShardingGroupsPass(Module &module, const PassOptions &,
                              DiagnosticEngine &) {
  for (Operation *op : opsNamed(module, "sdy.sharding_group"))
    eraseOp(*op);
  return true;
}

bool shardingConstraintToReshardPass(Module &module, const PassOptions &,
                                     DiagnosticEngine &) {
  for (Operation *op : opsNamed(module, "sdy.sharding_constraint")) {
    auto reshard = makeOp(module.ctx(), "sdy.reshard", {op->operand(0)},
                          {op->result(0)->type}, op->loc);
    reshard->attrs = op->attrs;
    Operation *created =
        op->parentBlock()->insertBefore(op, std::move(reshard));
    replaceOp(*op, {created->result(0)});
  }
  return true;
}

bool dropShardingRulesPass(Module &module, const PassOptions &,
                           DiagnosticEngine &) {
  walk(module.op(), [&](Operation &op) {
    const Attr *rule = op.attrs.get("sdy.sharding_rule");
    if (rule && rule->kind == AttrKind::OpShardingRule &&
        !rule->rule().is_custom)
      op.attrs.erase("sdy.sharding_rule");
  });
  return true;
}

bool dropShardingAndMeshPass(Module &module, const PassOptions &,
                             DiagnosticEngine &) {
  Context &ctx = module.ctx();
  walk(module.op(), [&](Operation &op) {
    op.attrs.erase("sdy.sharding");
    if (op.is("func.func"))
      eraseFuncArgAndResultAttr(op, "sdy.sharding", ctx);
  });
  eraseMeshOps(module);
  return true;
}

bool removePropagationDebugInfoPass(Module &module, const PassOptions &,
                                    DiagnosticEngine &) {
  static const char *const kDebugAttrs[] = {
      "sdy.propagation_edges",          "sdy.block_arg_propagation_edges",
      "sdy.result_propagation_edges",   "sdy.sharding_origins",
      "sdy.block_arg_sharding_origins", "sdy.result_sharding_origins"};
  Context &ctx = module.ctx();
  walk(module.op(), [&](Operation &op) {
    for (const char *name : kDebugAttrs) {
      if (op.is("func.func"))
        eraseFuncArgAndResultAttr(op, name, ctx);
      else
        op.attrs.erase(name);
    }
  });
  return true;
}

bool closeShardingsPass(Module &module, const PassOptions &,
                        DiagnosticEngine &) {
  transformShardings(module, [](TensorSharding &sharding) {
    for (DimSharding &dim : sharding.dims) {
      dim.closed = true;
      dim.priority.reset();
    }
    sharding.replicated.clear();
  });
  return true;
}

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
