// Builds the StableHLO ops the partitioner writes into a per-device program
// (partition_id, offset tables, dynamic slices, reshapes, collectives),
// inserted in order before one op and carrying its location. Each helper
// returns the new op's first result; types are inferred from the operands
// the way StableHLO defines them.
#pragma once

#include "shardlab/ir/ir.h"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace shardlab {

class LocalBuilder {
public:
  /// New ops go before `before` in its block and take `before`'s location.
  LocalBuilder(Context &ctx, Operation &before);

  Context &ctx() { return ctx_; }
  Type i64() { return ctx_.types.element("i64"); }
  Type tensorOf(const std::vector<int64_t> &shape, Type element) {
    return ctx_.types.rankedTensor(shape, element);
  }
  /// Same element type as `like`, shape `shape`.
  Type reshaped(Type like, const std::vector<int64_t> &shape) {
    return ctx_.types.rankedTensor(shape, like->element);
  }

  /// Inserts op `name`; attributes are given as (name, value) pairs.
  Operation *create(
      std::string_view name, const std::vector<Value *> &operands,
      const std::vector<Type> &results,
      const std::vector<std::pair<std::string_view, const Attr *>> &attrs = {});

  /// `stablehlo.constant dense<value> : tensor<i64>`.
  Value *scalarI64(int64_t value);
  /// `stablehlo.constant dense<[values]> : tensor<Nxi64>`.
  Value *vectorI64(const std::vector<int64_t> &values);
  /// `stablehlo.constant` with `value` (a dense attribute).
  Value *constant(const Attr *value);
  /// `stablehlo.partition_id` (or replica_id) converted to tensor<i64>.
  Value *deviceIndex(bool use_replica_id);
  /// `table[device]` as a tensor<i64>: dynamic_slice of a constant table
  /// by the device index, reshaped to a scalar.
  Value *lookup(const std::vector<int64_t> &table, bool use_replica_id);
  /// `table[index]` for an i64 scalar `index`, as a tensor<i64>.
  Value *lookupAt(const std::vector<int64_t> &table, Value *index);
  Value *convert(Value *input, Type element);
  Value *reshape(Value *input, const std::vector<int64_t> &shape);
  Value *transpose(Value *input, const std::vector<int64_t> &permutation);
  Value *dynamicSlice(Value *input, const std::vector<Value *> &starts,
                      const std::vector<int64_t> &sizes);
  /// `stablehlo.broadcast_in_dim` of `value` to `type` (`dims`: where
  /// `value`'s dimensions go; empty for a scalar).
  Value *broadcast(Value *value, Type type, const std::vector<int64_t> &dims);
  /// `stablehlo.compare direction, lhs, rhs` (an i1 tensor).
  Value *compare(std::string_view direction, Value *lhs, Value *rhs);
  /// The dense splat attribute `value : type`.
  const Attr *splatAttr(Type type, double value);
  /// `stablehlo.constant` of `value` splat to `type`. A quantized element
  /// type has no literal of its own: the value is written in its expressed
  /// type and quantized (`uniform_quantize`).
  Value *splat(Type type, double value);
  /// `stablehlo.pad value, pad_value` with these paddings; the pad op.
  Operation *pad(Value *value, Value *pad_value,
                 const std::vector<int64_t> &low,
                 const std::vector<int64_t> &high,
                 const std::vector<int64_t> &interior);
  /// `stablehlo.slice value [start:limit:strides]`; the slice op.
  Operation *slice(Value *value, const std::vector<int64_t> &start,
                   const std::vector<int64_t> &limit,
                   const std::vector<int64_t> &strides);
  /// `stablehlo.concatenate values, dim`; the concatenate op.
  Operation *concatenate(const std::vector<Value *> &values, int64_t dim);
  /// `value` padded with `pad_value` at the high end of each dimension up
  /// to `shape`; the pad op, to annotate.
  Operation *padHighTo(Value *value, Value *pad_value,
                       const std::vector<int64_t> &shape);
  /// `value` padded with zeros at the high end of each dimension up to
  /// `shape`; the pad op, to annotate.
  Operation *padHighWithZeros(Value *value, const std::vector<int64_t> &shape);
  /// The leading `shape` part of `value` (a slice from 0); the slice op.
  Operation *sliceFromStart(Value *value, const std::vector<int64_t> &shape);
  Value *binary(std::string_view name, Value *lhs, Value *rhs);

  /// The i64 integer attribute `value`.
  const Attr *int64Attr(int64_t value);
  const Attr *denseArrayAttr(const std::vector<int64_t> &values);
  /// A dense i64 matrix attribute of `rows` (all of equal length).
  const Attr *denseMatrixAttr(const std::vector<std::vector<int64_t>> &rows);
  /// The dense i64 tensor attribute of `values` with `shape`.
  const Attr *denseIntsAttr(const std::vector<int64_t> &values,
                            const std::vector<int64_t> &shape);

private:
  Context &ctx_;
  Block &block_;
  Operation &before_;
};

/// The first channel id no op of `module` uses (one past the largest).
int64_t firstFreeChannelId(Module &module);
/// `#stablehlo.channel_handle<handle = id, type = 1>`.
const Attr *channelHandleAttr(Context &ctx, int64_t id);

} // namespace shardlab
