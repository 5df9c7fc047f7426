// Attributes of the IR. An attribute is an immutable value owned by the
// module's arena; ops refer to it by pointer, so passes can share one
// sharding between many ops. Attributes the project does not model keep
// their source text (AttrKind::Opaque) and print back unchanged.
#pragma once

#include "shardlab/ir/dense_elements.h"
#include "shardlab/ir/types.h"
#include "shardlab/sharding/sharding.h"
#include "shardlab/support/hash_index.h"
#include "shardlab/support/string_hash.h"

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace shardlab {

struct Attr;

/// `name = value` in an attribute dictionary. Names are interned by the
/// Context, so the view stays valid as long as the context does.
struct NamedAttr {
  std::string_view name;
  const Attr *value = nullptr;
};

/// Whether an entry stored as `stored` is named `name`: the test of every
/// lookup by name (findNamed, AttrDict::set), on hot paths, so inline. A
/// literal name's length rejects most entries at once, and a name stored
/// from the same literal matches by address.
inline bool sameAttrName(std::string_view stored, std::string_view name) {
  return stored.size() == name.size() &&
         (stored.data() == name.data() || equalStrings(stored, name));
}

/// The value named `name` among `entries` (nullptr when absent): the lookup
/// of AttrDict::get and Attr::get.
inline const Attr *findNamed(std::span<const NamedAttr> entries,
                             std::string_view name) {
  for (const NamedAttr &entry : entries)
    if (sameAttrName(entry.name, name))
      return entry.value;
  return nullptr;
}

enum class AttrKind {
  Unit,             ///< `{foo}` in a dictionary
  Bool,             ///< true / false
  Integer,          ///< `3 : i64`
  Float,            ///< `1.000000e+00 : f32` (FloatBits)
  String,           ///< "text" (stored unescaped)
  TypeAttr,         ///< a type used as an attribute
  Array,            ///< [a, b]
  DenseArray,       ///< array<i64: 1, 2>
  Dict,             ///< {a = 1, b}
  SymbolRef,        ///< @foo or @foo::@bar (stored without the first '@')
  DenseElements,    ///< dense<...> : tensor<...>
  Sharding,         ///< #sdy.sharding<...>
  ShardingPerValue, ///< #sdy.sharding_per_value<[...]>
  Mesh,             ///< #sdy.mesh<...> / mesh<...>
  OpShardingRule,   ///< #sdy.op_sharding_rule<...>
  ManualAxes,       ///< #sdy<manual_axes{"a", "b"}>
  AxisRefList,      ///< {"a", "b":(1)2}: axes of an sdy collective
  AxisRefListList,  ///< [{"a"}, {}]: per-dim axes of an sdy collective
  AllToAllParams,   ///< [{"a"}: 0->1]: sdy.all_to_all's params
  Location,         ///< loc(...): `text` is the body, aliases resolved
  Opaque,           ///< anything else, printed from `text`
};

/// The bits of a float attribute's value in its own type (`type`): a value
/// survives as written, NaN payloads and -0 included.
struct FloatBits {
  uint64_t bits = 0;
  bool operator==(const FloatBits &other) const { return bits == other.bits; }
};

using AttrPayload =
    std::variant<std::monostate, bool, int64_t, FloatBits, std::string, Type,
                 std::vector<const Attr *>, std::vector<NamedAttr>,
                 std::vector<int64_t>, DenseElements, TensorSharding,
                 std::vector<TensorSharding>, Mesh, OpShardingRule,
                 std::vector<std::string>, std::vector<AxisRef>,
                 std::vector<std::vector<AxisRef>>, std::vector<AllToAllParam>>;

/// An attribute value. `type` is the attribute's type where MLIR prints one
/// (`: i64`, `: tensor<4xf32>`, the element type of a dense array).
struct Attr {
  AttrKind kind = AttrKind::Unit;
  AttrPayload payload;
  Type type = nullptr;
  std::string text; ///< opaque text; the spelling of an integer over 64 bits

  int64_t intValue() const;
  /// A Float attribute's value as a double (exact: no float type is wider).
  double floatValue() const;
  /// A DenseElements attribute's reader (DenseReader::valid() is false for
  /// other kinds and for literals kept as text).
  DenseReader denseReader() const;
  const std::string &str() const { return std::get<std::string>(payload); }
  const std::vector<const Attr *> &elements() const {
    return std::get<std::vector<const Attr *>>(payload);
  }
  const std::vector<NamedAttr> &entries() const {
    return std::get<std::vector<NamedAttr>>(payload);
  }
  const std::vector<int64_t> &ints() const {
    return std::get<std::vector<int64_t>>(payload);
  }
  const TensorSharding &sharding() const {
    return std::get<TensorSharding>(payload);
  }
  const std::vector<TensorSharding> &shardings() const {
    return std::get<std::vector<TensorSharding>>(payload);
  }
  const Mesh &mesh() const { return std::get<Mesh>(payload); }
  const OpShardingRule &rule() const {
    return std::get<OpShardingRule>(payload);
  }
  /// Looks up a dictionary entry; nullptr when absent (findNamed).
  const Attr *get(std::string_view name) const {
    const auto *dict = std::get_if<std::vector<NamedAttr>>(&payload);
    return dict ? findNamed(*dict, name) : nullptr;
  }
};

/// Owns the attributes of one context. Attributes never move and never
/// change. Most kinds are uniqued, as MLIR's attributes are: strings,
/// symbols, types, floats, arrays, dictionaries and opaque attributes
/// (make), integers, booleans, dense arrays, shardings, per-value shardings
/// and rules (their own constructors). Equal attributes of those kinds are
/// one, so memo keys may name them by address: a module of repeated layers
/// holds each `dot_dimension_numbers` once. Not uniqued: locations (the
/// parser fills in their body after making them), dense literals (large,
/// rarely repeated), and the sdy collective payloads.
class AttrArena {
public:
  AttrArena() = default;
  /// Layered over `parent`, which must outlive it and no longer change: an
  /// attribute the parent has is the parent's (see Context).
  explicit AttrArena(const AttrArena *parent)
      : parent_(parent), any_unreduced_(parent->any_unreduced_) {}
  /// The attribute equal to `attr`, made if new.
  const Attr *make(Attr &&attr);
  const Attr *unit();
  const Attr *boolean(bool value);
  /// Integers are uniqued: large literal arrays share one attribute per
  /// distinct value instead of one per element.
  const Attr *integer(int64_t value, Type type);
  const Attr *string(std::string value);
  const Attr *symbol(std::string name);
  const Attr *array(std::vector<const Attr *> elements);
  /// Dense arrays are uniqued (as MLIR does): `dimensions = [1]` on ten
  /// thousand ops is one attribute.
  const Attr *denseArray(Type element, std::span<const int64_t> values);
  const Attr *denseArray(Type element, std::vector<int64_t> &&values);
  const Attr *sharding(TensorSharding &&sharding);
  /// The same, copying `sharding` only when no equal attribute exists yet
  /// (propagation writes mostly shardings it has written before).
  const Attr *sharding(const TensorSharding &sharding);
  /// shardingPerValue({sharding}), copying only when new.
  const Attr *shardingPerValueOf(const TensorSharding &sharding);
  const Attr *shardingPerValue(std::vector<TensorSharding> shardings);
  const Attr *rule(OpShardingRule rule);
  const Attr *opaque(std::string text);
  /// A location whose body (`"f.py":3:4`, `unknown`, ...) may still name
  /// aliases defined later in the text; the parser fills in the final body
  /// once it has read them (set `text` through the returned pointer).
  Attr *location(std::string body);
  size_t size() const { return attrs_.size(); }
  /// False until a sharding (or per-value list) with unreduced axes has been
  /// made here: until then no value of the context has unreduced axes, and
  /// checks of them have nothing to look at.
  bool anyUnreduced() const { return any_unreduced_; }

private:
  struct IntKey {
    int64_t value;
    Type type;
    bool operator==(const IntKey &other) const {
      return value == other.value && type == other.type;
    }
  };
  struct IntKeyHash {
    size_t operator()(const IntKey &key) const {
      return std::hash<int64_t>()(key.value) * 31 +
             std::hash<const void *>()(key.type);
    }
  };
  /// Returns the interned attribute equal to `attr` (same kind, same
  /// sharding / per-value shardings / rule payload), creating it if new.
  const Attr *internStructural(size_t hash, Attr &&attr);
  const Attr *findDenseArray(size_t hash, Type element,
                             std::span<const int64_t> values) const;
  /// The uniqued dense array equal to `values`; a new one takes `*owned`
  /// when given (`values` views it), else copies `values`.
  const Attr *internDenseArray(Type element, std::span<const int64_t> values,
                               std::vector<int64_t> *owned);
  const Attr *findOrMake(AttrKind kind, size_t hash,
                         const TensorSharding &sharding);

  /// The first of this arena and its parents whose `find(arena)` is not
  /// null, or null.
  template <typename Find> const Attr *findUp(Find find) const {
    for (const AttrArena *at = this; at; at = at->parent_)
      if (const Attr *found = find(*at))
        return found;
    return nullptr;
  }

  /// Appends `attr` without looking for an equal one.
  const Attr *append(Attr &&attr) {
    attrs_.push_back(std::move(attr));
    return &attrs_.back();
  }

  const AttrArena *parent_ = nullptr;
  std::deque<Attr> attrs_;
  std::unordered_map<IntKey, const Attr *, IntKeyHash> integers_;
  /// Shardings, per-value shardings and sharding rules are uniqued by value,
  /// as MLIR uniques attributes: propagation writes a sharding for every
  /// update and most of them are equal to one already made.
  HashIndex<const Attr *> structural_;
  const Attr *unit_ = nullptr;
  bool any_unreduced_ = false;
  const Attr *bools_[2] = {nullptr, nullptr};
};

} // namespace shardlab
