#include "shardlab/ir/attributes.h"
#include "shardlab/support/string_hash.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace shardlab {

int64_t Attr::intValue() const {
  if (const auto *value = std::get_if<int64_t>(&payload))
    return *value;
  if (const auto *value = std::get_if<bool>(&payload))
    return *value ? 1 : 0;
  return 0;
}

double Attr::floatValue() const {
  const auto *value = std::get_if<FloatBits>(&payload);
  const FloatFormat *format = value && type ? floatFormat(type->text) : nullptr;
  return format ? decodeFloat(value->bits, *format) : 0.0;
}

DenseReader Attr::denseReader() const {
  static const DenseElements kNone; // read through a reader that is invalid
  const auto *dense = std::get_if<DenseElements>(&payload);
  if (kind == AttrKind::DenseElements && dense)
    return DenseReader(*dense, type);
  return DenseReader(kNone, nullptr);
}

namespace {

// Attribute kinds make() uniques by value (the others have their own
// constructors that do, or are not uniqued).
bool uniquedByMake(AttrKind kind) {
  switch (kind) {
  case AttrKind::String:
  case AttrKind::SymbolRef:
  case AttrKind::TypeAttr:
  case AttrKind::Array:
  case AttrKind::Dict:
  case AttrKind::Opaque:
  case AttrKind::Float:
    return true;
  default:
    return false;
  }
}

} // namespace

const Attr *AttrArena::unit() {
  if (!unit_)
    unit_ = findUp([](const AttrArena &at) { return at.unit_; });
  if (!unit_)
    unit_ = append(Attr{AttrKind::Unit, {}, nullptr, {}});
  return unit_;
}

const Attr *AttrArena::boolean(bool value) {
  const Attr *&cached = bools_[value ? 1 : 0];
  if (!cached)
    cached =
        findUp([&](const AttrArena &at) { return at.bools_[value ? 1 : 0]; });
  if (!cached)
    cached = append(Attr{AttrKind::Bool, value, nullptr, {}});
  return cached;
}

const Attr *AttrArena::integer(int64_t value, Type type) {
  const Attr *&cached = integers_[IntKey{value, type}];
  if (!cached)
    cached = findUp([&](const AttrArena &at) -> const Attr * {
      auto it = at.integers_.find(IntKey{value, type});
      return it == at.integers_.end() ? nullptr : it->second;
    });
  if (!cached)
    cached = append(Attr{AttrKind::Integer, value, type, {}});
  return cached;
}

const Attr *AttrArena::string(std::string value) {
  return make(Attr{AttrKind::String, std::move(value), nullptr, {}});
}

const Attr *AttrArena::symbol(std::string name) {
  return make(Attr{AttrKind::SymbolRef, std::move(name), nullptr, {}});
}

const Attr *AttrArena::array(std::vector<const Attr *> elements) {
  return make(Attr{AttrKind::Array, std::move(elements), nullptr, {}});
}

