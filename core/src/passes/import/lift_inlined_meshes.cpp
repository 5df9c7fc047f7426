// -sdy-lift-inlined-meshes: every mesh written inline in a sharding (or a
// StableHLO replica-group mesh) becomes an sdy.mesh symbol, one per distinct
// mesh, and duplicate mesh symbols merge.
#include "import_passes.h"
#include "passes/pass_utils.h"
#include "passes/replica_group_mesh.h"
#include "shardlab/sharding/axis.h"

#include <iterator>
#include <map>

namespace shardlab {

namespace {

// The symbols of the module's meshes, deduplicated, and where new meshes go.
struct MeshSymbols {
  Module &module;
  std::vector<std::pair<Mesh, std::string>> by_mesh;
  std::map<std::string, std::string> renamed; // erased duplicate -> kept
  Operation *insert_before = nullptr;
  int64_t uniquing_counter = 0;

  std::string uniqueName(const std::string &base) {
    std::string name = base;
    while (module.lookupSymbol(name))
      name = base + "_" + std::to_string(uniquing_counter++);
    return name;
  }

  std::string nameFor(const Mesh &mesh) {
    for (const auto &[known, name] : by_mesh)
      if (known == mesh)
        return name;
    std::string base =
        mesh.isMaximal() ? "maximal_mesh_" + std::to_string(mesh.device_ids[0])
        : mesh.isEmpty() ? "empty_mesh"
                         : "mesh";
    std::string name = insertMesh(base, mesh);
    by_mesh.emplace_back(mesh, name);
    return name;
  }

