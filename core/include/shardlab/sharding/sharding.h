// Shardy's sharding representation as plain values: meshes, axis references
// (with sub-axes), dimension shardings, tensor shardings and op sharding
// rules. These types carry no IR; the text parser builds them and the
// verifier, propagation and cost model read them.
#pragma once

#include "shardlab/sharding/axis_name.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlab {

/// One named axis of a mesh, e.g. `"x"=4`.
struct MeshAxis {
  AxisName name;
  int64_t size = 1;
  bool operator==(const MeshAxis &) const = default;
};

/// A logical device mesh `<["a"=2, "b"=4], device_ids=[...]>`. An empty axis
/// list with no device ids is the empty mesh; with exactly one device id it
/// is a maximal (single-device) mesh. `device_ids` is empty when the order is
/// the iota order (the parser drops an explicit iota list, as Shardy does).
struct Mesh {
  std::vector<MeshAxis> axes;
  std::vector<int64_t> device_ids;

  bool isMaximal() const { return axes.empty() && device_ids.size() == 1; }
  bool isEmpty() const { return axes.empty() && device_ids.empty(); }
  /// Product of the axis sizes (1 for an empty or maximal mesh).
  int64_t totalSize() const;
  /// Size of the named axis, or nullopt when the mesh has no such axis.
  std::optional<int64_t> axisSize(const AxisName &name) const;
  /// Position of the named axis in declaration order, or -1.
  int axisIndex(const AxisName &name) const;
  bool operator==(const Mesh &) const = default;
};

/// The sub-axis `(pre_size)size` of a full axis: reshape the axis of size n
/// to [pre_size, size, n / (pre_size * size)] and take the middle one.
struct SubAxisInfo {
  int64_t pre_size = 1;
  int64_t size = 1;
  bool operator==(const SubAxisInfo &) const = default;
};

/// A reference to a full mesh axis `"x"` or to a sub-axis `"x":(m)k`.
struct AxisRef {
  AxisName name;
  std::optional<SubAxisInfo> sub;

  bool isSubAxis() const { return sub.has_value(); }
  bool operator==(const AxisRef &) const = default;
};

/// The axes sharding one tensor dimension, major to minor. `closed == false`
/// prints as a trailing `?`. `priority` is the user priority `pN`.
struct DimSharding {
  std::vector<AxisRef> axes;
  bool closed = true;
  std::optional<int64_t> priority;
  bool operator==(const DimSharding &) const = default;
};

/// One `{"a"}: 0->1` parameter of sdy.all_to_all: move `axes` from source
/// dim `src_dim` to target dim `tgt_dim`.
struct AllToAllParam {
  std::vector<AxisRef> axes;
  int64_t src_dim = 0;
  int64_t tgt_dim = 0;
  bool operator==(const AllToAllParam &) const = default;
};

enum class ReductionKind { Sum, Max, Min };

/// The mesh a sharding refers to: a symbol `@name` or an inline `mesh<...>`.
struct MeshRef {
  std::string symbol; ///< without '@'; empty when inline
  std::optional<Mesh> inline_mesh;
  bool operator==(const MeshRef &) const = default;
};

/// `#sdy.sharding<@mesh, [dims...], replicated={...}, unreduced=kind{...}>`.
struct TensorSharding {
  MeshRef mesh;
  std::vector<DimSharding> dims;
  std::vector<AxisRef> replicated;
  std::vector<AxisRef> unreduced;
  ReductionKind unreduced_kind = ReductionKind::Sum;
  bool operator==(const TensorSharding &) const = default;
};

/// `#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=2, j=4, k=8} ...>`.
/// A tensor mapping is a list of dimensions; each dimension is a list of
/// factor indices (more than one for a compound factor, as after reshape).
struct OpShardingRule {
  using DimMapping = std::vector<int64_t>;
  using TensorMapping = std::vector<DimMapping>;
  std::vector<TensorMapping> operands;
  std::vector<TensorMapping> results;
  std::vector<int64_t> factor_sizes;
  std::vector<int64_t> reduction;
  std::vector<int64_t> need_replication;
  std::vector<int64_t> permutation;
  std::vector<int64_t> blocked_propagation;
  bool is_custom = false;
  bool operator==(const OpShardingRule &) const = default;
};

} // namespace shardlab
