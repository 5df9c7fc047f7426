// The state of -sdy-resolve-permutation-factors while it rewrites a module.
// The pass (resolve_permutation_factors.cpp) decides per op which sharded
// dimensions move data between devices and replicates them around the op;
// halo_exchange.cpp builds the other way, a manual computation that fetches
// just the neighbouring rows each device needs (enable-halo-exchange).
#pragma once

#include "permutation_analysis.h"

#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardlab {

class LocalBuilder;

class PermutationResolver {
public:
  PermutationResolver(Module &module, bool halo_exchange, bool use_replica_id);

  /// Resolves the permutation factors of `op` (erasing it when it is
  /// replaced).
  void resolve(Operation &op);
  /// Whether any op was rewritten.
  bool changed() const { return changed_; }

private:
  // Decisions and the replication rewrite (resolve_permutation_factors.cpp).
  void resolvePadOrSlice(Operation &op);
  void resolveReshape(Operation &op);
  void resolveReverse(Operation &op);
  void resolveWindowed(Operation &op);
  void resolveConcatenate(Operation &op);
  /// Reshards the operands' `operand_dims` and the results' `result_dims`
  /// to replicated around `op`, and back after it.
  void replicate(Operation &op,
                 const std::vector<std::vector<int64_t>> &operand_dims,
                 const std::vector<std::vector<int64_t>> &result_dims);

  // Halo exchanges (halo_exchange.cpp).
  void haloPadOrSlice(Operation &op, const TensorSharding &in,
                      const TensorSharding &out, const Mesh &mesh,
                      const std::vector<DimShift> &shifts);
  void haloReshape(Operation &op, const TensorSharding &in,
                   const TensorSharding &out, const Mesh &mesh,
                   const ReshapeGroup &group, const ReshapeMove &move);
  void haloReverse(Operation &op, const TensorSharding &sharding,
                   const Mesh &mesh, const std::vector<int64_t> &dims);
  /// `rows` with the rows of the devices up to `left` shards before and
  /// `right` shards after along `dim` around them (collective permutes,
  /// concatenated farthest left first).
  Value *withNeighbourRows(LocalBuilder &b, Value *rows, size_t dim,
                           int64_t left, int64_t right, const Mesh &mesh,
                           const TensorSharding &sharding);
  /// One dimension of a pad or slice inside the manual computation: the
  /// neighbours' rows, this device's, padded, then this device's window.
  Value *haloStep(LocalBuilder &b, Value *rows, Value *pad_value, size_t dim,
                  const DimShift &shift, const Mesh &mesh,
                  const TensorSharding &sharding);
  /// Rows shifted right by `shift` along `dim` (padding moved to the front),
  /// taking the rows that leave each device from its left neighbours.
  Value *shiftRows(LocalBuilder &b, Value *rows, size_t dim, int64_t shift,
                   const Mesh &mesh, const TensorSharding &sharding);
  /// `stablehlo.collective_permute` sending each device's `value` to the
  /// device `hops` shards further along `axes` (negative: back).
  Value *permute(LocalBuilder &b, Value *value, const Mesh &mesh,
                 const std::vector<AxisRef> &axes, int64_t hops);
  /// This device's mesh position (partition_id or replica_id, through the
  /// mesh's device ids).
  Value *meshPositionValue(LocalBuilder &b, const Mesh &mesh);
  /// This device's index along `axes`: divide and remainder of its mesh
  /// position when the axes are consecutive digits of it, else a table.
  Value *shardIndexValue(LocalBuilder &b, const Mesh &mesh,
                         const std::vector<AxisRef> &axes);
  /// The symbol of a mesh like `mesh_ref`'s with `device_ids`: an existing
  /// equal one, else a new `<name>_reversed` at the top of the module.
  std::string meshSymbolWithIds(const std::string &symbol, const Mesh &mesh);
  /// `sharding` of rank `rank` with no axes, on `sharding`'s mesh.
  static TensorSharding replicated(const TensorSharding &like, size_t rank);
  void annotate(Operation *op, const TensorSharding &sharding);
  /// A manual computation over `manual_axes` of `operands` before `before`,
  /// with an empty body ending in sdy.return; its block arguments have the
  /// operands' types divided along the manual axes.
  Operation *manualComputation(Operation &before,
                               const std::vector<Value *> &operands,
                               const std::vector<TensorSharding> &in,
                               const TensorSharding &out,
                               const std::vector<std::string> &manual_axes,
                               const Mesh &mesh);
  /// Ends the manual computation with `result`; its type is the result's
  /// times the manual shards of `out`. Returns the manual computation's
  /// result, sliced back to `shape` where it was padded.
  Value *finishManualComputation(Operation *manual, Value *result,
                                 const TensorSharding &out, const Mesh &mesh,
                                 const std::vector<std::string> &manual_axes,
                                 const std::vector<int64_t> &shape);

  /// The mesh of `sharding` (memoized: the pass looks up the same few).
  const Mesh *meshOf(const TensorSharding &sharding) {
    return meshes_.of(sharding);
  }

  Module &module_;
  Context &ctx_;
  MeshCache meshes_;
  bool halo_exchange_;
  bool use_replica_id_;
  int64_t next_channel_;
  bool changed_ = false;
};

/// The names of the mesh axes `sharding`'s dimensions `dims` use, in mesh
/// order.
std::vector<std::string> axisNamesOf(const TensorSharding &sharding,
                                     const std::vector<int64_t> &dims,
                                     const Mesh &mesh);

} // namespace shardlab
