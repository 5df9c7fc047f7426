// GSPMD ("HLO") shardings as JAX and XLA write them in `mhlo.sharding`
// strings, and their translation to Shardy meshes and shardings.
//
//   {replicated}  {unknown}  {manual}  {maximal device=3}
//   {devices=[4,8]<=[8,4]T(1,0)}           iota tile assignment
//   {devices=[1,2,16]<=[32] last_tile_dim_replicate}
//   {devices=[2,4]0,4,1,5,2,6,3,7}         explicit device list
//   {devices=[2,1,4]<=[8] last_tile_dims={manual, replicated}}
//   {{devices=[2,1]<=[2]}, {replicated}}   tuple: one per value
//
// A tile assignment says which device holds which tile: the tile grid has
// the tensor's dims (plus the trailing replicated/manual subgroup dims) and
// each grid cell names a device. Read as a mixed-radix number, the device
// id of a cell is a sum of (index along a "piece" of a dim) x (stride): for
// `[4,8]<=[8,4]T(1,0)` on 32 devices, dim 0 walks stride 1 (4 steps) and
// dim 1 walks stride 4 (8 steps). Every piece boundary of every sharding of
// a module cuts the device range; the cuts, major to minor, are the axes of
// one shared mesh (`_axis_0`=2 covers strides 16..32, and so on), and a dim
// is sharded by the axes its pieces cover.
#pragma once

#include "shardlab/support/result.h"

#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

struct HloSharding {
  enum class Kind { Replicated, Unknown, Manual, Maximal, Tiled, Tuple };
  Kind kind = Kind::Replicated;
  int64_t device = 0;             ///< Maximal
  std::vector<int64_t> tile_dims; ///< Tiled: grid dims, subgroup dims last
  std::vector<int64_t> devices;   ///< Tiled: the device of each cell
  bool last_tile_dim_replicate = false;
  /// `last_tile_dims={manual, replicated}`: kinds of the trailing dims.
  std::vector<std::string> subgroup_kinds;
  std::vector<HloSharding> tuple; ///< Tuple

  /// Number of tile dims that are tensor dims (the rest are subgroups).
  size_t numTensorDims() const;
  bool isManualSubgroup(size_t dim) const;
};

/// Parses `{...}`; an error saying where when the text is not one.
Result<HloSharding> parseHloSharding(std::string_view text);

/// One run of a tile dim over the device ids: `size` steps of `stride`.
struct TilePiece {
  int64_t size = 1;
  int64_t stride = 1;
};

/// The pieces of each tile dim (major to minor within the dim), when the
/// tile assignment is a mixed-radix numbering of the devices 0..N-1;
/// nothing otherwise (an arbitrary device permutation).
std::optional<std::vector<std::vector<TilePiece>>>
tilePieces(const HloSharding &sharding);

/// The mesh shared by `shardings` (all tiled over the same device count):
/// the cuts of all their pieces, axes named `prefix0`, `prefix1`, ...
/// major to minor. An error when no one mesh fits.
Result<Mesh> commonMesh(const std::vector<const HloSharding *> &tiled,
                        std::string_view prefix);

/// The Shardy sharding of a tensor of `rank` dims for `sharding` (not a
/// tuple or maximal) over `mesh` (from commonMesh) named `mesh_name`.
/// Manual subgroup axes are listed in `manual_axes` when not null.
Result<TensorSharding> toTensorSharding(const HloSharding &sharding,
                                        const Mesh &mesh,
                                        const std::string &mesh_name,
                                        int64_t rank,
                                        std::vector<std::string> *manual_axes);

/// The GSPMD string of `sharding` over `mesh`, as XLA's Shardy export
/// writes it: `{replicated}` when no axis shards, `{maximal device=N}` on a
/// one-device mesh, otherwise the canonical iota tile assignment
///   [{"y"}, {"x":(2)2}] over ["x"=8, "y"=4]  ->
///   {devices=[4,2,4]<=[2,2,2,4]T(3,1,0,2) last_tile_dim_replicate}
/// (axes split into the sub-axes the sharding uses, dims' axes first, the
/// rest replicated, adjacent runs merged), or an explicit device list when
/// the mesh has device_ids. Axes in `manual_axes` become a trailing
/// `last_tile_dims={manual}` group.
std::string hloShardingText(const TensorSharding &sharding, const Mesh &mesh,
                            const std::vector<std::string> &manual_axes = {});

/// The same in XLA's mesh-and-axes form (HloShardingV3), as the export
/// writes it with enable-hlo-sharding-v3:
///   {mesh['x'=2,'y'=4], [{'x'}, {'y', ?}], unreduced={'z'}}
///   {single_device[device_id=0]}     {mesh[], replicated}
/// `simplify_replicated` writes a sharding with no sharded dim, no open dim
/// and no unreduced axis as `{mesh[], replicated}`.
std::string hloShardingV3Text(const TensorSharding &sharding, const Mesh &mesh,
                              bool simplify_replicated);

/// HloShardingV3 strings read back (the import side of
/// enable-hlo-sharding-v3), one sharding per tuple element, each over an
/// inline mesh:
///   {mesh[a=8,b=8,c=8], [{b}, {?}]}   ->  mesh<["a"=8, "b"=8, "c"=8]>, [{"b"},
///   {?}] {mesh['x'=2], [{'x'}], unreduced={'y'}}, {mesh[], replicated} (no
///   dims: the caller gives the rank), {maximal_mesh[device_id=5]} or
///   {single_device[device_id=5]} -> mesh<[], device_ids=[5]>, []
///   {{...}, {...}}                    ->  two shardings
/// An error saying where when the text is not such a string.
Result<std::vector<TensorSharding>> parseHloShardingV3(std::string_view text);

} // namespace shardlab
