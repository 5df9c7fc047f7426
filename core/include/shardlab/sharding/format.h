// Text forms of sharding values as Shardy prints them, for diagnostics and for
// the printer: axis refs (`"x":(2)4`), axis lists (`["x", "y"]`), meshes
// (`#sdy.mesh<["a"=2], device_ids=[1, 0]>`), dimension and tensor shardings
// (`#sdy.sharding<@mesh, [{"a", ?}, {}p1], replicated={"b"}>`), factor
// symbols (`i`..`z`, `z_1`, ...) and ranked tensor types (`tensor<?x4xf32>`).
#pragma once

#include "shardlab/sharding/sharding.h"

#include <string>
#include <vector>

namespace shardlab {

/// `"x"` or `"x":(pre)size`.
std::string axisRefToString(const AxisRef &axis);
/// Comma-separated axis refs without brackets: `"x", "y":(2)2`.
std::string axisRefsJoined(const std::vector<AxisRef> &axes);
/// `["x", "y":(2)2]` (Shardy's strippedAttrsString of an axis list).
std::string axisListToString(const std::vector<AxisRef> &axes);
/// `sum`, `max` or `min`.
std::string reductionKindName(ReductionKind kind);
/// The mesh body `<["a"=2, "b"=4], device_ids=[...]>` (no mnemonic).
std::string meshBodyToString(const Mesh &mesh);
/// `#sdy.mesh<...>`, as MLIR prints a MeshAttr in a diagnostic.
std::string meshToString(const Mesh &mesh);
/// `@name` or `mesh<...>`.
std::string meshRefToString(const MeshRef &ref);
/// `{"a", ?}`, `{?}`, `{}`, with a trailing `pN` priority.
std::string dimShardingToString(const DimSharding &dim);
/// `<@mesh, [{"a"}, {}], replicated={...}, unreduced=max{...}>`.
std::string shardingBodyToString(const TensorSharding &sharding);
/// `#sdy.sharding<...>`, as MLIR prints a TensorShardingAttr.
std::string shardingToString(const TensorSharding &sharding);
/// Factor symbol of a factor index: 0 -> `i`, 17 -> `z`, 18 -> `z_1`.
std::string factorSymbol(int64_t factor);
/// `tensor<16x?xf32>` from dims (kDynamic prints `?`) and an element type.
std::string rankedTensorTypeToString(const std::vector<int64_t> &dims,
                                     const std::string &element_type);

} // namespace shardlab
