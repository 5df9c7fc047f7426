// Op builders for the per-device program (local_builder.h).
#include "local_builder.h"

#include "../pass_utils.h"
#include "ir/op_properties.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace shardlab {

LocalBuilder::LocalBuilder(Context &ctx, Operation &before)
    : ctx_(ctx), block_(*before.parentBlock()), before_(before) {}

Operation *LocalBuilder::create(
    std::string_view name, const std::vector<Value *> &operands,
    const std::vector<Type> &results,
    const std::vector<std::pair<std::string_view, const Attr *>> &attrs) {
  auto op = makeOp(ctx_, name, operands, results, before_.loc);
  for (const auto &[attr_name, value] : attrs)
    op->attrs.set(ctx_.intern(attr_name), value);
  return block_.insertBefore(&before_, std::move(op));
}

const Attr *LocalBuilder::int64Attr(int64_t value) {
  return ctx_.attrs.integer(value, i64());
}

const Attr *LocalBuilder::denseArrayAttr(const std::vector<int64_t> &values) {
  return ctx_.attrs.denseArray(i64(), values);
}

const Attr *LocalBuilder::denseIntsAttr(const std::vector<int64_t> &values,
                                        const std::vector<int64_t> &shape) {
  Type type = tensorOf(shape, i64());
  return ctx_.attrs.make(
      Attr{AttrKind::DenseElements, denseOfInts(type, values), type, {}});
}

const Attr *
LocalBuilder::denseMatrixAttr(const std::vector<std::vector<int64_t>> &rows) {
  std::vector<int64_t> flat;
  for (const auto &row : rows)
    flat.insert(flat.end(), row.begin(), row.end());
  const int64_t cols = rows.empty() ? 0 : int64_t(rows.front().size());
  return denseIntsAttr(flat, {int64_t(rows.size()), cols});
}

Value *LocalBuilder::constant(const Attr *value) {
  return create("stablehlo.constant", {}, {value->type}, {{"value", value}})
      ->result(0);
}

Value *LocalBuilder::scalarI64(int64_t value) {
  return constant(denseIntsAttr({value}, {}));
}

Value *LocalBuilder::vectorI64(const std::vector<int64_t> &values) {
  return constant(denseIntsAttr(values, {int64_t(values.size())}));
}

Value *LocalBuilder::deviceIndex(bool use_replica_id) {
  Value *id =
      create(use_replica_id ? "stablehlo.replica_id" : "stablehlo.partition_id",
             {}, {tensorOf({}, ctx_.types.element("ui32"))})
          ->result(0);
  return convert(id, i64());
}

Value *LocalBuilder::lookup(const std::vector<int64_t> &table,
                            bool use_replica_id) {
  return lookupAt(table, deviceIndex(use_replica_id));
}

Value *LocalBuilder::lookupAt(const std::vector<int64_t> &table, Value *index) {
  Value *entries = vectorI64(table);
  Value *entry = dynamicSlice(entries, {index}, {1});
  return reshape(entry, {});
}

Value *LocalBuilder::convert(Value *input, Type element) {
  return create("stablehlo.convert", {input},
                {tensorOf(input->type->shape, element)})
      ->result(0);
}

Value *LocalBuilder::reshape(Value *input, const std::vector<int64_t> &shape) {
  return create("stablehlo.reshape", {input}, {reshaped(input->type, shape)})
      ->result(0);
}

Value *LocalBuilder::transpose(Value *input,
                               const std::vector<int64_t> &permutation) {
  std::vector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(input->type->shape[size_t(dim)]);
  return create("stablehlo.transpose", {input}, {reshaped(input->type, shape)},
                {{"permutation", denseArrayAttr(permutation)}})
      ->result(0);
}

Value *LocalBuilder::dynamicSlice(Value *input,
                                  const std::vector<Value *> &starts,
                                  const std::vector<int64_t> &sizes) {
  std::vector<Value *> operands{input};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return create("stablehlo.dynamic_slice", operands,
                {reshaped(input->type, sizes)},
                {{"slice_sizes", denseArrayAttr(sizes)}})
      ->result(0);
}

Value *LocalBuilder::broadcast(Value *value, Type type,
                               const std::vector<int64_t> &dims) {
  return create("stablehlo.broadcast_in_dim", {value}, {type},
                {{"broadcast_dimensions", denseArrayAttr(dims)}})
      ->result(0);
}

Value *LocalBuilder::compare(std::string_view direction, Value *lhs,
                             Value *rhs) {
  Type flags = tensorOf(lhs->type->shape, ctx_.types.element("i1"));
  return create("stablehlo.compare", {lhs, rhs}, {flags},
                {{"comparison_direction",
                  makeStablehloEnum(ctx_.attrs, "comparison_direction",
                                    direction)}})
      ->result(0);
}

