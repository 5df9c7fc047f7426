// Flattening custom calls on tuples (tuple_flattening.h).
#include "tuple_flattening.h"
#include "xla_passes.h"

#include "passes/pass_utils.h"

namespace shardlab {

namespace {

// Leaves of a (nested) tuple type, depth first.
void leafTypes(Type type, std::vector<Type> &out) {
  if (type->kind != TypeKind::Tuple) {
    out.push_back(type);
    return;
  }
  for (Type member : type->members)
    leafTypes(member, out);
}

// The values a (nested) stablehlo.tuple was built from, depth first; the
// value itself when it is not built by one.
void leafValues(Value *value, std::vector<Value *> &out) {
  Operation *def = value->isBlockArgument() ? nullptr : value->defining_op;
  if (!def || !def->is("stablehlo.tuple")) {
    out.push_back(value);
    return;
  }
  for (size_t i = 0; i < def->numOperands(); ++i)
    leafValues(def->operand(i), out);
}

// Rewires every get_tuple_element chain reading `value` (whose leaves start
// at `first` among `leaves`) to the leaf it ends at; collects the chain's
// ops for erasing.
void rewireTupleReads(Value *value, Type type, size_t first,
                      const std::vector<Value *> &leaves,
                      std::vector<Operation *> &dead) {
  for (Operation *user : usersOf(value)) {
    const Attr *index = user->attrs.get("index");
    if (!user->is("stablehlo.get_tuple_element") || !index)
      continue;
    size_t offset = first;
    for (int64_t i = 0; i < index->intValue(); ++i) {
      std::vector<Type> skipped;
      leafTypes(type->members[size_t(i)], skipped);
      offset += skipped.size();
    }
    Type member = type->members[size_t(index->intValue())];
    if (member->kind == TypeKind::Tuple)
      rewireTupleReads(user->result(0), member, offset, leaves, dead);
    else
      user->result(0)->replaceAllUsesWith(leaves[offset]);
    dead.push_back(user);
  }
}

} // namespace

void flattenTupleCustomCall(Context &ctx, Operation &call) {
  std::vector<Value *> operands;
  for (size_t i = 0; i < call.numOperands(); ++i)
    leafValues(call.operand(i), operands);
  std::vector<Type> types;
  leafTypes(call.result(0)->type, types);
  auto flat = makeOp(ctx, call.name, operands, types, call.loc);
  for (const NamedAttr &entry : call.attrs.entries())
    flat->attrs.set(entry.name, entry.value);
  Operation *inserted =
      call.parentBlock()->insertBefore(&call, std::move(flat));
  std::vector<Value *> leaves;
  for (size_t i = 0; i < inserted->numResults(); ++i)
    leaves.push_back(inserted->result(i));
  std::vector<Operation *> dead;
  rewireTupleReads(call.result(0), call.result(0)->type, 0, leaves, dead);
  // Inner reads come before the read of their tuple: erase in order.
  for (Operation *read : dead)
    if (!read->result(0)->firstUse())
      eraseOp(*read);
  if (call.result(0)->firstUse())
    return;
  std::vector<Operation *> tuples;
  for (size_t i = 0; i < call.numOperands(); ++i)
    if (!call.operand(i)->isBlockArgument() &&
        call.operand(i)->defining_op->is("stablehlo.tuple"))
      tuples.push_back(call.operand(i)->defining_op);
  eraseOp(call);
  for (Operation *tuple : tuples)
    if (!tuple->result(0)->firstUse())
      eraseOp(*tuple);
}

} // namespace shardlab
