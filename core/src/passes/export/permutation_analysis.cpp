// Data movement of pads, slices and reshapes between shards
// (permutation_analysis.h).
#include "permutation_analysis.h"

#include "sharding/device_layout.h"
#include "sharding/sharding_utils.h"

#include <algorithm>

namespace shardlab {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A group is checked element by element; past this many (devices times
// elements per device) it is judged by divisibility alone.
constexpr int64_t kMaxCheckedElements = int64_t(1) << 22;

std::vector<AxisRef> axesOf(const TensorSharding &sharding, size_t dim) {
  return dim < sharding.dims.size() ? sharding.dims[dim].axes
                                    : std::vector<AxisRef>{};
}

// The dims [first, last) of `sharding`, as a sharding of their own.
TensorSharding shardingOfDims(const TensorSharding &sharding, size_t first,
                              size_t last) {
  TensorSharding part;
  part.mesh = sharding.mesh;
  for (size_t d = first; d < last; ++d)
    part.dims.push_back(d < sharding.dims.size() ? sharding.dims[d]
                                                 : DimSharding{});
  return part;
}

// One tensor's dims of a group, for one device: the block it holds.
struct Block {
  std::vector<int64_t> begin, end; ///< end clipped to the real size
  std::vector<int64_t> local;      ///< padded local sizes
};

Block blockOf(const std::vector<int64_t> &shape, size_t first, size_t last,
              const TensorSharding &sharding, const Mesh &mesh,
              const std::vector<int64_t> &coords) {
  Block block;
  for (size_t d = first; d < last; ++d) {
    const int64_t local = ceilDiv(shape[d], shardedSizeAt(sharding, d, mesh));
    const int64_t index = indexAlongAxes(mesh, axesOf(sharding, d), coords);
    block.begin.push_back(index * local);
    block.end.push_back(std::min(shape[d], (index + 1) * local));
    block.local.push_back(local);
  }
  return block;
}

bool allDivisible(const std::vector<int64_t> &shape, size_t first, size_t last,
                  const TensorSharding &sharding, const Mesh &mesh) {
  for (size_t d = first; d < last; ++d)
    if (shape[d] % shardedSizeAt(sharding, d, mesh) != 0)
      return false;
  return true;
}

// Whether each device's output block is one run of flat indices: going
// from the minor dim, dims are whole until the first partial one, and the
// dims before that hold one index each.
bool isContiguousBlock(const std::vector<int64_t> &out, const Block &block) {
  size_t d = block.local.size();
  while (d > 0 && block.local[d - 1] == out[d - 1])
    --d;
  if (d == 0)
    return true;
  for (size_t k = 0; k + 1 < d; ++k)
    if (block.local[k] != 1)
      return false;
  return true;
}

// The mesh axes the dims [a_first, a_last) of `a` and [b_first, b_last) of
// `b` use, as a mesh of their own (mesh order, whole axes): devices that
// agree on them hold the same blocks on both sides, so a group's blocks
// are worked out once per position of this mesh, not once per device.
struct UsedAxes {
  Mesh mesh;
  AxesDigits digits; ///< a full mesh position's position on `mesh`
};

UsedAxes usedAxes(const Mesh &mesh, const TensorSharding &a, size_t a_first,
                  size_t a_last, const TensorSharding &b, size_t b_first,
                  size_t b_last) {
  auto uses = [](const TensorSharding &sharding, size_t first, size_t last,
                 const AxisName &name) {
    for (size_t d = first; d < last && d < sharding.dims.size(); ++d)
      for (const AxisRef &ref : sharding.dims[d].axes)
        if (ref.name == name)
          return true;
    return false;
  };
  Mesh used;
  std::vector<AxisRef> refs;
  for (const MeshAxis &axis : mesh.axes)
    if (uses(a, a_first, a_last, axis.name) ||
        uses(b, b_first, b_last, axis.name)) {
      used.axes.push_back(axis);
      refs.push_back(AxisRef{axis.name});
    }
  return {std::move(used), AxesDigits(mesh, refs)};
}

} // namespace

DimShift analyzeDimShift(int64_t in_size, int64_t low, int64_t high,
                         int64_t interior, int64_t shards) {
  DimShift shift;
  shift.in_size = in_size;
  shift.low = low;
  shift.high = high;
  shift.interior = interior;
  shift.shards = shards;
  const int64_t step = interior + 1;
  shift.out_size = in_size == 0
                       ? low + high
                       : low + high + in_size + (in_size - 1) * interior;
  shift.in_local = ceilDiv(in_size, shards);
  shift.out_local = ceilDiv(shift.out_size, shards);
  if (shards <= 1 || shift.in_local == 0)
    return shift;
  for (int64_t i = 0; i < shards; ++i) {
    const int64_t first = i * shift.out_local;
    const int64_t last = std::min((i + 1) * shift.out_local, shift.out_size);
    // Positions in the interior-padded input; an interior gap counts as
    // part of the row before it (Shardy's view).
    const int64_t from = std::max<int64_t>(first - low, 0);
    const int64_t to = std::min(last - 1 - low, (in_size - 1) * step);
    if (first >= last || from > to)
      continue;
    const int64_t row_from = from / step, row_to = to / step;
    shift.left_hops = std::max(shift.left_hops, i - row_from / shift.in_local);
    shift.right_hops = std::max(shift.right_hops, row_to / shift.in_local - i);
  }
  // With interior padding Shardy exchanges as far on both sides.
  if (interior > 0 && shift.needsCommunication())
    shift.left_hops = shift.right_hops =
        std::max(shift.left_hops, shift.right_hops);
  return shift;
}

std::vector<ReshapeGroup> reshapeGroups(const std::vector<int64_t> &in,
                                        const std::vector<int64_t> &out) {
  std::vector<ReshapeGroup> groups;
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    ReshapeGroup group{i, i, o, o};
    int64_t in_product = 1, out_product = 1;
    if (i < in.size())
      in_product *= in[i++];
    if (o < out.size())
      out_product *= out[o++];
    while (in_product != out_product) {
      if (in_product < out_product && i < in.size())
        in_product *= in[i++];
      else if (o < out.size())
        out_product *= out[o++];
      else if (i < in.size())
        in_product *= in[i++];
      else
        break;
    }
    // Trailing size-1 dims belong to this group.
    while (i < in.size() && in[i] == 1 && (o >= out.size() || out[o] != 1))
      ++i;
    while (o < out.size() && out[o] == 1 && (i >= in.size() || in[i] != 1))
      ++o;
    group.in_end = i;
    group.out_end = o;
    groups.push_back(group);
  }
  return groups;
}

