// Helpers shared by the verifier's topic files (see verify_context.h).
#include "verify_context.h"

#include "shardlab/ir/sharding_access.h"

#include <algorithm>
#include <cstring>

namespace shardlab::verify {

const Mesh *VerifyContext::lookupMesh(const MeshRef &ref) const {
  return shardlab::lookupMesh(module_, ref);
}

std::vector<const Mesh *>
VerifyContext::meshesOf(const std::vector<TensorSharding> &shardings) const {
  std::vector<const Mesh *> meshes;
  for (const TensorSharding &sharding : shardings)
    meshes.push_back(lookupMesh(sharding.mesh));
  return meshes;
}

bool VerifyContext::opError(const Operation &op, const std::string &message) {
  diags_.error(op.loc, opPrefix(op.name) + message);
  return false;
}

bool VerifyContext::plainError(const Operation &op,
                               const std::string &message) {
  diags_.error(op.loc, message);
  return false;
}

void VerifyContext::note(Location loc, const std::string &message) {
  diags_.note(loc, message);
}

bool VerifyContext::shardingError(const Operation &op,
                                  const std::string &message) {
  opError(op, message);
  noteManualAxisOwner(op, message);
  return false;
}

bool VerifyContext::funcValueError(const Operation &func, FuncValue kind,
                                   size_t index, const std::string &message) {
  const std::string what =
      (kind == FuncValue::Arg ? "arg " : "result ") + std::to_string(index);
  opError(func, what + " - " + message);
  // MLIR reports it at the func.func (the lit tests expect that line); the
  // range says which argument or result it is about, the related location
  // which function.
  const Attr *name = func.attrs.get("sym_name");
  auto ranges = name && name->kind == AttrKind::String
                    ? module_.signature_ranges.find(name->str())
                    : module_.signature_ranges.end();
  if (ranges != module_.signature_ranges.end()) {
    const std::vector<SourceRange> &list =
        kind == FuncValue::Arg ? ranges->second.args : ranges->second.results;
    if (index < list.size() && diags_.last()) {
      diags_.last()->range = list[index];
      diags_.last()->related.push_back(
          {func.loc, "in function @" + name->str()});
    }
  }
  noteManualAxisOwner(func, message);
  return false;
}

void VerifyContext::noteManualAxisOwner(const Operation &op,
                                        const std::string &message) {
  static constexpr std::string_view kBound = "operates on axis \"";
  size_t start = message.find(kBound);
  if (start == std::string::npos ||
      message.find("already bound by a parent") == std::string::npos)
    return;
  start += kBound.size();
  std::string axis = message.substr(start, message.find('"', start) - start);
  if (const Operation *owner = manualAxisOwner(op, axis))
    note(owner->loc, "parent bounding this axis as manual");
}

void VerifyContext::recordPassed() {
  if (!keyFits())
    return;
  if ((num_passed_ + 1) * 2 > slots_.size())
    grow();
  Slot &slot = slots_[findSlot()];
  if (slot.size)
    return;
  slot = {key_hash_, static_cast<uint32_t>(keys_.size()),
          static_cast<uint32_t>(key_size_)};
  keys_.insert(keys_.end(), key_.begin(), key_.begin() + key_size_);
  ++num_passed_;
}

// Doubles the table (at least 64 slots), placing every key again.
void VerifyContext::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(std::max<size_t>(64, old.size() * 2), Slot{});
  size_t mask = slots_.size() - 1;
  for (const Slot &slot : old) {
    if (!slot.size)
      continue;
    size_t i = slot.hash & mask;
    while (slots_[i].size)
      i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

ValueShapeInfo shapeInfo(Type type) {
  if (!type)
    return ValueShapeInfo::none();
  ValueShapeInfo info;
  switch (type->kind) {
  case TypeKind::RankedTensor:
    // Not ValueShapeInfo::ranked: that prints the type, which is known.
    info.dims = type->shape;
    info.element_type = type->element->text;
    break;
  case TypeKind::UnrankedTensor:
    info = ValueShapeInfo::unranked(type->element->text);
    break;
  case TypeKind::Tuple: {
    std::vector<ValueShapeInfo> members;
    for (Type member : type->members)
      members.push_back(shapeInfo(member));
    info = ValueShapeInfo::tuple(std::move(members));
    break;
  }
  default:
    info = ValueShapeInfo::nonShaped(type->text);
  }
  info.type_text = type->text;
  return info;
}

std::vector<ValueShapeInfo> shapeInfos(const std::vector<Type> &types) {
  std::vector<ValueShapeInfo> infos;
  for (Type type : types)
    infos.push_back(shapeInfo(type));
  return infos;
}

std::vector<std::string> manualAxesOf(const Operation &op) {
  const Attr *axes = op.attrs.get("manual_axes");
  if (!axes || axes->kind != AttrKind::ManualAxes)
    return {};
  return std::get<std::vector<std::string>>(axes->payload);
}

std::vector<std::string> enclosingManualAxes(const Operation &op) {
  std::vector<std::string> axes;
  for (Operation *parent = op.parentOp(); parent; parent = parent->parentOp())
    if (parent->is("sdy.manual_computation"))
      for (std::string &axis : manualAxesOf(*parent))
        axes.push_back(std::move(axis));
  return axes;
}

const Operation *manualAxisOwner(const Operation &op, const std::string &axis) {
  const Operation *owner = nullptr;
  for (Operation *parent = op.parentOp(); parent; parent = parent->parentOp()) {
    if (!parent->is("sdy.manual_computation"))
      continue;
    std::vector<std::string> axes = manualAxesOf(*parent);
    if (std::find(axes.begin(), axes.end(), axis) != axes.end())
      owner = parent;
  }
  return owner;
}

const TensorSharding *shardingOf(Value *value) { return getSharding(value); }

std::string opPrefix(std::string_view op_name) {
  return "'" + std::string(op_name) + "' op ";
}

} // namespace shardlab::verify
