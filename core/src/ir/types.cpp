#include "shardlab/ir/types.h"

#include <cstdlib>

namespace shardlab {

bool TypeStorage::hasStaticShape() const {
  if (kind != TypeKind::RankedTensor)
    return false;
  for (int64_t dim : shape)
    if (dim == kDynamic)
      return false;
  return true;
}

int64_t TypeStorage::numElements() const {
  if (!hasStaticShape())
    return -1;
  int64_t count = 1;
  for (int64_t dim : shape)
    if (__builtin_mul_overflow(count, dim, &count))
      return -1; // the parser rejects such types; a pass may not
  return count;
}

namespace {

// Width of the digits after a prefix such as "i" in "i32"; 0 if not digits.
int64_t trailingWidth(std::string_view text, size_t prefix) {
  if (text.size() <= prefix)
    return 0;
  int64_t width = 0;
  for (size_t i = prefix; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9')
      return 0;
    width = width * 10 + (text[i] - '0');
    if (width > (int64_t{1} << 24)) // MLIR's widest integer type
      return 0;
  }
  return width;
}

int64_t floatWidth(std::string_view text) {
  if (text == "bf16" || text == "f16")
    return 16;
  if (text == "tf32")
    return 19;
  // f8E4M3FN, f6E2M3FN, f4E2M1FN (not f64: its "f6" is the width's start).
  if (text.rfind("f8E", 0) == 0)
    return 8;
  if (text.rfind("f6E", 0) == 0)
    return 6;
  if (text.rfind("f4E", 0) == 0)
    return 4;
  return trailingWidth(text, 1);
}

} // namespace

bool TypeStorage::isIntegerElement() const {
  if (kind != TypeKind::Element)
    return false;
  std::string_view t = text;
  return t == "index" || (t.size() > 1 && t[0] == 'i' && trailingWidth(t, 1)) ||
         (t.size() > 2 && t[0] == 's' && t[1] == 'i' && trailingWidth(t, 2)) ||
         (t.size() > 2 && t[0] == 'u' && t[1] == 'i' && trailingWidth(t, 2));
}

bool TypeStorage::isFloatElement() const {
  if (kind != TypeKind::Element)
    return false;
  std::string_view t = text;
  return (t.size() > 1 && t[0] == 'f' && floatWidth(t) > 0) || t == "bf16" ||
         t == "tf32";
}

int64_t TypeStorage::elementBitWidth() const {
  const TypeStorage *elem = isTensor() ? element : this;
  if (!elem || elem->kind != TypeKind::Element)
    return 0;
  std::string_view t = elem->text;
  if (t == "index")
    return 64;
  if (t.rfind("complex<", 0) == 0 && t.back() == '>')
    return 2 * floatWidth(t.substr(8, t.size() - 9));
  if (t.rfind("ui", 0) == 0 || t.rfind("si", 0) == 0)
    return trailingWidth(t, 2);
  if (t[0] == 'i')
    return trailingWidth(t, 1);
  if (elem->isFloatElement())
    return floatWidth(t);
  // !quant.uniform<i8:f32, ...>: the storage type comes first.
  size_t lt = t.find('<');
  if (t.rfind("!quant.", 0) == 0 && lt != std::string_view::npos) {
    size_t colon = t.find(':', lt);
    std::string_view storage = t.substr(lt + 1, colon - lt - 1);
    if (!storage.empty() && storage[0] == 'i')
      return trailingWidth(storage, 1);
    if (storage.rfind("ui", 0) == 0)
      return trailingWidth(storage, 2);
  }
  return 0;
}

void appendShape(std::string &out, const std::vector<int64_t> &shape) {
  for (int64_t dim : shape) {
    if (dim == kDynamic)
      out += '?';
    else
      out += std::to_string(dim);
    out += 'x';
  }
}

Type TypeContext::find(std::string_view text) const {
  for (const TypeContext *at = this; at; at = at->parent_)
    if (auto it = at->types_.find(text); it != at->types_.end())
      return it->second.get();
  return nullptr;
}

Type TypeContext::intern(TypeStorage &&storage) {
  if (Type known = find(storage.text))
    return known;
  auto owned = std::make_unique<TypeStorage>(std::move(storage));
  Type result = owned.get();
  types_.emplace(result->text, std::move(owned));
  return result;
}

TypeContext::TypeContext() {
  // In the body: element() reads both while they are made.
  i64_ = element("i64");
  i1_ = element("i1");
}

TypeContext::TypeContext(const TypeContext *parent)
    : parent_(parent), i64_(parent->i64_), i1_(parent->i1_) {}

Type TypeContext::lookupElement(std::string_view text) {
  if (Type known = find(text))
    return known;
  TypeStorage storage;
  storage.kind = TypeKind::Element;
  storage.text = std::string(text);
  return intern(std::move(storage));
}

Type TypeContext::rankedTensor(const std::vector<int64_t> &shape, Type elem,
                               std::string_view encoding) {
  TypeStorage storage;
  storage.kind = TypeKind::RankedTensor;
  storage.text = "tensor<";
  appendShape(storage.text, shape);
  storage.text += elem->text;
  if (!encoding.empty()) {
    storage.text += ", ";
    storage.text += encoding;
  }
  storage.text += '>';
  storage.shape = shape;
  storage.element = elem;
  storage.encoding = std::string(encoding);
  return intern(std::move(storage));
}

Type TypeContext::unrankedTensor(Type elem) {
  TypeStorage storage;
  storage.kind = TypeKind::UnrankedTensor;
  storage.text = "tensor<*x" + elem->text + ">";
  storage.element = elem;
  return intern(std::move(storage));
}

Type TypeContext::token(std::string_view text) {
  TypeStorage storage;
  storage.kind = TypeKind::Token;
  storage.text = std::string(text);
  return intern(std::move(storage));
}

Type TypeContext::tuple(const std::vector<Type> &members) {
  TypeStorage storage;
  storage.kind = TypeKind::Tuple;
  storage.text = "tuple<";
  for (size_t i = 0; i < members.size(); ++i) {
    if (i)
      storage.text += ", ";
    storage.text += members[i]->text;
  }
  storage.text += '>';
  storage.members = members;
  return intern(std::move(storage));
}

Type TypeContext::function(const std::vector<Type> &inputs,
                           const std::vector<Type> &results) {
  TypeStorage storage;
  storage.kind = TypeKind::Function;
  storage.text = "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i)
      storage.text += ", ";
    storage.text += inputs[i]->text;
  }
  storage.text += ") -> ";
  bool parens = results.size() != 1 || results[0]->kind == TypeKind::Function;
  if (parens)
    storage.text += '(';
  for (size_t i = 0; i < results.size(); ++i) {
    if (i)
      storage.text += ", ";
    storage.text += results[i]->text;
  }
  if (parens)
    storage.text += ')';
  storage.members = inputs;
  storage.results = results;
  return intern(std::move(storage));
}

Type TypeContext::opaque(std::string_view text) {
  TypeStorage storage;
  storage.kind = TypeKind::Opaque;
  storage.text = std::string(text);
  return intern(std::move(storage));
}

} // namespace shardlab
