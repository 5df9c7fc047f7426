// The piece of a global tensor each device holds under a sharding, and the
// global tensor put back together from the pieces: how simulated devices
// get their arguments and how their results are compared with a global run.
//
//   mesh <["a"=2, "b"=2]>, sharding [{"a"}, {}], global 4x6, local 2x6
//   device 0 (a=0, b=0): rows 0..1      device 1 (a=0, b=1): rows 0..1
//   device 2 (a=1, b=0): rows 2..3      device 3 (a=1, b=1): rows 2..3
//
// A device's box may reach past the global edge when a dimension does not
// divide (padding): those elements are zero going in and ignored coming
// back. Devices that hold the same element must agree on it.
#pragma once

#include "shardlab/interpreter/tensor.h"
#include "shardlab/sharding/sharding.h"
#include "shardlab/support/result.h"

#include <vector>

namespace shardlab::interpreter {

/// The devices of `mesh` (its device ids, or 0..size-1).
std::vector<int64_t> meshDevices(const Mesh &mesh);

/// Where device `device`'s box of shape `local_shape` starts in the
/// global tensor, per dimension, under `sharding` over `mesh`; an error
/// for a device or axis the mesh does not have.
Result<std::vector<int64_t>>
shardOffsets(const TensorSharding &sharding, const Mesh &mesh, int64_t device,
             const std::vector<int64_t> &local_shape);

/// shardOffsets for each of `devices`, in their order.
Result<std::vector<std::vector<int64_t>>>
shardOffsetsOnDevices(const TensorSharding &sharding, const Mesh &mesh,
                      const std::vector<int64_t> &devices,
                      const std::vector<int64_t> &local_shape);

/// The box of type `local` at `offsets` in `global` (zero past its edge).
Tensor shardOf(const Tensor &global, Type local,
               const std::vector<int64_t> &offsets);

/// The tensor of type `global` whose boxes at `offsets[d]` are
/// `shards[d]`; an error naming the element where two devices disagree, or
/// an element no device holds.
Result<Tensor> assemble(const std::vector<Tensor> &shards,
                        const std::vector<std::vector<int64_t>> &offsets,
                        Type global);

} // namespace shardlab::interpreter
