// Mesh deduplication of XLA's round trip (the export pipeline, and the
// import with lift-and-dedup-meshes=true): meshes over the same devices are
// one mesh under different axis names, so every sharding on such a mesh is
// rewritten onto one main mesh and the others are erased.
//
// Axes are positions in the device order, major to minor: axis k of a mesh
// spans the multiplicative range [P, P * size) where P is the product of the
// axes before it, and a sub-axis "x":(pre)size of it spans
// [P * pre, P * pre * size). A range maps onto the main mesh as the axes and
// sub-axes that cover it:
//
//   main  ["axis_0"=2, "axis_1"=4, "axis_2"=4]   spans [1,2) [2,8) [8,32)
//   other ["x"=8, "y"=4]                         spans [1,8) [8,32)
//   "x" -> "axis_0", "axis_1";  "y" -> "axis_2";
//   "x":(2)2 = [2,4) -> "axis_1":(1)2;  "x":(4)2 = [4,8) -> "axis_1":(2)2
//
// The main mesh is the first of them in the module. A mesh
// is merged only when every reference to it maps exactly (no range splits
// an axis unevenly) and only shardings refer to its axes (no manual
// computation or collective names them); a main mesh whose axes such an op
// names still takes the others.
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "shardlab/sharding/axis.h"
#include "xla_passes.h"

#include <map>
#include <optional>
#include <set>