namespace {

size_t mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

size_t hashAxes(size_t h, const std::vector<AxisRef> &axes) {
  h = mix(h, axes.size());
  for (const AxisRef &axis : axes) {
    h = mix(h, std::hash<AxisName>()(axis.name));
    if (axis.sub)
      h = mix(mix(h, static_cast<size_t>(axis.sub->pre_size)),
              static_cast<size_t>(axis.sub->size));
  }
  return h;
}

size_t hashInts(size_t h, std::span<const int64_t> ints) {
  h = mix(h, ints.size());
  for (int64_t v : ints)
    h = mix(h, static_cast<size_t>(v));
  return h;
}

// An element loop, not std::equal: that becomes a memcmp call, and these
// arrays hold a few dimensions (a call per interned dense array in WASM).
bool sameInts(const std::vector<int64_t> &a, std::span<const int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return false;
  return true;
}

size_t hashSharding(size_t h, const TensorSharding &s) {
  h = mix(h, hashString(s.mesh.symbol));
  if (s.mesh.inline_mesh)
    for (const MeshAxis &axis : s.mesh.inline_mesh->axes)
      h = mix(h, std::hash<AxisName>()(axis.name));
  h = mix(h, s.dims.size());
  for (const DimSharding &dim : s.dims) {
    h = mix(h, (dim.closed ? 1u : 2u) +
                   (static_cast<size_t>(dim.priority.value_or(-1)) << 2));
    h = hashAxes(h, dim.axes);
  }
  h = hashAxes(h, s.replicated);
  h = hashAxes(h, s.unreduced);
  return mix(h, static_cast<size_t>(s.unreduced_kind));
}

size_t hashRule(const OpShardingRule &rule) {
  size_t h = rule.is_custom ? 7 : 3;
  for (const auto *side : {&rule.operands, &rule.results}) {
    h = mix(h, side->size());
    for (const OpShardingRule::TensorMapping &tensor : *side) {
      h = mix(h, tensor.size());
      for (const OpShardingRule::DimMapping &dim : tensor)
        h = hashInts(h, dim);
    }
  }
  for (const auto *ints :
       {&rule.factor_sizes, &rule.reduction, &rule.need_replication,
        &rule.permutation, &rule.blocked_propagation})
    h = hashInts(h, *ints);
  return h;
}

size_t hashMade(const Attr &attr) {
  size_t h = mix(
      mix(static_cast<size_t>(attr.kind), std::hash<const void *>()(attr.type)),
      hashString(attr.text));
  switch (attr.kind) {
  case AttrKind::String:
  case AttrKind::SymbolRef:
    return mix(h, hashString(attr.str()));
  case AttrKind::TypeAttr:
    return mix(h, std::hash<const void *>()(std::get<Type>(attr.payload)));
  case AttrKind::Array:
    for (const Attr *element : attr.elements())
      h = mix(h, std::hash<const void *>()(element));
    return h;
  case AttrKind::Dict:
    for (const NamedAttr &entry : attr.entries())
      h = mix(mix(h, hashString(entry.name)),
              std::hash<const void *>()(entry.value));
    return h;
  case AttrKind::Float:
    return mix(h,
               std::hash<uint64_t>()(std::get<FloatBits>(attr.payload).bits));
  default:
    return h;
  }
}

bool sameEntries(const std::vector<NamedAttr> &a,
                 const std::vector<NamedAttr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].value != b[i].value || !equalStrings(a[i].name, b[i].name))
      return false;
  return true;
}

bool samePayload(const Attr &a, const Attr &b) {
  // equalStrings, not ==: memcmp is a byte loop in the WASM build's libc.
  if (a.kind != b.kind || a.type != b.type || !equalStrings(a.text, b.text))
    return false;
  switch (a.kind) {
  case AttrKind::String:
  case AttrKind::SymbolRef:
    return equalStrings(a.str(), b.str());
  case AttrKind::TypeAttr:
    return std::get<Type>(a.payload) == std::get<Type>(b.payload);
  case AttrKind::Array:
    return a.elements() == b.elements();
  case AttrKind::Dict:
    return sameEntries(a.entries(), b.entries());
  case AttrKind::Float: // bit for bit: -0.0 and 0.0 differ, a NaN is itself
    return std::get<FloatBits>(a.payload) == std::get<FloatBits>(b.payload);
  case AttrKind::Opaque:
    return true; // the text is the payload
  case AttrKind::Sharding:
    return a.sharding() == b.sharding();
  case AttrKind::ShardingPerValue:
    return a.shardings() == b.shardings();
  case AttrKind::OpShardingRule:
    return a.rule() == b.rule();
  default:
    return false;
  }
}

} // namespace

const Attr *AttrArena::make(Attr &&attr) {
  if (!uniquedByMake(attr.kind))
    return append(std::move(attr));
  return internStructural(hashMade(attr), std::move(attr));
}

const Attr *AttrArena::internStructural(size_t hash, Attr &&attr) {
  if (const Attr *old = findUp([&](const AttrArena &at) {
        return at.structural_.find(
            hash, [&](const Attr *known) { return samePayload(*known, attr); });
      }))
    return old;
  const Attr *made = append(std::move(attr));
  structural_.insert(hash, made);
  return made;
}