  /// A new `sdy.mesh` named `base` (uniqued) before `insert_before`.
  std::string insertMesh(const std::string &base, const Mesh &mesh) {
    std::string name = uniqueName(base);
    insertMeshOp(module, insert_before, name, mesh);
    return name;
  }
};

// Erases meshes equal to an earlier one; returns where new meshes go.
void dedupMeshOps(MeshSymbols &symbols) {
  Operation *last_mesh = nullptr;
  Block &body = symbols.module.body();
  for (Operation *op = body.front(); op;) {
    Operation *next = op->nextInBlock();
    if (op->is("sdy.mesh")) {
      const Mesh &mesh = op->attrs.get("mesh")->mesh();
      const std::string &name = op->attrs.get("sym_name")->str();
      bool duplicate = false;
      for (const auto &[known, known_name] : symbols.by_mesh)
        if (known == mesh) {
          symbols.renamed[name] = known_name;
          duplicate = true;
          break;
        }
      if (duplicate) {
        body.erase(op);
      } else {
        symbols.by_mesh.emplace_back(mesh, name);
        last_mesh = op;
      }
    }
    op = next;
  }
  symbols.insert_before = last_mesh ? last_mesh->nextInBlock() : body.front();
}

// The replacement for the mesh of one replica_groups attribute, if any.
std::optional<std::string>
liftedReplicaGroupMesh(const ReplicaGroupMeshAxesText &groups,
                       MeshSymbols &symbols,
                       std::map<std::string, std::string> &lifted) {
  if (std::optional<std::string> symbol = groups.symbol()) {
    auto it = symbols.renamed.find(*symbol);
    if (it == symbols.renamed.end())
      return std::nullopt;
    return it->second;
  }
  std::optional<Mesh> mesh = parseStablehloMesh(groups.mesh);
  if (!mesh)
    return std::nullopt;
  // StableHLO meshes become sdy meshes of their axes alone (device ids are
  // not carried over), one per distinct StableHLO mesh.
  std::string &name = lifted[printStablehloMesh(*mesh)];
  if (name.empty())
    name = symbols.insertMesh("mesh", Mesh{mesh->axes, {}});
  return name;
}

// The collectives that may hold a mesh, grouped by kind in visiting order,
// collected in one walk.
std::vector<std::vector<Operation *>> meshCollectives(Module &module) {
  std::vector<std::vector<Operation *>> by_kind(
      std::size(kReplicaGroupMeshCollectives));
  if (!mayHoldReplicaGroupMeshes(module))
    return by_kind;
  walkPostOrder(module.op(), [&](Operation &op) {
    for (size_t k = 0; k < by_kind.size(); ++k)
      if (op.is(kReplicaGroupMeshCollectives[k]) &&
          op.attrs.get("replica_groups"))
        by_kind[k].push_back(&op);
  });
  return by_kind;
}

void liftReplicaGroupMeshes(MeshSymbols &symbols) {
  Context &ctx = symbols.module.ctx();
  std::map<std::string, std::string> lifted;
  for (const std::vector<Operation *> &ops : meshCollectives(symbols.module))
    for (Operation *op : ops) {
      const Attr *attr = op->attrs.get("replica_groups");
      if (attr->kind != AttrKind::Opaque)
        continue;
      std::optional<ReplicaGroupMeshAxesText> groups =
          splitReplicaGroupMeshAxes(attr->text);
      if (!groups)
        continue;
      if (std::optional<std::string> name =
              liftedReplicaGroupMesh(*groups, symbols, lifted)) {
        groups->mesh = "@" + *name;
        op->attrs.set(ctx.intern("replica_groups"),
                      ctx.attrs.opaque(groups->text()));
      }
    }
}

// `{axes = [{name = "x", size = 2 : i64}], device_ids = dense<...>}`: the
// mesh as a dictionary StableHLO can read.
const Attr *stablehloMeshDict(const Mesh &mesh, Context &ctx) {
  Type i64 = ctx.types.element("i64");
  std::vector<const Attr *> axes;
  for (const MeshAxis &axis : mesh.axes)
    axes.push_back(ctx.attrs.make(
        Attr{AttrKind::Dict,
             std::vector<NamedAttr>{
                 {ctx.intern("name"), ctx.attrs.string(axis.name.str())},
                 {ctx.intern("size"), ctx.attrs.integer(axis.size, i64)}},
             nullptr,
             {}}));
  std::vector<NamedAttr> entries{{ctx.intern("axes"), ctx.attrs.array(axes)}};
  if (!mesh.device_ids.empty()) {
    std::string ids = printStablehloMesh(Mesh{{}, mesh.device_ids});
    // Reuse the `dense<...> : tensor<...>` part of the StableHLO spelling.
    size_t start = ids.find("dense<");
    entries.push_back(
        {ctx.intern("device_ids"),
         ctx.attrs.opaque(ids.substr(start, ids.size() - start - 1))});
  }
  return ctx.attrs.make(Attr{AttrKind::Dict, std::move(entries), nullptr, {}});
}

// Shardy tags every named mesh with its StableHLO form for later consumers.
void tagStablehloMeshes(Module &module) {
  Context &ctx = module.ctx();
  for (Operation &op : module.body())
    if (op.is("sdy.mesh") && !op.attrs.get("stablehlo.mesh"))
      op.attrs.set(ctx.intern("stablehlo.mesh"),
                   stablehloMeshDict(op.attrs.get("mesh")->mesh(), ctx));
}

} // namespace

bool liftInlinedMeshesPass(Module &module, const PassOptions &,
                           DiagnosticEngine &) {
  MeshSymbols symbols{module, {}, {}, nullptr, 0};
  dedupMeshOps(symbols);
  transformShardings(module, [&](TensorSharding &sharding) {
    if (sharding.mesh.inline_mesh) {
      sharding.mesh.symbol = symbols.nameFor(*sharding.mesh.inline_mesh);
      sharding.mesh.inline_mesh.reset();
    } else if (auto it = symbols.renamed.find(sharding.mesh.symbol);
               it != symbols.renamed.end()) {
      sharding.mesh.symbol = it->second;
    }
  });
  liftReplicaGroupMeshes(symbols);
  tagStablehloMeshes(module);
  return true;
}

} // namespace shardlab