namespace shardlab {

namespace {

struct Span {
  int64_t lo = 1, hi = 1;
};

std::optional<Span> spanOf(const AxisRef &ref, const Mesh &mesh) {
  int64_t before = 1;
  for (const MeshAxis &axis : mesh.axes) {
    if (axis.name == ref.name) {
      if (!ref.sub)
        return Span{before, before * axis.size};
      const int64_t lo = before * ref.sub->pre_size;
      return Span{lo, lo * ref.sub->size};
    }
    before *= axis.size;
  }
  return std::nullopt;
}

// Appends `ref` to `out`, merging it with the previous piece of the same
// axis when the two are adjacent ("a":(1)2, "a":(2)2 -> "a" for a=4).
void appendMerged(std::vector<AxisRef> &out, AxisRef ref, int64_t axis_size) {
  if (!out.empty() && out.back().name == ref.name) {
    const SubAxisInfo prev = out.back().sub.value_or(SubAxisInfo{1, axis_size});
    const SubAxisInfo next = ref.sub.value_or(SubAxisInfo{1, axis_size});
    if (prev.pre_size * prev.size == next.pre_size) {
      out.back().sub = SubAxisInfo{prev.pre_size, prev.size * next.size};
      if (out.back().sub->pre_size == 1 && out.back().sub->size == axis_size)
        out.back().sub.reset();
      return;
    }
  }
  out.push_back(std::move(ref));
}

// The axes of `main` covering `span`, or nothing if an axis is cut unevenly.
std::optional<std::vector<AxisRef>> coveringAxes(Span span, const Mesh &main) {
  std::vector<AxisRef> out;
  int64_t before = 1;
  for (const MeshAxis &axis : main.axes) {
    const int64_t lo = std::max(span.lo, before);
    const int64_t hi = std::min(span.hi, before * axis.size);
    if (lo < hi) {
      if (lo % before || hi % lo)
        return std::nullopt;
      const int64_t pre = lo / before, size = hi / lo;
      if (axis.size % (pre * size))
        return std::nullopt;
      AxisRef ref{axis.name, std::nullopt};
      if (pre != 1 || size != axis.size)
        ref.sub = SubAxisInfo{pre, size};
      appendMerged(out, std::move(ref), axis.size);
    }
    before *= axis.size;
  }
  int64_t covered = 1;
  for (const AxisRef &ref : out)
    covered *= ref.sub ? ref.sub->size : *main.axisSize(ref.name);
  if (covered * span.lo != span.hi)
    return std::nullopt;
  return out;
}

std::optional<std::vector<AxisRef>>
mapAxes(const std::vector<AxisRef> &axes, const Mesh &from, const Mesh &main) {
  std::vector<AxisRef> out;
  for (const AxisRef &ref : axes) {
    std::optional<Span> span = spanOf(ref, from);
    std::optional<std::vector<AxisRef>> mapped =
        span ? coveringAxes(*span, main) : std::nullopt;
    if (!mapped)
      return std::nullopt;
    for (AxisRef &piece : *mapped) {
      const int64_t size = *main.axisSize(piece.name);
      appendMerged(out, std::move(piece), size);
    }
  }
  return out;
}

// `sharding` (on `from`) rewritten onto `main`, or nothing.
std::optional<TensorSharding> mapSharding(TensorSharding sharding,
                                          const Mesh &from, const Mesh &main,
                                          const std::string &main_name) {
  for (DimSharding &dim : sharding.dims) {
    auto axes = mapAxes(dim.axes, from, main);
    if (!axes)
      return std::nullopt;
    dim.axes = std::move(*axes);
  }
  for (auto *list : {&sharding.replicated, &sharding.unreduced}) {
    auto axes = mapAxes(*list, from, main);
    if (!axes)
      return std::nullopt;
    *list = std::move(*axes);
  }
  sharding.mesh.symbol = main_name;
  return sharding;
}

// The meshes whose axes an op names outside its sharding attributes (a
// manual computation's manual axes, a collective's axes): they stay as
// they are.
std::set<std::string> meshesNamedOutsideShardings(Module &module) {
  std::set<std::string> named;
  walk(module.op(), [&](Operation &op) {
    const bool names_axes =
        op.is("sdy.manual_computation") || op.is("sdy.all_gather") ||
        op.is("sdy.all_slice") || op.is("sdy.all_reduce") ||
        op.is("sdy.all_to_all") || op.is("sdy.reduce_scatter") ||
        op.is("sdy.collective_permute");
    if (!names_axes)
      return;
    for (const char *name : {"in_shardings", "out_shardings"})
      for (const TensorSharding &sharding : shardingList(op, name))
        named.insert(sharding.mesh.symbol);
    const Attr *out = op.attrs.get("out_sharding");
    if (out && out->kind == AttrKind::Sharding)
      named.insert(out->sharding().mesh.symbol);
  });
  return named;
}

struct MeshOp {
  Operation *op;
  std::string name;
  Mesh mesh;
};

} // namespace

void dedupMeshesOverSameDevices(Module &module) {
  std::vector<MeshOp> meshes;
  for (Operation &op : module.body())
    if (op.is("sdy.mesh"))
      meshes.push_back(
          {&op, op.attrs.get("sym_name")->str(), op.attrs.get("mesh")->mesh()});
  if (meshes.size() < 2)
    return;
  const std::set<std::string> pinned = meshesNamedOutsideShardings(module);
  // Candidates: name -> main mesh (same devices, not itself the main one).
  std::map<std::string, const MeshOp *> main_of;
  for (const MeshOp &m : meshes) {
    if (m.mesh.axes.empty() || pinned.count(m.name))
      continue;
    const MeshOp *main = nullptr;
    for (const MeshOp &other : meshes)
      if (!main && !other.mesh.axes.empty() &&
          other.mesh.totalSize() == m.mesh.totalSize() &&
          other.mesh.device_ids == m.mesh.device_ids)
        main = &other;
    if (main != &m)
      main_of[m.name] = main;
  }
  // A mesh stays when any of its shardings does not map.
  transformShardings(module, [&](TensorSharding &sharding) {
    auto it = main_of.find(sharding.mesh.symbol);
    if (it == main_of.end())
      return;
    const Mesh &from = *lookupMesh(module, sharding.mesh);
    if (!mapSharding(sharding, from, it->second->mesh, it->second->name))
      main_of.erase(it);
  });
  if (main_of.empty())
    return;
  std::map<std::string, Mesh> merged;
  for (const MeshOp &m : meshes)
    if (main_of.count(m.name))
      merged[m.name] = m.mesh;
  transformShardings(module, [&](TensorSharding &sharding) {
    auto it = main_of.find(sharding.mesh.symbol);
    if (it != main_of.end())
      sharding = *mapSharding(sharding, merged.at(sharding.mesh.symbol),
                              it->second->mesh, it->second->name);
  });
  for (const MeshOp &m : meshes)
    if (main_of.count(m.name))
      module.body().erase(m.op);
  module.invalidateSymbols();
}

} // namespace shardlab
