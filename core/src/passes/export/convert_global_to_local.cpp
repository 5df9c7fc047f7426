// -sdy-convert-global-to-local: the sharded global program becomes the
// program one device runs. Every value takes its local type (a dimension
// divided by its number of shards); sdy collectives become StableHLO
// collectives with explicit replica groups and channel ids; sdy.all_slice,
// sharded constants and iotas read the device's offset from a table indexed
// by partition_id; manual computations are inlined (their bodies are local
// already). See global_to_local.h for the rule and an example.
#include "export_passes.h"
#include "global_to_local.h"
#include "local_builder.h"

#include "passes/pass_utils.h"
#include "sharding/device_layout.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/format.h"

#include <algorithm>

namespace shardlab {

GlobalToLocal::GlobalToLocal(Module &target, DiagnosticEngine &engine,
                             GlobalToLocalOptions chosen)
    : module(target), ctx(target.ctx()), diags(engine), options(chosen) {}

const Mesh *GlobalToLocal::meshOf(const TensorSharding &sharding,
                                  Operation &op) {
  const Mesh *mesh = lookupMesh(module, sharding);
  if (!mesh)
    diags.error(op.loc, "unknown mesh '@" + sharding.mesh.symbol + "'");
  return mesh;
}

Type GlobalToLocal::localType(Type global, const TensorSharding *sharding) {
  if (!sharding || !global || !global->isRankedTensor())
    return global;
  const Mesh *mesh = lookupMesh(module, *sharding);
  if (!mesh || sharding->dims.size() != global->shape.size())
    return global;
  return ctx.types.rankedTensor(localShape(global->shape, *sharding, *mesh),
                                global->element, global->encoding);
}

const Attr *GlobalToLocal::nextChannelHandle() {
  return channelHandleAttr(ctx, next_channel_++);
}

const Attr *GlobalToLocal::replicaGroups(LocalBuilder &b, const Mesh &mesh,
                                         const TensorSharding &sharding,
                                         const std::vector<AxisRef> &axes) {
  const bool full_axes = std::none_of(
      axes.begin(), axes.end(), [](const AxisRef &a) { return a.isSubAxis(); });
  if (options.enable_rgv3 && full_axes && !sharding.mesh.symbol.empty()) {
    std::string text = "#stablehlo.replica_group_mesh_axes<mesh = @" +
                       sharding.mesh.symbol + ", axes = [";
    for (size_t i = 0; i < axes.size(); ++i)
      text += (i ? ", " : "") + std::string("#stablehlo.axis_ref<name = \"") +
              axes[i].name + "\">";
    return ctx.attrs.opaque(text + "]>");
  }
  const Attr *&groups = dense_groups_[{&mesh, axisRefsJoined(axes)}];
  if (!groups)
    groups = b.denseMatrixAttr(deviceGroups(mesh, axes));
  return groups;
}

Value *GlobalToLocal::shardOffset(LocalBuilder &b, const Mesh &mesh,
                                  const std::vector<AxisRef> &axes,
                                  int64_t step) {
  if (axes.empty())
    return b.scalarI64(0);
  std::vector<int64_t> table = shardIndexByDevice(mesh, axes);
  for (int64_t &entry : table)
    entry *= step;
  return b.lookup(table, useReplicaId());
}

Value *GlobalToLocal::isFirstOfGroup(LocalBuilder &b, const Mesh &mesh,
                                     const std::vector<AxisRef> &axes) {
  // One statement per op: the order they are made in is the printed order,
  // and a function's arguments are evaluated in no fixed order (g++ and
  // clang differ).
  Value *index = b.deviceIndex(useReplicaId());
  std::vector<int64_t> firsts;
  for (int64_t position : shardIndexByDevice(mesh, axes))
    firsts.push_back(position == 0 ? 1 : 0);
  Type flags = b.tensorOf({int64_t(firsts.size())}, ctx.types.element("i1"));
  Value *table = b.constant(ctx.attrs.make(
      Attr{AttrKind::DenseElements, denseOfInts(flags, firsts), flags, {}}));
  return b.dynamicSlice(table, {index}, {1});
}

Value *GlobalToLocal::keepWhere(LocalBuilder &b, Value *is_first, Value *input,
                                Value *fill) {
  Type mask_type = b.tensorOf(input->type->shape, ctx.types.element("i1"));
  Value *mask = b.broadcast(is_first, mask_type, {0});
  Value *fills = b.broadcast(fill, input->type, {});
  return b.create("stablehlo.select", {mask, input, fills}, {input->type})
      ->result(0);
}

std::string_view reductionOpName(std::string_view kind) {
  if (kind == "max")
    return "stablehlo.maximum";
  if (kind == "min")
    return "stablehlo.minimum";
  if (kind == "product")
    return "stablehlo.multiply";
  if (kind == "and")
    return "stablehlo.and";
  if (kind == "or")
    return "stablehlo.or";
  return "stablehlo.add";
}

void GlobalToLocal::setLocalType(Value *value, Type local) {
  if (local != value->type)
    global_types_.emplace(value, value->type);
  value->type = local;
}

Type GlobalToLocal::globalType(Value *value) const {
  auto it = global_types_.find(value);
  return it == global_types_.end() ? value->type : it->second;
}

void GlobalToLocal::localizeResults(Operation &op) {
  for (size_t i = 0; i < op.numResults(); ++i) {
    Value *result = op.result(i);
    setLocalType(result, localType(result->type, getSharding(result)));
  }
}

// Loop-carried values: the block arguments of a while's regions have the
// types of its results.
void GlobalToLocal::localizeRegionArguments(Operation &op) {
  if (!op.is("stablehlo.while"))
    return;
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (auto &block : op.region(r).blocks)
      for (size_t i = 0; i < block->numArguments() && i < op.numResults(); ++i)
        block->argument(i)->type = op.result(i)->type;
}

// The body of a manual computation is written in local types for its
// manual axes already: its arguments become the (local) operands, its ops
// are localized for the free axes, and they replace the computation.
//
// Outside, a result is split as the computation's out_shardings say (manual
// axes and free ones), not as the body's value is (free axes only): an op
// after it that reads its operand's sharding (a collective_permute) reads
// the out sharding.
bool GlobalToLocal::inlineManualComputation(Operation &op) {
  Block &body = op.region(0).front();
  for (size_t i = 0; i < body.numArguments() && i < op.numOperands(); ++i)
    body.argument(i)->replaceAllUsesWith(op.operand(i));
  if (!convertBlock(body))
    return false;
  Operation *ret = body.back();
  const std::vector<TensorSharding> out = shardingList(op, "out_shardings");
  for (size_t i = 0; i < op.numResults() && i < ret->numOperands(); ++i) {
    Value *returned = ret->operand(i);
    if (i < out.size() && returned->defining_op &&
        returned->defining_op->parentBlock() == &body)
      outside_shardings_[returned] = out[i];
    op.result(i)->replaceAllUsesWith(returned);
  }
  Block &outer = *op.parentBlock();
  while (body.front() != ret)
    outer.insertBefore(&op, body.take(body.front()));
  eraseOp(*ret);
  op.dropAllUses();
  outer.erase(&op);
  return true;
}

// The sdy ops a per-device program cannot hold, as Shardy's conversion
// marks them illegal: markers with no local meaning (a barrier or an edge
// has no sharding to give its result a local type by, and its operand may
// be split) and reshards left unconverted (on a mesh of other devices).
// Collectives, constants and manual computations are converted; named
// computations are kept.
namespace {
bool markedIllegal(const Operation &op) {
  return op.is("sdy.propagation_barrier") || op.is("sdy.data_flow_edge") ||
         op.is("sdy.func_data_flow_edge") || op.is("sdy.sharding_group") ||
         op.is("sdy.sharding_constraint") || op.is("sdy.reshard");
}
} // namespace

bool GlobalToLocal::convertOp(Operation &op) {
  const std::string_view name = op.name;
  if (name == "sdy.manual_computation")
    return inlineManualComputation(op);
  if (markedIllegal(op)) {
    diags.error(op.loc, "failed to legalize operation '" + std::string(name) +
                            "' that was explicitly marked illegal");
    return false;
  }
  if (name == "sdy.all_gather")
    return convertAllGather(op);
  if (name == "sdy.all_slice")
    return convertAllSlice(op);
  if (name == "sdy.all_reduce")
    return convertAllReduce(op);
  if (name == "sdy.reduce_scatter")
    return convertReduceScatter(op);
  if (name == "sdy.all_to_all")
    return convertAllToAll(op);
  if (name == "sdy.collective_permute")
    return convertCollectivePermute(op);
  if (name == "sdy.replicated_to_unreduced")
    return convertReplicatedToUnreduced(op);
  if (name == "sdy.sharded_to_unreduced")
    return convertShardedToUnreduced(op);
  if (name == "sdy.constant" || name == "stablehlo.constant")
    return convertConstant(op);
  if (name == "stablehlo.iota")
    return convertIota(op);
  if (name == "stablehlo.slice")
    return convertSlice(op);
  if (name == "stablehlo.pad")
    return convertPad(op);
  if (name == "stablehlo.convolution")
    return convertConvolution(op);
  if (name == "stablehlo.gather")
    return convertGather(op);
  if (name == "stablehlo.scatter")
    return convertScatter(op);
  if (name == "stablehlo.dynamic_update_slice")
    return convertDynamicUpdateSlice(op);
  if (name == "stablehlo.concatenate" && !checkConcatenate(op))
    return false;
  localizeResults(op);
  if (name == "func.call")
    keepOnlyCallee(op);
  // A dimension split over devices is sliced whole (a dynamic_slice's
  // sliced dimensions are replicated): its size is the local result's.
  if (name == "stablehlo.dynamic_slice" && op.result(0)->type->isRankedTensor())
    op.attrs.set(ctx.intern("slice_sizes"),
                 ctx.attrs.denseArray(ctx.types.element("i64"),
                                      op.result(0)->type->shape));
  if (name == "sdy.named_computation") {
    const std::vector<TensorSharding> in = shardingList(op, "in_shardings");
    Block &body = op.region(0).front();
    for (size_t i = 0; i < body.numArguments() && i < in.size(); ++i)
      body.argument(i)->type = localType(body.argument(i)->type, &in[i]);
  }
  localizeRegionArguments(op);
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (auto &block : op.region(r).blocks)
      if (!convertBlock(*block))
        return false;
  return true;
}

bool GlobalToLocal::convertBlock(Block &block) {
  for (Operation *op = block.front(); op;) {
    Operation *next = op->nextInBlock();
    if (!convertOp(*op))
      return false;
    op = next;
  }
  return true;
}

bool GlobalToLocal::convertFunc(Operation &func) {
  Block &body = func.region(0).front();
  std::vector<Type> inputs, results;
  for (size_t i = 0; i < body.numArguments(); ++i) {
    Value *arg = body.argument(i);
    setLocalType(arg, localType(arg->type, getSharding(arg)));
    inputs.push_back(arg->type);
  }
  const Attr *type_attr = func.attrs.get("function_type");
  Type type = std::get<Type>(type_attr->payload);
  for (size_t i = 0; i < type->results.size(); ++i)
    results.push_back(
        localType(type->results[i], getFuncResultSharding(func, i)));
  func.attrs.set(ctx.intern("function_type"),
                 ctx.attrs.make(Attr{AttrKind::TypeAttr,
                                     ctx.types.function(inputs, results),
                                     nullptr,
                                     {}}));
  return convertBlock(body);
}

bool GlobalToLocal::convertBody(Block &block) {
  next_channel_ = firstFreeChannelId(module);
  return convertBlock(block);
}

bool GlobalToLocal::run() {
  next_channel_ = firstFreeChannelId(module);
  bool ok = true;
  forEachFunc(module, [&](Operation &func) {
    if (ok && !func.region(0).empty())
      ok = convertFunc(func);
  });
  return ok;
}

bool convertGlobalToLocalPass(Module &module, const PassOptions &options,
                              DiagnosticEngine &diags) {
  GlobalToLocalOptions local;
  local.per_dim_all_gather = options.flag("per-dim-all-gather");
  local.combine_multi_dim_reduce_scatter =
      options.flag("combine-multi-dimension-reduce-scatter");
  local.enable_rgv3 = options.flag("enable-rgv3");
  local.replica_count = options.integer("replica-count");
  local.partition_count = options.integer("partition-count");
  if (module.per_device)
    return markUnchanged(module);
  if (!GlobalToLocal(module, diags, local).run())
    return false;
  module.per_device = true;
  return true;
}

} // namespace shardlab
