#include "shardlab/ir/sharding_access.h"

#include "sharding/sharding_utils.h"

#include <algorithm>

namespace shardlab {

namespace {

const TensorSharding *perValueEntry(const Attr *attr, size_t index) {
  if (!attr || attr->kind != AttrKind::ShardingPerValue ||
      index >= attr->shardings().size())
    return nullptr;
  return &attr->shardings()[index];
}

const TensorSharding *singleSharding(const Attr *attr) {
  return attr && attr->kind == AttrKind::Sharding ? &attr->sharding() : nullptr;
}

const TensorSharding *shardingInDictArray(const Attr *array, size_t index) {
  if (!array || array->kind != AttrKind::Array ||
      index >= array->elements().size())
    return nullptr;
  const Attr *dict = array->elements()[index];
  if (!dict || dict->kind != AttrKind::Dict)
    return nullptr;
  return singleSharding(dict->get("sdy.sharding"));
}

Operation *blockArgOwner(const Value &value) {
  Region *region = value.owner_block ? value.owner_block->parent : nullptr;
  return region ? region->parent : nullptr;
}

const TensorSharding *blockArgSharding(const Value &value) {
  Operation *owner = blockArgOwner(value);
  if (!owner)
    return nullptr;
  if (owner->is("func.func"))
    return shardingInDictArray(owner->attrs.get("arg_attrs"), value.index);
  if (owner->is("sdy.manual_computation") || owner->is("sdy.named_computation"))
    return perValueEntry(owner->attrs.get("in_shardings"), value.index);
  // A while block argument is a target of the while's data-flow edge, whose
  // owner is the while result: Shardy's getSharding reads that.
  if (owner->is("stablehlo.while") && value.index < owner->numResults())
    return getSharding(owner->result(value.index));
  return nullptr;
}

// A per-value list for values of `types` with `sharding` at `index`;
// missing entries become fully open shardings of each value's rank on the
// same mesh, as Shardy's getOrCreateSharding does.
const Attr *withEntry(const Attr *old, const std::vector<Type> &types,
                      size_t index, const TensorSharding &sharding,
                      Context &ctx) {
  std::vector<TensorSharding> list;
  if (old && old->kind == AttrKind::ShardingPerValue)
    list = old->shardings();
  for (size_t i = list.size(); i < types.size(); ++i) {
    TensorSharding open{sharding.mesh, {}, {}, {}, {}};
    if (types[i] && types[i]->isRankedTensor())
      open.dims.assign(static_cast<size_t>(types[i]->rank()),
                       DimSharding{{}, false, std::nullopt});
    list.push_back(std::move(open));
  }
  if (list.size() <= index)
    list.resize(index + 1);
  list[index] = sharding;
  return ctx.attrs.shardingPerValue(std::move(list));
}

const Attr *dictArrayEntry(const Attr *array, size_t index,
                           std::string_view name) {
  if (!array || array->kind != AttrKind::Array ||
      index >= array->elements().size())
    return nullptr;
  const Attr *dict = array->elements()[index];
  return dict && dict->kind == AttrKind::Dict ? dict->get(name) : nullptr;
}

// A copy of a dict-array attribute (arg_attrs / res_attrs) of `count`
// dictionaries with entry `name` of dictionary `index` set to `value`.
const Attr *withDictEntry(const Attr *old, size_t count, size_t index,
                          std::string_view name, const Attr *value,
                          Context &ctx) {
  // Already so: the same array. Attributes are interned, so rebuilding it
  // would cost a copy of every function argument's dictionary, kept for
  // the context's life (quadratic for a pass over a large signature).
  if (old && dictArrayEntry(old, index, name) == value &&
      old->elements().size() >= count)
    return old;
  std::vector<const Attr *> dicts;
  if (old && old->kind == AttrKind::Array)
    dicts = old->elements();
  const Attr *empty = ctx.attrs.make(
      Attr{AttrKind::Dict, std::vector<NamedAttr>{}, nullptr, {}});
  dicts.resize(std::max({count, dicts.size(), index + 1}), empty);
  AttrDict dict;
  if (dicts[index] && dicts[index]->kind == AttrKind::Dict)
    for (const NamedAttr &entry : dicts[index]->entries())
      dict.set(entry.name, entry.value);
  dict.set(ctx.intern(name), value);
  dicts[index] =
      ctx.attrs.make(Attr{AttrKind::Dict, dict.toVector(), nullptr, {}});
  return ctx.attrs.array(std::move(dicts));
}

} // namespace

size_t funcNumInputs(const Operation &func) {
  const Attr *type = func.attrs.get("function_type");
  return type ? std::get<Type>(type->payload)->members.size() : 0;
}

size_t funcNumResults(const Operation &func) {
  const Attr *type = func.attrs.get("function_type");
  return type ? std::get<Type>(type->payload)->results.size() : 0;
}

const Attr *getFuncArgAttr(const Operation &func, size_t index,
                           std::string_view name) {
  return dictArrayEntry(func.attrs.get("arg_attrs"), index, name);
}

const Attr *getFuncResultAttr(const Operation &func, size_t index,
                              std::string_view name) {
  return dictArrayEntry(func.attrs.get("res_attrs"), index, name);
}

void setFuncArgAttr(Operation &func, size_t index, std::string_view name,
                    const Attr *value, Context &ctx) {
  func.attrs.set(ctx.intern("arg_attrs"),
                 withDictEntry(func.attrs.get("arg_attrs"), funcNumInputs(func),
                               index, name, value, ctx));
}

void setFuncResultAttr(Operation &func, size_t index, std::string_view name,
                       const Attr *value, Context &ctx) {
  func.attrs.set(ctx.intern("res_attrs"),
                 withDictEntry(func.attrs.get("res_attrs"),
                               funcNumResults(func), index, name, value, ctx));
}

const TensorSharding *getSharding(Value *value) {
  if (!value)
    return nullptr;
  if (value->isBlockArgument())
    return blockArgSharding(*value);
  Operation &op = *value->defining_op;
  if (op.dialect() == "sdy") {
    if (const TensorSharding *sharding =
            singleSharding(op.attrs.get("sharding")))
      return sharding;
    if (const TensorSharding *sharding =
            singleSharding(op.attrs.get("out_sharding")))
      return sharding;
    if (op.is("sdy.manual_computation") || op.is("sdy.named_computation"))
      return perValueEntry(op.attrs.get("out_shardings"), value->index);
  }
  return perValueEntry(op.attrs.get("sdy.sharding"), value->index);
}

void setSharding(Value *value, const TensorSharding &sharding, Context &ctx) {
  if (value->isBlockArgument()) {
    Operation *owner = blockArgOwner(*value);
    if (owner && owner->is("stablehlo.while") &&
        value->index < owner->numResults()) {
      setSharding(owner->result(value->index), sharding, ctx);
      return;
    }
    if (owner && owner->is("func.func"))
      setFuncArgAttr(*owner, value->index, "sdy.sharding",
                     ctx.attrs.sharding(sharding), ctx);
    else if (owner)
      owner->attrs.set(ctx.intern("in_shardings"),
                       withEntry(owner->attrs.get("in_shardings"),
                                 operandTypes(*owner), value->index, sharding,
                                 ctx));
    return;
  }
  Operation &op = *value->defining_op;
  // sdy ops that keep one sharding in a `sharding` attribute.
  bool single = op.is("sdy.data_flow_edge") || op.is("sdy.reshard") ||
                op.is("sdy.sharding_constraint") ||
                (op.dialect() == "sdy" && op.attrs.get("sharding"));
  if (single) {
    op.attrs.set("sharding", ctx.attrs.sharding(sharding));
  } else if (op.is("sdy.manual_computation") ||
             op.is("sdy.named_computation")) {
    op.attrs.set(ctx.intern("out_shardings"),
                 withEntry(op.attrs.get("out_shardings"), resultTypes(op),
                           value->index, sharding, ctx));
  } else {
    const Attr *old = op.attrs.get("sdy.sharding");
    // The common case, one result: the list is just the new sharding (no
    // type list, no copy of the old list).
    bool only = op.numResults() == 1 &&
                (!old || old->kind != AttrKind::ShardingPerValue ||
                 old->shardings().size() <= 1);
    op.attrs.set("sdy.sharding", only ? ctx.attrs.shardingPerValueOf(sharding)
                                      : withEntry(old, resultTypes(op),
                                                  value->index, sharding, ctx));
  }
}

const TensorSharding *getFuncResultSharding(const Operation &func,
                                            size_t index) {
  return shardingInDictArray(func.attrs.get("res_attrs"), index);
}

void setFuncResultSharding(Operation &func, size_t index,
                           const TensorSharding &sharding, Context &ctx) {
  setFuncResultAttr(func, index, "sdy.sharding", ctx.attrs.sharding(sharding),
                    ctx);
}

const Mesh *lookupMesh(const Module &module, std::string_view symbol) {
  Operation *op = module.lookupSymbol(symbol);
  if (!op || !op->is("sdy.mesh"))
    return nullptr;
  const Attr *mesh = op->attrs.get("mesh");
  return mesh && mesh->kind == AttrKind::Mesh ? &mesh->mesh() : nullptr;
}

const Mesh *lookupMesh(const Module &module, const MeshRef &ref) {
  return ref.inline_mesh ? &*ref.inline_mesh : lookupMesh(module, ref.symbol);
}

const Mesh *lookupMesh(const Module &module, const TensorSharding &sharding) {
  return lookupMesh(module, sharding.mesh);
}

const Mesh *MeshCache::get(const MeshRef &ref) {
  if (ref.inline_mesh)
    return &*ref.inline_mesh;
  for (const auto &[symbol, mesh] : symbols_)
    if (equalStrings(symbol, ref.symbol)) // not memcmp: see string_hash.h
      return mesh;
  const Mesh *mesh = lookupMesh(module_, ref);
  symbols_.emplace_back(ref.symbol, mesh);
  return mesh;
}

int64_t bytesPerDevice(const Module &module, Value *value) {
  Type type = value->type;
  int64_t bytes = type->isRankedTensor() && type->element
                      ? (type->element->elementBitWidth() + 7) / 8
                      : 0;
  const TensorSharding *sharding = getSharding(value);
  const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
  std::vector<int64_t> shape =
      mesh ? localShape(type->shape, *sharding, *mesh) : type->shape;
  for (int64_t dim : shape)
    bytes *= dim < 0 ? 0 : dim;
  return bytes;
}

} // namespace shardlab
