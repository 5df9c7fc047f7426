#include "shardlab/ir/attributes.h"

namespace shardlab {

int64_t Attr::intValue() const {
  if (const auto *value = std::get_if<int64_t>(&payload))
    return *value;
  if (const auto *value = std::get_if<bool>(&payload))
    return *value ? 1 : 0;
  return 0;
}

const Attr *Attr::get(std::string_view name) const {
  const auto *dict = std::get_if<std::vector<NamedAttr>>(&payload);
  if (!dict)
    return nullptr;
  for (const NamedAttr &entry : *dict)
    if (entry.name == name)
      return entry.value;
  return nullptr;
}

const Attr *AttrArena::unit() {
  if (!unit_)
    unit_ = make(Attr{AttrKind::Unit, {}, nullptr, {}});
  return unit_;
}

const Attr *AttrArena::boolean(bool value) {
  const Attr *&cached = bools_[value ? 1 : 0];
  if (!cached)
    cached = make(Attr{AttrKind::Bool, value, nullptr, {}});
  return cached;
}

const Attr *AttrArena::integer(int64_t value, Type type) {
  const Attr *&cached = integers_[IntKey{value, type}];
  if (!cached)
    cached = make(Attr{AttrKind::Integer, value, type, {}});
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

const Attr *AttrArena::denseArray(Type element, std::vector<int64_t> values) {
  return make(Attr{AttrKind::DenseArray, std::move(values), element, {}});
}

const Attr *AttrArena::sharding(TensorSharding sharding) {
  return make(Attr{AttrKind::Sharding, std::move(sharding), nullptr, {}});
}

const Attr *AttrArena::shardingPerValue(std::vector<TensorSharding> values) {
  return make(Attr{AttrKind::ShardingPerValue, std::move(values), nullptr, {}});
}

const Attr *AttrArena::rule(OpShardingRule rule) {
  return make(Attr{AttrKind::OpShardingRule, std::move(rule), nullptr, {}});
}

const Attr *AttrArena::opaque(std::string text) {
  Attr attr{AttrKind::Opaque, {}, nullptr, std::move(text)};
  return make(std::move(attr));
}

} // namespace shardlab
