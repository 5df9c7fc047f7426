// -sdy-replicate-inputs-of-custom-reductions: a reduce over a sharded
// dimension leaves each device a partial result, and Shardy's export adds
// an sdy.all_reduce (a sum) to finish it. That is right when the reducer is
// one elementwise op (-sdy-convert-global-to-local combines the partials
// by it: a sum, a max, ...) and the init value is its identity; a reducer
// of several ops (argmax's comparator of value and index, a complex max by
// compare and select) has no all-reduce that combines its partials, and an
// init value of 3 for a sum would be counted once per device (a max's, of
// any value, counts once however often it is read). Such a reduce
// reads its reduced dimensions whole instead, and the all-reduce after it goes:
//
//   %r:2 = stablehlo.reduce(%v init: %a), (%i init: %b) across dims = [1]
//          (%v: <@m, [{}, {"x"}]>)
//   %s = sdy.all_reduce {"x"} %r#0
// becomes
//   %w = sdy.reshard %v <@m, [{}, {}]>
//   %r:2 = stablehlo.reduce(%w init: %a), (%i' init: %b) across dims = [1]
//   (%s is %r#0)
#include "export_passes.h"

#include "passes/pass_utils.h"
#include "rules/stablehlo_attrs.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>
#include <cmath>

namespace shardlab {
namespace {

bool contains(const std::vector<AxisRef> &axes, const AxisRef &axis) {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

// Reshards input `i` of `reduce` so that its `dims` are whole; the axes
// that sharded them are added to `freed`.
void replicateReducedDims(Operation &reduce, size_t i,
                          const std::vector<int64_t> &dims,
                          std::vector<AxisRef> &freed, Context &ctx) {
  Value *input = reduce.operand(i);
  const TensorSharding *sharding = getSharding(input);
  if (!sharding)
    return;
  TensorSharding whole = *sharding;
  bool changed = false;
  for (int64_t d : dims) {
    if (d < 0 || size_t(d) >= whole.dims.size() || whole.dims[d].axes.empty())
      continue;
    for (const AxisRef &axis : whole.dims[d].axes)
      if (!contains(freed, axis))
        freed.push_back(axis);
    whole.dims[d].axes.clear();
    changed = true;
  }
  if (!changed)
    return;
  reshardOperandBefore(reduce, i, whole, ctx);
}

// The all-reduces of the reduce's results over `freed` axes go: the
// results are whole now.
void dropFinishingAllReduces(Operation &reduce,
                             const std::vector<AxisRef> &freed, Context &ctx) {
  std::vector<Operation *> all_reduces;
  for (size_t r = 0; r < reduce.numResults(); ++r)
    for (OpOperand *use = reduce.result(r)->firstUse(); use;
         use = use->next_use)
      if (use->owner->is("sdy.all_reduce"))
        all_reduces.push_back(use->owner);
  for (Operation *op : all_reduces) {
    const Attr *attr = op->attrs.get("reduction_axes");
    if (!attr)
      continue;
    std::vector<AxisRef> left;
    for (const AxisRef &axis : std::get<std::vector<AxisRef>>(attr->payload))
      if (!contains(freed, axis))
        left.push_back(axis);
    if (!left.empty()) {
      op->attrs.set(ctx.intern("reduction_axes"),
                    ctx.attrs.make(Attr{
                        AttrKind::AxisRefList, std::move(left), nullptr, {}}));
      continue;
    }
    op->result(0)->replaceAllUsesWith(op->operand(0));
    eraseOp(*op);
  }
}

// Whether the init value of a one-input reduce is its reducer's identity
// (0 for a sum, 1 for a product, the lowest value for a max, ...): only
// then can every device start from it and one all-reduce finish.
bool initIsIdentity(Operation &reduce, std::string_view kind) {
  Operation *def = reduce.operand(1)->defining_op;
  const Attr *value =
      def && (def->is("stablehlo.constant") || def->is("sdy.constant"))
          ? def->attrs.get("value")
          : nullptr;
  if (!value)
    return false;
  const DenseReader reader = value->denseReader();
  if (!reader.valid() || reader.size() != 1)
    return false;
  const ElementLayout &layout = reader.layout();
  const double v = reader.doubleAt(0);
  const bool is_float = layout.kind == ElementLayout::Kind::Float;
  const unsigned bits = layout.part_bits;
  const double int_min = layout.is_unsigned || layout.is_bool
                             ? 0.0
                             : -std::ldexp(1.0, int(bits) - 1);
  const double int_max = layout.is_unsigned || layout.is_bool
                             ? std::ldexp(1.0, int(bits)) - 1
                             : std::ldexp(1.0, int(bits) - 1) - 1;
  if (kind == "sum" || kind == "or")
    return v == 0;
  if (kind == "product")
    return v == 1;
  if (kind == "max")
    return is_float ? std::isinf(v) && v < 0 : v == int_min;
  if (kind == "min")
    return is_float ? std::isinf(v) && v > 0 : v == int_max;
  if (kind == "and")
    return layout.is_bool ? v == 1 : reader.intAt(0) == -1 || v == int_max;
  return false;
}

// Whether combining a value with itself gives it back (max, min, and, or):
// then the init value, read once on every device, counts once whatever it
// is (max(-3e38, partials...) is the max over all of them and -3e38).
bool isIdempotent(std::string_view kind) {
  return kind == "max" || kind == "min" || kind == "and" || kind == "or";
}

// A reduce whose partial results one all-reduce cannot finish.
bool isCustomReduction(Operation &op) {
  if (!op.is("stablehlo.reduce"))
    return false;
  if (op.numOperands() != 2)
    return true;
  const std::string_view kind = combinerKind(op);
  return kind.empty() || (!isIdempotent(kind) && !initIsIdentity(op, kind));
}

} // namespace

bool replicateInputsOfCustomReductionsPass(Module &module, const PassOptions &,
                                           DiagnosticEngine &) {
  std::vector<Operation *> reduces;
  forEachFunc(module, [&](Operation &func) {
    walk(func, [&](Operation &op) {
      if (isCustomReduction(op))
        reduces.push_back(&op);
    });
  });
  bool changed = false;
  for (Operation *reduce : reduces) {
    const std::optional<std::vector<int64_t>> dims =
        rules::intsAttr(*reduce, "dimensions");
    if (!dims)
      continue;
    std::vector<AxisRef> freed;
    for (size_t i = 0; i < reduce->numOperands() / 2; ++i)
      replicateReducedDims(*reduce, i, *dims, freed, module.ctx());
    if (freed.empty())
      continue;
    dropFinishingAllReduces(*reduce, freed, module.ctx());
    changed = true;
  }
  return changed || markUnchanged(module);
}

} // namespace shardlab
