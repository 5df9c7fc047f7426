// Where each device of a mesh sits and which shard it holds: a device's
// coordinates are the mixed-radix digits of its position in the mesh (axes
// major to minor, a sub-axis "x":(m)k is the middle digit of x split as
// [m, k, rest]); its id is that position, or device_ids[position].
//
// Worked example, mesh <["x"=2, "y"=4]> (device id = 4x + y):
//   deviceGroups({"y"})          = [[0,1,2,3], [4,5,6,7]]
//   deviceGroups({"y":(1)2})     = [[0,2], [1,3], [4,6], [5,7]]
//   shardIndexByDevice({"x"})    = [0,0,0,0, 1,1,1,1]
//   deviceOrder([{}, {"y"}])      = ["y", "x"]: device 4x + y is at 2y + x
//   permutationPairs([{"x"}, {}] -> [{}, {"x"}]) = [[0,0], [1,1], ...]: the
//   device at position p keeps it, as [{}, {"x"}] orders devices by x first
//   too; with [{"y"}, {}] -> [{}, {"y"}] every device keeps its place too.
// These are what the partitioner writes into collectives (replica groups,
// source-target pairs) and offset tables, and what the cost model reads.
#pragma once

#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace shardlab {

/// The digits of some axes in a device's mesh position, read from the
/// position itself (the rule the file header states, without coordinate
/// vectors or axis-name lookups: per-device loops over meshes of 10^4
/// devices). On <["x"=2, "y"=4]>, AxesDigits({"y"}).index(6) = 2 and
/// rest(6) = 4; AxesDigits({"x"}).index(6) = 1.
class AxesDigits {
public:
  AxesDigits(const Mesh &mesh, const std::vector<AxisRef> &axes);

  /// indexAlongAxes of the device at `linear`.
  int64_t index(int64_t linear) const {
    int64_t index = 0;
    for (const Digit &d : digits_)
      index = index * d.size + digit(d, linear);
    return index;
  }

  /// The position of the device at `linear` with the digits set to zero
  /// (withoutAxes): what the devices differing only along the axes share.
  int64_t rest(int64_t linear) const {
    for (const Digit &d : digits_)
      linear -= digit(d, linear) * d.minor * d.stride;
    return linear;
  }

private:
  struct Digit {
    int64_t size = 1, full = 0, stride = 1, minor = 1; ///< full 0: no axis
  };
  static int64_t digit(const Digit &d, int64_t linear) {
    if (d.full == 0)
      return 0;
    return ((linear / d.stride) % d.full / d.minor) % d.size;
  }
  std::vector<Digit> digits_;
};

/// Coordinates of the device at mesh position `linear` (row-major).
std::vector<int64_t> meshCoordinates(const Mesh &mesh, int64_t linear);

/// The id of the device at mesh position `linear`.
int64_t deviceIdAt(const Mesh &mesh, int64_t linear);

/// The mesh position (row-major) of the device at `coords`.
int64_t meshPosition(const Mesh &mesh, const std::vector<int64_t> &coords);

/// Source-target pairs (device ids) sending from every device to the one
/// `hop` further along mesh axis `axis`, the other axes fixed: round a ring
/// (`wrap`: index mod the axis size) or, without `wrap`, only where that
/// device exists. On ["a"=2, "b"=3], axis 1, hop 1, wrap: [0, 1], [1, 2],
/// [2, 0], [3, 4], [4, 5], [5, 3].
std::vector<std::vector<int64_t>> pairsAlongAxis(const Mesh &mesh, int axis,
                                                 int64_t hop, bool wrap);

/// `coords` moved along `axes` to index `index` (the inverse of
/// indexAlongAxes there): the device that holds shard `index` of a
/// dimension sharded by `axes` and agrees with `coords` on the other axes.
std::vector<int64_t> coordinatesWithIndex(const Mesh &mesh,
                                          const std::vector<AxisRef> &axes,
                                          std::vector<int64_t> coords,
                                          int64_t index);

/// Index of the device at `coords` along `axes` (major first): the shard
/// of a dimension sharded by `axes` that it holds.
int64_t indexAlongAxes(const Mesh &mesh, const std::vector<AxisRef> &axes,
                       const std::vector<int64_t> &coords);

/// For every device id, its index along `axes` (indexAlongAxes).
std::vector<int64_t> shardIndexByDevice(const Mesh &mesh,
                                        const std::vector<AxisRef> &axes);

/// Device groups of a collective over `axes`: devices that differ only in
/// those axes, each ordered by its index along `axes`; groups ordered by
/// the coordinates of the other axes (mesh order).
std::vector<std::vector<int64_t>>
deviceGroups(const Mesh &mesh, const std::vector<AxisRef> &axes);

/// The axes that order the devices for `sharding`: the dimension axes
/// (dimension by dimension, major first), then what is left of the mesh
/// axes, in mesh order. A device's index along them is its position; a
/// collective permute sends from each position under one sharding to the
/// same position under the other.
std::vector<AxisRef> deviceOrder(const Mesh &mesh,
                                 const TensorSharding &sharding);

/// Source-target pairs of a collective permute from `from` (on
/// `from_mesh`) to `to` (on `to_mesh`, the same axes in another device
/// order, or the same mesh): every device sends its shard to the device
/// that holds it under `to` and agrees with the source on the axes `to`
/// leaves free. One pair per device, self pairs included, by source id.
std::vector<std::pair<int64_t, int64_t>>
permutationPairs(const Mesh &from_mesh, const TensorSharding &from,
                 const Mesh &to_mesh, const TensorSharding &to);

} // namespace shardlab