namespace {

bool anySharded(const TensorSharding &sharding, size_t first, size_t last,
                const Mesh &mesh) {
  for (size_t d = first; d < last; ++d)
    if (shardedSizeAt(sharding, d, mesh) > 1)
      return true;
  return false;
}

int64_t flatIndex(const std::vector<int64_t> &shape,
                  const std::vector<int64_t> &at) {
  int64_t flat = 0;
  for (size_t k = 0; k < at.size(); ++k)
    flat = flat * shape[k] + at[k];
  return flat;
}

// The input dims of a group as a row-major space, and a box in it: the
// block a device holds.
struct BoxInSpace {
  std::vector<int64_t> dims, strides, lo, hi;
  std::vector<bool> whole_from; ///< the box covers dims k.. entirely
};

BoxInSpace boxInSpace(const std::vector<int64_t> &in, size_t first, size_t last,
                      const Block &own) {
  BoxInSpace box;
  box.dims.assign(in.begin() + long(first), in.begin() + long(last));
  const size_t rank = box.dims.size();
  box.strides.assign(rank, 1);
  for (size_t k = rank; k-- > 1;)
    box.strides[k - 1] = box.strides[k] * box.dims[k];
  box.lo = own.begin;
  box.hi = own.end;
  box.whole_from.assign(rank + 1, true);
  for (size_t k = rank; k-- > 0;)
    box.whole_from[k] =
        box.whole_from[k + 1] && box.lo[k] <= 0 && box.hi[k] >= box.dims[k];
  return box;
}

// Whether every flat index in [a, b) of dims k.. lies in the box. A range
// splits at dim k into a partial row, whole rows and a partial row; whole
// rows are answered at once, so the walk is linear in the rank.
bool rangeInBox(const BoxInSpace &box, size_t k, int64_t a, int64_t b) {
  if (a >= b)
    return true;
  const int64_t stride = box.strides[k];
  if (a == 0 && b == stride * box.dims[k])
    return box.whole_from[k];
  const int64_t i0 = a / stride, i1 = (b - 1) / stride;
  if (i0 < box.lo[k] || i1 >= box.hi[k])
    return false;
  if (k + 1 == box.dims.size())
    return true;
  const int64_t a_rest = a - i0 * stride, b_rest = b - i1 * stride;
  if (i0 == i1)
    return rangeInBox(box, k + 1, a_rest, b_rest);
  return rangeInBox(box, k + 1, a_rest, stride) &&
         (i1 - i0 < 2 || box.whole_from[k + 1]) &&
         rangeInBox(box, k + 1, 0, b_rest);
}

// Checks every real element of each device's output block against the
// input block it holds (groups that merge dimensions), a row of the output
// block at a time: each row is one run of flat indices.
void checkElementwise(const ReshapeGroup &group, const std::vector<int64_t> &in,
                      const TensorSharding &in_sharding,
                      const std::vector<int64_t> &out_group,
                      const TensorSharding &out_sharding, const Mesh &mesh,
                      ReshapeMove &move) {
  const TensorSharding out_dims =
      shardingOfDims(out_sharding, group.out_begin, group.out_end);
  const Mesh used = usedAxes(mesh, in_sharding, group.in_begin, group.in_end,
                             out_dims, 0, out_dims.dims.size())
                        .mesh;
  for (int64_t position = 0;
       position < used.totalSize() && !move.needs_communication; ++position) {
    const std::vector<int64_t> coords = meshCoordinates(used, position);
    const Block own =
        blockOf(in, group.in_begin, group.in_end, in_sharding, used, coords);
    const Block block =
        blockOf(out_group, 0, out_group.size(), out_dims, used, coords);
    bool empty = block.begin.empty();
    for (size_t k = 0; k < block.begin.size(); ++k)
      empty = empty || block.begin[k] >= block.end[k];
    if (empty)
      continue;
    const BoxInSpace box = boxInSpace(in, group.in_begin, group.in_end, own);
    const size_t minor = block.begin.size() - 1;
    const int64_t row = block.end[minor] - block.begin[minor];
    std::vector<int64_t> at = block.begin;
    for (bool more = true; more && !move.needs_communication;) {
      const int64_t flat = flatIndex(out_group, at);
      if (!rangeInBox(box, 0, flat, flat + row))
        move.needs_communication = true;
      size_t k = minor;
      while (k > 0 && ++at[k - 1] == block.end[k - 1]) {
        at[k - 1] = block.begin[k - 1];
        --k;
      }
      more = k > 0;
    }
  }
}

// A split group: a device holds one run of the input dimension, so its
// output block stays local when the block's first and last real elements
// are in that run; the hops are how far those two are.
void checkSplit(const ReshapeGroup &group, const std::vector<int64_t> &in,
                const TensorSharding &in_sharding,
                const std::vector<int64_t> &out_group,
                const TensorSharding &out_sharding, const Mesh &mesh,
                ReshapeMove &move) {
  const TensorSharding out_dims =
      shardingOfDims(out_sharding, group.out_begin, group.out_end);
  const UsedAxes used =
      usedAxes(mesh, in_sharding, group.in_begin, group.in_end, out_dims, 0,
               out_dims.dims.size());
  std::vector<int64_t> in_index, flat_start;
  for (int64_t position = 0; position < used.mesh.totalSize(); ++position) {
    const std::vector<int64_t> coords = meshCoordinates(used.mesh, position);
    const Block own = blockOf(in, group.in_begin, group.in_end, in_sharding,
                              used.mesh, coords);
    const Block block =
        blockOf(out_group, 0, out_group.size(), out_dims, used.mesh, coords);
    const int64_t local = own.local[0];
    const int64_t self = local ? own.begin[0] / local : 0;
    in_index.push_back(self);
    flat_start.push_back(flatIndex(out_group, block.begin));
    move.contiguous = move.contiguous && isContiguousBlock(out_group, block);
    std::vector<int64_t> last = block.end;
    bool empty = false;
    for (size_t k = 0; k < last.size(); ++k) {
      empty = empty || block.begin[k] >= block.end[k];
      --last[k];
    }
    if (empty || local == 0)
      continue;
    const int64_t first_flat = flatIndex(out_group, block.begin);
    const int64_t last_flat = flatIndex(out_group, last);
    if (first_flat >= own.begin[0] && last_flat < own.end[0])
      continue;
    move.needs_communication = true;
    move.left_hops = std::max(move.left_hops, self - first_flat / local);
    move.right_hops = std::max(move.right_hops, last_flat / local - self);
  }
  // Every device's, from its position on the used axes.
  const int64_t total = mesh.totalSize();
  move.in_index.reserve(size_t(total));
  move.flat_start.reserve(size_t(total));
  for (int64_t position = 0; position < total; ++position) {
    const size_t at = size_t(used.digits.index(position));
    move.in_index.push_back(in_index[at]);
    move.flat_start.push_back(flat_start[at]);
  }
}

// A split whose output dims take the input dimension's axes in order,
// each whole but the last sharded one, with no padding: device i's output
// block is its own input run.
bool isAlignedSplit(const ReshapeGroup &group, const std::vector<int64_t> &in,
                    const TensorSharding &in_sharding,
                    const std::vector<int64_t> &out,
                    const TensorSharding &out_sharding, const Mesh &mesh) {
  const int64_t in_shards = shardedSizeAt(in_sharding, group.in_begin, mesh);
  if (in[group.in_begin] % in_shards != 0)
    return false;
  std::vector<AxisRef> axes;
  bool partial_seen = false;
  for (size_t d = group.out_begin; d < group.out_end; ++d) {
    const std::vector<AxisRef> dim_axes = axesOf(out_sharding, d);
    const int64_t shards = shardedSizeAt(out_sharding, d, mesh);
    if (partial_seen && shards > 1)
      return false;
    if (out[d] % shards != 0)
      return false;
    partial_seen = partial_seen || out[d] != shards;
    axes.insert(axes.end(), dim_axes.begin(), dim_axes.end());
  }
  return axes == axesOf(in_sharding, group.in_begin);
}

} // namespace