// Inline in internDenseArray, its caller per dimension list parsed.
inline __attribute__((always_inline)) const Attr *
AttrArena::findDenseArray(size_t hash, Type element,
                          std::span<const int64_t> values) const {
  return findUp([&](const AttrArena &at) {
    return at.structural_.find(hash, [&](const Attr *known) {
      return known->kind == AttrKind::DenseArray && known->type == element &&
             sameInts(known->ints(), values);
    });
  });
}

const Attr *AttrArena::denseArray(Type element,
                                  std::span<const int64_t> values) {
  return internDenseArray(element, values, nullptr);
}

const Attr *AttrArena::denseArray(Type element, std::vector<int64_t> &&values) {
  return internDenseArray(element, values, &values);
}

const Attr *AttrArena::internDenseArray(Type element,
                                        std::span<const int64_t> values,
                                        std::vector<int64_t> *owned) {
  size_t hash = hashInts(mix(4, std::hash<const void *>()(element)), values);
  if (const Attr *old = findDenseArray(hash, element, values))
    return old;
  std::vector<int64_t> payload =
      owned ? std::move(*owned)
            : std::vector<int64_t>(values.begin(), values.end());
  const Attr *made =
      append(Attr{AttrKind::DenseArray, std::move(payload), element, {}});
  structural_.insert(hash, made);
  return made;
}

const Attr *AttrArena::sharding(TensorSharding &&sharding) {
  any_unreduced_ = any_unreduced_ || !sharding.unreduced.empty();
  size_t hash = hashSharding(1, sharding);
  return internStructural(
      hash, Attr{AttrKind::Sharding, std::move(sharding), nullptr, {}});
}

const Attr *AttrArena::findOrMake(AttrKind kind, size_t hash,
                                  const TensorSharding &sharding) {
  auto same = [&](const Attr *known) {
    if (known->kind != kind || known->type || !known->text.empty())
      return false;
    if (kind == AttrKind::Sharding)
      return known->sharding() == sharding;
    return known->shardings().size() == 1 && known->shardings()[0] == sharding;
  };
  if (const Attr *old = findUp(
          [&](const AttrArena &at) { return at.structural_.find(hash, same); }))
    return old;
  any_unreduced_ = any_unreduced_ || !sharding.unreduced.empty();
  const Attr *made =
      kind == AttrKind::Sharding
          ? append(Attr{kind, sharding, nullptr, {}})
          : append(
                Attr{kind, std::vector<TensorSharding>{sharding}, nullptr, {}});
  structural_.insert(hash, made);
  return made;
}

const Attr *AttrArena::sharding(const TensorSharding &sharding) {
  return findOrMake(AttrKind::Sharding, hashSharding(1, sharding), sharding);
}

const Attr *AttrArena::shardingPerValueOf(const TensorSharding &sharding) {
  return findOrMake(AttrKind::ShardingPerValue,
                    hashSharding(mix(2, 1), sharding), sharding);
}

const Attr *AttrArena::shardingPerValue(std::vector<TensorSharding> values) {
  size_t hash = mix(2, values.size());
  for (const TensorSharding &s : values) {
    any_unreduced_ = any_unreduced_ || !s.unreduced.empty();
    hash = hashSharding(hash, s);
  }
  return internStructural(
      hash, Attr{AttrKind::ShardingPerValue, std::move(values), nullptr, {}});
}

const Attr *AttrArena::rule(OpShardingRule rule) {
  size_t hash = hashRule(rule);
  return internStructural(
      hash, Attr{AttrKind::OpShardingRule, std::move(rule), nullptr, {}});
}

Attr *AttrArena::location(std::string body) {
  attrs_.push_back(Attr{AttrKind::Location, {}, nullptr, std::move(body)});
  return &attrs_.back();
}

const Attr *AttrArena::opaque(std::string text) {
  Attr attr{AttrKind::Opaque, {}, nullptr, std::move(text)};
  return make(std::move(attr));
}

} // namespace shardlab
