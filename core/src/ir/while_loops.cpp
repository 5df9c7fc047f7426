// Counted while loops (see while_loops.h).
#include "ir/while_loops.h"

#include "ir/op_properties.h"

#include <algorithm>
#include <cmath>

namespace shardlab {
namespace {

std::optional<double> constantValue(Value *value) {
  Operation *def = value ? value->defining_op : nullptr;
  const Attr *attr =
      def && (def->is("stablehlo.constant") || def->is("sdy.constant"))
          ? def->attrs.get("value")
          : nullptr;
  if (!attr)
    return std::nullopt;
  const DenseReader reader = attr->denseReader();
  if (!reader.valid() || reader.size() == 0)
    return std::nullopt;
  return reader.doubleAt(0);
}

Operation *terminator(Region &region) {
  return region.empty() ? nullptr : region.front().back();
}

} // namespace

std::optional<LoopCounter> loopCounter(Operation &op) {
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
  return LoopCounter{cmp, *limit, *init, *step};
}

std::optional<int64_t> constantTripCount(Operation &op) {
  const std::optional<LoopCounter> c = loopCounter(op);
  if (!c)
    return std::nullopt;
  // An initial value at or past the limit runs no trip (not a negative count).
  return std::max<int64_t>(0,
                           int64_t(std::ceil((c->limit - c->init) / c->step)));
}

} // namespace shardlab
