// Shared state and helpers of the IR verifier (private to core/src/verify):
// mesh lookup, the shape of a value's type as the sharding library sees it,
// the manual axes bound by enclosing sdy.manual_computation ops, and the
// emission of op errors with MLIR's "'<op>' op " prefix.
#pragma once

#include "sharding/verify.h"
#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "shardlab/sharding/mesh.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::verify {

/// What one verifier run needs: the module (for symbols) and the sink.
class VerifyContext {
public:
  VerifyContext(Module &module, DiagnosticEngine &diags)
      : module_(module), diags_(diags),
        may_have_manual_axes_(
            module.ctx().ops.liveNamed("sdy.manual_computation") != 0) {}

  Module &module() { return module_; }
  DiagnosticEngine &diags() { return diags_; }

  /// The mesh of `ref`: inline, or the `sdy.mesh` symbol; nullptr if unknown.
  const Mesh *lookupMesh(const MeshRef &ref) const;
  /// lookupMesh of each sharding, in order.
  std::vector<const Mesh *>
  meshesOf(const std::vector<TensorSharding> &shardings) const;

  /// Emits "'<op>' op <message>" at the op; always returns false.
  bool opError(const Operation &op, const std::string &message);
  /// Emits `message` as is (MLIR's emitError without the op prefix).
  bool plainError(const Operation &op, const std::string &message);
  /// A note at `loc`.
  void note(Location loc, const std::string &message);

  /// Emits "'<op>' op <message>" and, when `message` reports an axis already
  /// bound by a parent manual computation, the note at that parent.
  bool shardingError(const Operation &op, const std::string &message);
  enum class FuncValue { Arg, Result };
  /// shardingError at `func` about its argument or result `index`
  /// ("arg 1 - <message>"): the diagnostic's range is where that argument or
  /// result was written.
  bool funcValueError(const Operation &func, FuncValue kind, size_t index,
                      const std::string &message);

  /// What a check of an attribute against types is about (a memo key part).
  enum class Check : char { OpSharding, OpRule, FuncValue };
  /// Memo of checks that passed in this run, keyed by (check, attribute,
  /// types). Attributes and types are interned and nothing changes the
  /// meshes while the verifier runs, so the answer is the same; a module of
  /// repeated layers is then verified once per distinct key. Usage:
  ///   startKey(check, attr); addKeyType(t)...; if (passed()) ...;
  ///   ... recordPassed();
  /// (Inline: every op with a sharding builds a key, several times per
  /// pipeline.)
  void startKey(Check check, const Attr *attr) {
    key_size_ = 0;
    key_hash_ = 0x9E3779B97F4A7C15ull;
    addKeyWord(static_cast<uintptr_t>(check));
    addKeyWord(reinterpret_cast<uintptr_t>(attr));
  }
  void addKeyType(Type type) { addKeyWord(reinterpret_cast<uintptr_t>(type)); }
  bool passed() const {
    return keyFits() && !slots_.empty() && slots_[findSlot()].size;
  }
  void recordPassed();

  /// Whether the module holds an sdy.manual_computation (when not, no op
  /// has enclosing manual axes, and nobody needs to walk up to look).
  bool mayHaveManualAxes() const { return may_have_manual_axes_; }

private:
  /// One remembered key: its hash and where its words are in keys_.
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t size = 0; ///< 0: empty slot
  };
  void addKeyWord(uintptr_t word) {
    if (key_size_ < kMaxKeyWords)
      key_[key_size_] = word;
    ++key_size_;
    key_hash_ = (key_hash_ ^ word) * 0xBF58476D1CE4E5B9ull;
    key_hash_ ^= key_hash_ >> 31;
  }
  /// The slot holding key_ or the empty slot where it would go.
  size_t findSlot() const {
    size_t mask = slots_.size() - 1;
    for (size_t i = key_hash_ & mask;; i = (i + 1) & mask) {
      const Slot &slot = slots_[i];
      if (!slot.size || (slot.hash == key_hash_ && slot.size == key_size_ &&
                         std::equal(key_.begin(), key_.begin() + key_size_,
                                    keys_.begin() + slot.offset)))
        return i;
    }
  }
  void grow();
  void noteManualAxisOwner(const Operation &op, const std::string &message);
  Module &module_;
  DiagnosticEngine &diags_;
  /// The keys that passed, in an open-addressed table (a lookup per op
  /// with a sharding: no allocation, no per-byte hashing).
  std::vector<Slot> slots_;
  std::vector<uintptr_t> keys_;
  size_t num_passed_ = 0;
  /// The key being built, in place (a vector's bookkeeping per word was
  /// most of a memo lookup). Longer keys (ops with many results) are not
  /// remembered.
  static constexpr size_t kMaxKeyWords = 16;
  bool keyFits() const { return key_size_ <= kMaxKeyWords; }
  std::array<uintptr_t, kMaxKeyWords> key_{};
  size_t key_size_ = 0;
  uint64_t key_hash_ = 0;
  bool may_have_manual_axes_ = true;
};

/// The shape info of a type, for the sharding library.
ValueShapeInfo shapeInfo(Type type);
/// shapeInfo of each value's type.
std::vector<ValueShapeInfo> shapeInfos(const std::vector<Type> &types);

/// Axes made manual by the sdy.manual_computation ops enclosing `op` (not
/// `op` itself), outermost binding last.
std::vector<std::string> enclosingManualAxes(const Operation &op);
/// The enclosing sdy.manual_computation that binds `axis` (the outermost one,
/// as Shardy's map keeps), or nullptr.
const Operation *manualAxisOwner(const Operation &op, const std::string &axis);
/// The manual axes of a sdy.manual_computation (empty if none).
std::vector<std::string> manualAxesOf(const Operation &op);

/// The sharding of `value` as Shardy's getSharding finds it: a func
/// argument's `sdy.sharding`, the sharding attribute of sdy ops, or the
/// op's `sdy.sharding` entry. nullptr when it has none.
const TensorSharding *shardingOf(Value *value);

/// "'<op>' op " for an op name.
std::string opPrefix(std::string_view op_name);

} // namespace shardlab::verify
