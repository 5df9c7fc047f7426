// What the scheduler reads from the IR beyond shapes: the device groups and
// bytes of sdy collectives, and constant trip counts of while loops.
#include "ir/op_properties.h"
#include "program_internal.h"
#include "shardlab/ir/sharding_access.h"

#include <cmath>

namespace shardlab::schedule::detail {
namespace {

std::vector<AxisRef> collectiveAxes(const Operation &op) {
  std::vector<AxisRef> axes;
  for (const NamedAttr &entry : op.attrs.entries()) {
    const AttrPayload &p = entry.value->payload;
    if (const auto *flat = std::get_if<std::vector<AxisRef>>(&p))
      axes.insert(axes.end(), flat->begin(), flat->end());
    else if (const auto *dims =
                 std::get_if<std::vector<std::vector<AxisRef>>>(&p))
      for (const auto &dim : *dims)
        axes.insert(axes.end(), dim.begin(), dim.end());
    else if (const auto *params = std::get_if<std::vector<AllToAllParam>>(&p))
      for (const AllToAllParam &param : *params)
        axes.insert(axes.end(), param.axes.begin(), param.axes.end());
  }
  return axes;
}

std::optional<double> constantValue(Value *value) {
  Operation *def = value ? value->defining_op : nullptr;
  const Attr *attr =
      def && (def->is("stablehlo.constant") || def->is("sdy.constant"))
          ? def->attrs.get("value")
          : nullptr;
  if (!attr || attr->kind != AttrKind::DenseElements)
    return std::nullopt;
  const auto &dense = std::get<DenseElements>(attr->payload);
  if (dense.values.empty())
    return std::nullopt;
  return dense.values.front().real;
}

Operation *terminator(Region &region) {
  return region.empty() ? nullptr : region.front().back();
}

} // namespace

std::optional<CollectiveCall> sdyCollectiveCall(const Module &module,
                                                Operation &op) {
  const CollectiveKind kind = sdyCollectiveKind(op);
  const Attr *out = op.attrs.get("out_sharding");
  if (kind == CollectiveKind::None || !out || out->kind != AttrKind::Sharding)
    return std::nullopt;
  const Mesh *mesh = lookupMesh(module, out->sharding().mesh);
  if (!mesh || op.numOperands() != 1 || op.numResults() != 1)
    return std::nullopt;
  CollectiveCall call;
  call.kind = kind;
  const LocalTensor in = localTensor(module, op.operand(0));
  call.operand_bytes = in.bytes;
  call.output_bytes = localTensor(module, op.result(0)).bytes;
  call.dtype = in.dtype;
  if (kind == CollectiveKind::CollectivePermute) {
    const TensorSharding *from = getSharding(op.operand(0));
    if (from)
      call.pairs = permutePairs(*mesh, *from, out->sharding());
    for (const auto &[src, dst] : call.pairs)
      call.groups.push_back({src, dst});
  } else {
    call.groups = deviceGroups(*mesh, collectiveAxes(op));
  }
  const bool trivial = call.groups.empty() || call.groups.front().size() < 2;
  if (trivial)
    call.kind = CollectiveKind::None;
  return call;
}

std::optional<int64_t> constantTripCount(Operation &op) {
  if (op.numRegions() < 2)
    return std::nullopt;
  Operation *cond_ret = terminator(op.region(0));
  Operation *cmp = cond_ret && cond_ret->numOperands() == 1
                       ? cond_ret->operand(0)->defining_op
                       : nullptr;
  const std::optional<std::string_view> dir =
      cmp && cmp->is("stablehlo.compare")
          ? stablehloEnum(cmp->attrs.get("comparison_direction"),
                          "comparison_direction")
          : std::nullopt;
  if (dir != "LT" || !cmp->operand(0)->isBlockArgument())
    return std::nullopt;
  const size_t index = cmp->operand(0)->index;
  const std::optional<double> limit = constantValue(cmp->operand(1));
  const std::optional<double> init = index < op.numOperands()
                                         ? constantValue(op.operand(index))
                                         : std::nullopt;
  Operation *body_ret = terminator(op.region(1));
  Operation *add = body_ret && index < body_ret->numOperands()
                       ? body_ret->operand(index)->defining_op
                       : nullptr;
  if (!limit || !init || !add || !add->is("stablehlo.add"))
    return std::nullopt;
  const bool lhs_arg =
      add->operand(0)->isBlockArgument() && add->operand(0)->index == index;
  const std::optional<double> step =
      constantValue(add->operand(lhs_arg ? 1 : 0));
  if (!step || *step <= 0)
    return std::nullopt;
  return int64_t(std::ceil((*limit - *init) / *step));
}

} // namespace shardlab::schedule::detail
