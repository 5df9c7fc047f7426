// Following a value back to an entry argument (see argument_trace.h).
#include "passes/strategy/argument_trace.h"

#include "rules/rules_internal.h"
#include "rules/stablehlo_attrs.h"

namespace shardlab {
namespace {

using rules::shapeOf;

std::vector<int64_t> identityDims(const Value *value) {
  std::vector<int64_t> dims(shapeOf(value).size());
  for (size_t d = 0; d < dims.size(); ++d)
    dims[d] = int64_t(d);
  return dims;
}

// Maps each traced dim (a dim of the op's result) to the operand's dim it
// comes from, through `source` (result dim -> operand dim).
void remap(std::vector<int64_t> &dims, const std::vector<int64_t> &source) {
  for (int64_t &d : dims)
    d = d >= 0 && d < int64_t(source.size()) ? source[size_t(d)] : -1;
}

Value *throughOp(Operation &op, Value &value, std::vector<int64_t> &dims) {
  if (op.numOperands() == 0)
    return nullptr;
  std::string_view name = op.name;
  if (name == "stablehlo.convert" || name == "stablehlo.copy" ||
      name == "stablehlo.bitcast_convert" ||
      name == "sdy.sharding_constraint" || name == "sdy.reshard" ||
      name == "stablehlo.dynamic_slice" || name == "stablehlo.slice")
    return op.operand(0);
  if (name == "stablehlo.optimization_barrier" || name == "stablehlo.while" ||
      name == "sdy.named_computation")
    return value.index < op.numOperands() ? op.operand(value.index) : nullptr;
  if (name == "stablehlo.transpose") {
    // Result dim r is operand dim permutation[r].
    auto perm = rules::intsAttr(op, "permutation");
    if (!perm)
      return nullptr;
    remap(dims, *perm);
    return op.operand(0);
  }
  if (name == "stablehlo.broadcast_in_dim") {
    // Operand dim i is result dim broadcast_dimensions[i].
    auto bd = rules::intsAttr(op, "broadcast_dimensions");
    if (!bd)
      return nullptr;
    std::vector<int64_t> source(shapeOf(&value).size(), -1);
    for (size_t i = 0; i < bd->size(); ++i)
      if ((*bd)[i] >= 0 && (*bd)[i] < int64_t(source.size()))
        source[size_t((*bd)[i])] = int64_t(i);
    remap(dims, source);
    return op.operand(0);
  }
  if (name == "stablehlo.reshape") {
    remap(dims, reshapeSources(op.operand(0), &value));
    return op.operand(0);
  }
  return nullptr;
}

} // namespace

std::vector<int64_t> reshapeSources(const Value *operand, const Value *result) {
  const std::vector<int64_t> &from = shapeOf(operand);
  const std::vector<int64_t> &to = shapeOf(result);
  std::vector<int64_t> source(to.size(), -1);
  size_t i = from.size(), j = to.size();
  while (i > 0 && j > 0) {
    if (to[j - 1] == 1 && from[i - 1] != 1) {
      --j;
      continue;
    }
    if (from[i - 1] == 1 && to[j - 1] != 1) {
      --i;
      continue;
    }
    if (from[i - 1] != to[j - 1])
      break;
    source[j - 1] = int64_t(i - 1);
    --i;
    --j;
  }
  return source;
}

ArgumentTracer::ArgumentTracer(Module &module, Operation &entry)
    : entry_(entry) {
  walk(module.op(), [&](Operation &op) {
    if (op.is("func.call"))
      if (const Attr *callee = op.attrs.get("callee"))
        calls_.emplace(callee->str(), &op);
  });
}

ArgumentTrace ArgumentTracer::trace(Value *value) const {
  ArgumentTrace t{-1, identityDims(value)};
  for (int step = 0; value && step < kMaxTraceSteps; ++step) {
    if (value->isBlockArgument()) {
      value = throughBlockArgument(*value, t);
      if (t.arg >= 0)
        return t;
      continue;
    }
    value = throughOp(*value->defining_op, *value, t.dims);
  }
  return {};
}

Value *ArgumentTracer::throughBlockArgument(Value &value,
                                            ArgumentTrace &t) const {
  Operation *owner = value.owner_block && value.owner_block->parent
                         ? value.owner_block->parent->parent
                         : nullptr;
  if (!owner)
    return nullptr;
  if (owner == &entry_) {
    t.arg = value.index;
    return nullptr;
  }
  if ((owner->is("stablehlo.while") || owner->is("sdy.named_computation")) &&
      value.index < owner->numOperands())
    return owner->operand(value.index);
  if (owner->is("func.func"))
    if (const Attr *name = owner->attrs.get("sym_name"))
      if (auto call = calls_.find(name->str());
          call != calls_.end() && value.index < call->second->numOperands())
        return call->second->operand(value.index);
  return nullptr;
}

} // namespace shardlab
