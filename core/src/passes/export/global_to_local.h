// The state of -sdy-convert-global-to-local while it rewrites a module: the
// options, the next channel id, and the rewrites of the op kinds that are
// more than a change of type. The pass itself (convert_global_to_local.cpp)
// walks the module; collectives are in global_to_local_collectives.cpp and
// the other ops (constants, iota, slice, pad, concatenate) in
// global_to_local_ops.cpp, gather and scatter in
// global_to_local_gather_scatter.cpp.
//
// The rule every rewrite keeps: a value of global type T with sharding S
// becomes a value of the local type, T with each dimension divided by the
// number of shards of S along it; a device holds the shard whose index along
// a dimension is its index along that dimension's axes (device_layout.h).
// Example, mesh <["x"=2, "y"=4]>:
//   %0 = sdy.all_gather [{"y"}, {}] %arg0 out_sharding=<@m, [{"x"}, {}]>
//        : tensor<8x16xf32>            (%arg0: [{"x", "y"}, {}], 1x16 local)
// becomes
//   %0 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64,
//        channel_handle = ..., replica_groups = dense<[[0, 1, 2, 3],
//        [4, 5, 6, 7]]>, use_global_device_ids}> : (tensor<1x16xf32>)
//        -> tensor<4x16xf32>
#pragma once

#include <unordered_map>

#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

class LocalBuilder;

struct GlobalToLocalOptions {
  bool per_dim_all_gather = false;
  bool combine_multi_dim_reduce_scatter = false;
  bool enable_rgv3 = false; ///< mesh-axes replica groups where possible
  int64_t replica_count = 1;
  int64_t partition_count = 0; ///< 0: the mesh's device count
};

class GlobalToLocal {
public:
  GlobalToLocal(Module &module, DiagnosticEngine &diags,
                GlobalToLocalOptions options);

  /// Rewrites every function; false after an error was reported.
  bool run();
  /// Rewrites the ops of one block whose arguments are local already (the
  /// body of a manual computation being built); channel ids continue after
  /// those the module has.
  bool convertBody(Block &block);

  // Shared by the rewrites.
  Module &module;
  Context &ctx;
  DiagnosticEngine &diags;
  GlobalToLocalOptions options;

  /// The mesh of `sharding`; reports an error at `op` when unknown.
  const Mesh *meshOf(const TensorSharding &sharding, Operation &op);
  /// `global` divided by the shards of `sharding` (unchanged when null or
  /// not a ranked tensor).
  Type localType(Type global, const TensorSharding *sharding);
  /// A fresh `#stablehlo.channel_handle<handle = N, type = 1>`.
  const Attr *nextChannelHandle();
  /// The replica groups of a collective over `axes` of `mesh`: the mesh
  /// axes form (enable-rgv3) when every axis is a full one, else dense.
  const Attr *replicaGroups(LocalBuilder &b, const Mesh &mesh,
                            const TensorSharding &sharding,
                            const std::vector<AxisRef> &axes);
  /// Whether device indices come from replica_id (replica-count > 1 and a
  /// single partition) instead of partition_id.
  bool useReplicaId() const {
    return options.partition_count == 1 && options.replica_count > 1;
  }
  /// `stablehlo.all_reduce` of `input` over `axes` of `mesh` with the
  /// reduction `kind` ("sum", "max", "min").
  Value *allReduce(LocalBuilder &b, const Mesh &mesh,
                   const TensorSharding &sharding, Value *input,
                   const std::vector<AxisRef> &axes, std::string_view kind);
  /// Replaces `op`'s one result by `value` and erases `op`. A rewrite's
  /// value (a local reshape, say) has no sharding: it keeps the global one
  /// `op` had, for a later rewrite that reads its operand's (a permute).
  void replaceWith(Operation &op, Value *value);
  /// Erases the `sdy.sharding` of a one-result op rewritten in place,
  /// keeping it for globalSharding.
  void dropSharding(Operation &op);
  /// A func.call keeps only its callee, as Shardy's pass rebuilds calls
  /// (MLIR's call signature conversion): its sharding (kept for
  /// globalSharding), other attributes and properties go.
  void keepOnlyCallee(Operation &call);
  /// The global (unpadded) type `value` had before it became local; its
  /// type when it was not rewritten.
  Type globalType(Value *value) const;
  /// Sets `value`'s type to `local`, remembering the global one.
  void setLocalType(Value *value, Type local);
  /// The global sharding of `value`: its own, or that of the op a rewrite
  /// replaced by it or dropped; nullptr when none.
  const TensorSharding *globalSharding(Value *value) const;
  /// The offset of this device's shard along `axes` of `mesh`, in elements
  /// of size `step`: a constant 0 when `axes` is empty, else a table lookup.
  Value *shardOffset(LocalBuilder &b, const Mesh &mesh,
                     const std::vector<AxisRef> &axes, int64_t step);
  /// Whether this device is the first of its group along `axes` of `mesh`
  /// (a tensor<1xi1>).
  Value *isFirstOfGroup(LocalBuilder &b, const Mesh &mesh,
                        const std::vector<AxisRef> &axes);
  /// `input` where `is_first` (isFirstOfGroup) holds, `fill` (a scalar)
  /// broadcast elsewhere.
  Value *keepWhere(LocalBuilder &b, Value *is_first, Value *input, Value *fill);

  // The rewrites; each replaces `op` and returns false on an error.
  bool convertAllGather(Operation &op);
  bool convertAllSlice(Operation &op);
  bool convertAllReduce(Operation &op);
  bool convertReduceScatter(Operation &op);
  bool convertAllToAll(Operation &op);
  bool convertCollectivePermute(Operation &op);
  bool convertReplicatedToUnreduced(Operation &op);
  bool convertShardedToUnreduced(Operation &op);
  bool convertConstant(Operation &op);
  bool convertIota(Operation &op);
  bool convertSlice(Operation &op);
  bool sliceStartsByDevice(Operation &op, const TensorSharding &sharding,
                           Type local);
  bool convertPad(Operation &op);
  bool convertConvolution(Operation &op);
  bool convertGather(Operation &op);
  bool convertScatter(Operation &op);
  bool convertDynamicUpdateSlice(Operation &op);
  bool checkConcatenate(Operation &op);

private:
  bool convertFunc(Operation &func);
  bool convertBlock(Block &block);
  bool convertOp(Operation &op);
  bool inlineManualComputation(Operation &op);
  void localizeResults(Operation &op);
  void localizeRegionArguments(Operation &op);
  int64_t next_channel_ = 1;
  /// Dense replica groups by mesh and axes: a model's layers gather over
  /// the same axes again and again, and one attribute (they never change)
  /// serves them all, computed once (1,024 devices' groups each).
  std::map<std::pair<const Mesh *, std::string>, const Attr *> dense_groups_;
  std::unordered_map<const Value *, TensorSharding> replaced_shardings_;
  /// The out shardings of inlined manual computations, by the body value
  /// that now stands for each result; they take precedence over the
  /// value's own (free-axes) sharding for the ops after it.
  std::unordered_map<const Value *, TensorSharding> outside_shardings_;
  std::unordered_map<const Value *, Type> global_types_;
};

/// The stablehlo op computing `kind` ("sum", "max", "min") of two scalars.
std::string_view reductionOpName(std::string_view kind);

} // namespace shardlab