ReshapeMove analyzeReshapeGroup(const ReshapeGroup &group,
                                const std::vector<int64_t> &in,
                                const TensorSharding &in_sharding,
                                const std::vector<int64_t> &out,
                                const TensorSharding &out_sharding,
                                const Mesh &mesh) {
  ReshapeMove move;
  const std::vector<int64_t> out_group(out.begin() + long(group.out_begin),
                                       out.begin() + long(group.out_end));
  for (size_t d = group.out_begin; d < group.out_end; ++d)
    move.out_flat_local *=
        ceilDiv(out[d], shardedSizeAt(out_sharding, d, mesh));
  move.contiguous = true;
  const bool sharded =
      anySharded(in_sharding, group.in_begin, group.in_end, mesh) ||
      anySharded(out_sharding, group.out_begin, group.out_end, mesh);
  // Unsharded, or one dimension to one of its size with the same axes:
  // every device holds the same block on both sides.
  if (!sharded ||
      (group.isOneToOne() &&
       shardingOfDims(in_sharding, group.in_begin, group.in_end).dims ==
           shardingOfDims(out_sharding, group.out_begin, group.out_end).dims))
    return move;
  if (group.isSplit() &&
      isAlignedSplit(group, in, in_sharding, out, out_sharding, mesh))
    return move;
  if (group.isSplit()) {
    checkSplit(group, in, in_sharding, out_group, out_sharding, mesh, move);
    return move;
  }
  move.contiguous = false;
  if (mesh.totalSize() * move.out_flat_local > kMaxCheckedElements) {
    move.analyzed = false;
    move.needs_communication =
        !allDivisible(in, group.in_begin, group.in_end, in_sharding, mesh) ||
        !allDivisible(out, group.out_begin, group.out_end, out_sharding, mesh);
    return move;
  }
  checkElementwise(group, in, in_sharding, out_group, out_sharding, mesh, move);
  return move;
}

} // namespace shardlab