namespace {

// The expressed type of `!quant.uniform<i8<-127:127>:f32, 0.5:3>` (f32),
// or "" for another element type.
std::string_view expressedTypeName(std::string_view element) {
  constexpr std::string_view kPrefix = "!quant.uniform<";
  if (element.substr(0, kPrefix.size()) != kPrefix)
    return {};
  int depth = 0;
  for (size_t i = kPrefix.size(); i < element.size(); ++i) {
    const char c = element[i];
    if (c == '<')
      ++depth;
    else if (c == '>')
      --depth;
    else if (c == ':' && depth == 0) {
      const size_t end = element.find_first_of(",>", i + 1);
      return element.substr(i + 1, end == std::string_view::npos
                                       ? std::string_view::npos
                                       : end - i - 1);
    }
  }
  return {};
}

} // namespace

Value *LocalBuilder::splat(Type type, double value) {
  const std::string_view expressed = expressedTypeName(type->element->text);
  if (expressed.empty())
    return constant(splatAttr(type, value));
  Value *plain = constant(splatAttr(
      ctx_.types.rankedTensor(type->shape, ctx_.types.element(expressed)),
      value));
  return create("stablehlo.uniform_quantize", {plain}, {type}, {})->result(0);
}

const Attr *LocalBuilder::splatAttr(Type type, double value) {
  return ctx_.attrs.make(
      Attr{AttrKind::DenseElements, denseSplatOf(type, value), type, {}});
}

Operation *LocalBuilder::pad(Value *value, Value *pad_value,
                             const std::vector<int64_t> &low,
                             const std::vector<int64_t> &high,
                             const std::vector<int64_t> &interior) {
  std::vector<int64_t> shape = value->type->shape;
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] = low[d] + high[d] + shape[d] +
               (shape[d] > 0 ? (shape[d] - 1) * interior[d] : 0);
  return create("stablehlo.pad", {value, pad_value},
                {reshaped(value->type, shape)},
                {{"edge_padding_low", denseArrayAttr(low)},
                 {"edge_padding_high", denseArrayAttr(high)},
                 {"interior_padding", denseArrayAttr(interior)}});
}

Operation *LocalBuilder::slice(Value *value, const std::vector<int64_t> &start,
                               const std::vector<int64_t> &limit,
                               const std::vector<int64_t> &strides) {
  std::vector<int64_t> shape(start.size());
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] = std::max<int64_t>(0, (limit[d] - start[d] + strides[d] - 1) /
                                        strides[d]);
  return create("stablehlo.slice", {value}, {reshaped(value->type, shape)},
                {{"start_indices", denseArrayAttr(start)},
                 {"limit_indices", denseArrayAttr(limit)},
                 {"strides", denseArrayAttr(strides)}});
}

Operation *LocalBuilder::concatenate(const std::vector<Value *> &values,
                                     int64_t dim) {
  std::vector<int64_t> shape = values.front()->type->shape;
  shape[size_t(dim)] = 0;
  for (Value *value : values)
    shape[size_t(dim)] += value->type->shape[size_t(dim)];
  return create("stablehlo.concatenate", values,
                {reshaped(values.front()->type, shape)},
                {{"dimension", int64Attr(dim)}});
}

Operation *LocalBuilder::padHighTo(Value *value, Value *pad_value,
                                   const std::vector<int64_t> &shape) {
  const std::vector<int64_t> &from = value->type->shape;
  std::vector<int64_t> high(from.size()), none(from.size(), 0);
  for (size_t d = 0; d < from.size(); ++d)
    high[d] = shape[d] - from[d];
  return pad(value, pad_value, none, high, none);
}

Operation *LocalBuilder::padHighWithZeros(Value *value,
                                          const std::vector<int64_t> &shape) {
  return padHighTo(value, splat(tensorOf({}, value->type->element), 0), shape);
}

Operation *LocalBuilder::sliceFromStart(Value *value,
                                        const std::vector<int64_t> &shape) {
  const size_t rank = shape.size();
  return slice(value, std::vector<int64_t>(rank, 0), shape,
               std::vector<int64_t>(rank, 1));
}

Value *LocalBuilder::binary(std::string_view name, Value *lhs, Value *rhs) {
  return create(name, {lhs, rhs}, {lhs->type})->result(0);
}

int64_t firstFreeChannelId(Module &module) {
  int64_t largest = 0;
  walk(module.op(), [&](Operation &op) {
    const Attr *handle = op.attrs.get("channel_handle");
    if (!handle || handle->kind != AttrKind::Opaque)
      return;
    const size_t at = handle->text.find("handle = ");
    if (at != std::string::npos)
      largest =
          std::max<int64_t>(largest, std::atoll(handle->text.c_str() + at + 9));
  });
  return largest + 1;
}

const Attr *channelHandleAttr(Context &ctx, int64_t id) {
  return ctx.attrs.opaque("#stablehlo.channel_handle<handle = " +
                          std::to_string(id) + ", type = 1>");
}

} // namespace shardlab
