// The `#stablehlo.replica_group_mesh_axes<mesh = ..., axes = [...]>`
// attribute of StableHLO collectives, which the parser keeps as opaque text.
// lift-inlined-meshes and inline-meshes only need to read and replace its
// `mesh` parameter, so this splits the text around that parameter instead of
// giving the IR a structured StableHLO attribute.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"

#include <optional>
#include <string>
#include <string_view>

namespace shardlab {

/// The collectives whose replica_groups may hold a mesh, in the order
/// Shardy visits them (which decides the names of lifted meshes).
inline constexpr const char *kReplicaGroupMeshCollectives[] = {
    "stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.reduce_scatter",
    "stablehlo.all_to_all", "stablehlo.collective_broadcast"};

/// Whether `op` is one of kReplicaGroupMeshCollectives.
bool isReplicaGroupMeshCollective(const Operation &op);

/// False when `module` has no op of kReplicaGroupMeshCollectives (by the op
/// pool's counts, without a walk): no replica group then names a mesh.
bool mayHoldReplicaGroupMeshes(const Module &module);

/// The text of a replica_group_mesh_axes attribute split around its mesh.
struct ReplicaGroupMeshAxesText {
  std::string before; ///< `#stablehlo.replica_group_mesh_axes<mesh = `
  std::string mesh;   ///< `@name`, `#stablehlo.mesh<...>` or another form
  std::string after;  ///< `, axes = [...]>`

  std::string text() const { return before + mesh + after; }
  /// The referenced symbol when the mesh is `@name`.
  std::optional<std::string> symbol() const;
};

/// Splits `text`; nullopt when it is not a replica_group_mesh_axes
/// attribute with a `mesh` parameter.
std::optional<ReplicaGroupMeshAxesText>
splitReplicaGroupMeshAxes(std::string_view text);

/// Reads `#stablehlo.mesh<axes = [...], device_ids = dense<...> : ...>` in
/// either spelling of its axes (`#stablehlo.mesh_axis<name = "x", size = 2>`
/// or `<name = "x", size = 2>`); nullopt on anything else.
std::optional<Mesh> parseStablehloMesh(std::string_view text);

/// The StableHLO spelling of `mesh`, as StableHLO prints it:
/// `#stablehlo.mesh<axes=[<name = "x", size = 2>], device_ids=dense<[1, 0]>
/// : tensor<2xi64>>`.
std::string printStablehloMesh(const Mesh &mesh);

} // namespace shardlab
