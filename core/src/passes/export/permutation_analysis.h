// Which devices need other devices' data for an op whose sharding rule has
// permutation factors (pad, slice, reshape), and how far away that data
// is: what -sdy-resolve-permutation-factors decides with.
//
// A pad or slice moves data along each dimension by a shift: output
// position o holds input row (o - low) / (interior + 1). With a dimension
// of N rows split into n shards of L_in = ceil(N / n) rows, and the result
// of M rows into shards of L_out = ceil(M / n), device i holds output rows
// [i * L_out, (i + 1) * L_out) and input rows [i * L_in, (i + 1) * L_in).
// It needs the data of the device `h` hops to its left (right) when one of
// its output rows comes from input rows held there.
//
// Worked example: tensor<4x8> sharded [{"a"}, {}] over "a"=2, padded with
// low = [-1, 0], high = [4, 0] to tensor<7x8>. L_in = 2, L_out = 4. Device
// 0 holds output rows 0..3 = input rows 1..4: rows 2 and 3 are device 1's
// (one hop right; row 4 is padding). Device 1 holds output rows 4..6 =
// input rows 5..7, all padding. So right_hops = 1, left_hops = 0.
#pragma once

#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <vector>

namespace shardlab {

/// How one dimension of a pad (or a slice, as a pad with negative padding)
/// moves data between the shards of that dimension.
struct DimShift {
  int64_t in_size = 0, out_size = 0; ///< global sizes, unpadded
  int64_t low = 0, high = 0, interior = 0;
  int64_t shards = 1;
  int64_t in_local = 0, out_local = 0; ///< per-device (padded) sizes
  int64_t left_hops = 0, right_hops = 0;

  bool needsCommunication() const { return left_hops > 0 || right_hops > 0; }
  /// Each device's output rows are its own input rows, in place.
  bool isIdentity() const {
    return low == 0 && interior == 0 && in_local == out_local;
  }
};

/// The shift of a dimension of `in_size` rows padded by low / high /
/// interior, split in `shards` shards on both sides.
DimShift analyzeDimShift(int64_t in_size, int64_t low, int64_t high,
                         int64_t interior, int64_t shards);

/// Dimensions of a reshape that belong together: input dims
/// [in_begin, in_end) hold the same elements as output dims
/// [out_begin, out_end), in the same row-major order.
struct ReshapeGroup {
  size_t in_begin = 0, in_end = 0, out_begin = 0, out_end = 0;
  bool isSplit() const { return in_end - in_begin == 1 && out_end > out_begin; }
  bool isOneToOne() const {
    return in_end - in_begin == 1 && out_end - out_begin == 1;
  }
};

/// The groups of a reshape from `in` to `out` (same element count), in
/// order; size-1 dimensions join the group before them.
std::vector<ReshapeGroup> reshapeGroups(const std::vector<int64_t> &in,
                                        const std::vector<int64_t> &out);

/// How one reshape group moves data: whether some device needs another's
/// data, and for a split group (one input dimension) the hops along it and
/// where each device's output starts in the group's flat index space.
struct ReshapeMove {
  bool needs_communication = false;
  bool analyzed = true; ///< false when the group was too large to check
  int64_t left_hops = 0, right_hops = 0;
  /// Per mesh position: its shard index along the input dimension and the
  /// flat index of its first output element (split groups).
  std::vector<int64_t> in_index, flat_start;
  /// Each device's output block is one run of the flat index space (the
  /// output dims are whole after the first partial one, and 1 before it).
  bool contiguous = false;
  int64_t out_flat_local = 1; ///< elements of a device's output block
};

/// The data movement of `group` for a reshape from `in` (sharded by
/// `in_sharding`) to `out` (sharded by `out_sharding`) on `mesh`.
ReshapeMove analyzeReshapeGroup(const ReshapeGroup &group,
                                const std::vector<int64_t> &in,
                                const TensorSharding &in_sharding,
                                const std::vector<int64_t> &out,
                                const TensorSharding &out_sharding,
                                const Mesh &mesh);

} // namespace shardlab
