// The operation graph: Context (interning), Value and its uses, Operation,
// Block, Region and Module. Modelled on MLIR's structure so that Shardy's
// passes translate directly: ops own regions, regions own blocks, blocks own
// an ordered list of ops and their arguments, values know their uses.
#pragma once

#include "shardlab/ir/attributes.h"
#include "shardlab/ir/inline_storage.h"
#include "shardlab/ir/op_pool.h"
#include "shardlab/ir/types.h"
#include "shardlab/support/string_hash.h"

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace shardlab {

class Operation;
class Block;
struct PassTiming;
class Region;
struct OpInfo;

/// Where an op or a value comes from: its position in the text that was
/// parsed (1-based line and column; 0 when made by a pass from nothing),
/// for diagnostics, and the MLIR location the text gave it (`loc(...)`,
/// AttrKind::Location), printed back with -mlir-print-debuginfo. Ops a pass
/// makes for another op take that op's Location, so both travel along.
struct Location {
  uint32_t line = 0;
  uint32_t col = 0;
  const Attr *debug = nullptr; ///< null: none was written (MLIR's own: the
                               ///< file position, or unknown)
};

/// A span of the source text, from `start` up to (not including) `end`;
/// start.line == 0 when unknown.
struct SourceRange {
  Location start, end;
};

/// Where each argument and result of a func.func's signature was written
/// (`%arg0: tensor<8xf32> {sdy.sharding = ...}`), for diagnostics that
/// concern one of them. Filled by the parser; empty for built modules.
struct FuncSignatureRanges {
  std::vector<SourceRange> args, results;
};

/// Interns strings (op names, attribute names) and owns types and
/// attributes. Everything parsed into one Module shares one Context.
///
/// A Context may be layered over a `parent` that no longer changes (the
/// context of a module parsed once and copied for each of many uses, see
/// copyModule): its strings, types and attributes are found in the parent
/// first, so one value still has one pointer, and only what is new is made
/// here. Readers of the parent need no lock; nothing may be added to the
/// parent while a child uses it.
class Context {
public:
  Context();
  explicit Context(std::shared_ptr<const Context> parent);
  std::string_view intern(std::string_view text);
  TypeContext types;
  AttrArena attrs;
  /// Where the ops of modules in this context live (Operation::create).
  /// Ops must be destroyed before their Context; a Module holds its
  /// Context by shared_ptr and destroys its ops first.
  OpPool ops;

private:
  std::shared_ptr<const Context> parent_;
  // Views into `storage_` (a deque: elements never move), so a lookup of a
  // string already interned allocates nothing.
  std::unordered_set<std::string_view, StringHash, StringEqual> strings_;
  std::deque<std::string> storage_;
};

class Value;

/// One use of a value: operand `index()` of `owner`. Uses of a value form
/// an intrusive doubly linked list so that adding and removing is O(1).
struct OpOperand {
  Value *value = nullptr;
  Operation *owner = nullptr;
  OpOperand *prev_use = nullptr;
  OpOperand *next_use = nullptr;

  void set(Value *new_value);
  /// Which operand of `owner` this is: its place in the owner's operand
  /// array, so no field is spent on it (defined after Operation).
  inline uint32_t index() const;
};

/// An SSA value: an op result or a block argument.
class Value {
public:
  Type type = nullptr;
  Operation *defining_op = nullptr; ///< null for block arguments
  Block *owner_block = nullptr;     ///< set for block arguments
  uint32_t index = 0;               ///< result or argument number
  /// The printer's SSA name slot (set while printing; see text/printer.h).
  int32_t print_slot = 0;
  Location loc;

  bool isBlockArgument() const { return defining_op == nullptr; }
  OpOperand *firstUse() const { return first_use_; }
  bool hasUses() const { return first_use_ != nullptr; }
  bool hasOneUse() const {
    return first_use_ && first_use_->next_use == nullptr;
  }
  size_t numUses() const;
  /// Redirects every use of this value to `other`.
  void replaceAllUsesWith(Value *other);
  /// Redirects every use but `except`'s to `other`: for an op put after
  /// this value that reads it and stands for it from then on.
  void replaceAllUsesExcept(Value *other, const Operation *except);

private:
  friend struct OpOperand;
  OpOperand *first_use_ = nullptr;
};

/// Sorted (by name) attribute dictionary, as MLIR's DictionaryAttr.
class AttrDict {
public:
  /// Inline so that a literal name's length is known where it is called:
  /// most entries are then rejected by one integer compare.
  const Attr *get(std::string_view name) const {
    return findNamed(entries_, name);
  }
  /// Inserts or replaces, keeping name order. The name's characters must
  /// outlive the dictionary: an interned name or a string literal (hot
  /// paths pass literals and skip the interning lookup).
  void set(std::string_view interned_name, const Attr *value);
  bool erase(std::string_view name);
  std::span<const NamedAttr> entries() const { return entries_; }
  /// The entries as a vector (for an attribute's Dict payload).
  std::vector<NamedAttr> toVector() const {
    return {entries_.begin(), entries_.end()};
  }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }

private:
  // Two inline: most ops carry at most two attributes.
  SmallVector<NamedAttr, 2> entries_;
};

/// A generic operation. `info` points at the registry entry of a known op
/// (custom syntax, verifier); it is null for ops the project does not model.
/// Ops live in their Context's OpPool: make them with create() (plain `new`
/// is deleted); `delete` and std::unique_ptr give the slot back.
class Operation {
  // The fields walks read come first: with the pool's header they fill the
  // slot's first cache line (the pool starts every slot on a line), and
  // `attrs` fills the second. A walk over a 100k-op module streams through
  // these two lines of each op, not all five.
  Operation *next_ = nullptr;
  /// Null for the ops without regions (nearly all), to keep this line free.
  std::unique_ptr<std::vector<std::unique_ptr<Region>>> regions_;

public:
  Operation(std::string_view name, const OpInfo *info, Location loc);
  ~Operation();
  Operation(const Operation &) = delete;
  Operation &operator=(const Operation &) = delete;

  /// A new op in `pool` (normally `ctx.ops`; cloneOp uses the source op's).
  /// (Inline, with the pool's fast path: the parser makes every op here.)
  static std::unique_ptr<Operation> create(OpPool &pool, std::string_view name,
                                           const OpInfo *info, Location loc) {
    return std::unique_ptr<Operation>(new (pool) Operation(name, info, loc));
  }
  /// The pool this op lives in.
  OpPool &pool() const { return OpPool::ownerOf(this); }

  static void *operator new(size_t size) = delete;
  static void *operator new(size_t size, OpPool &pool) {
    (void)size; // every slot holds sizeof(Operation), the only size asked for
    return pool.allocate();
  }
  static void operator delete(void *slot) { OpPool::release(slot); }
  static void operator delete(void *slot, OpPool &) { OpPool::release(slot); }

  const std::string_view name; ///< interned or static; never changes
  const OpInfo *info = nullptr;

private:
  uint32_t dialect_size_ = 0; ///< computed once: dialect() is on hot paths

public:
  /// Scratch number for the algorithm running over the IR (the propagation
  /// driver numbers ops to keep per-op state in arrays instead of hash
  /// maps). Never meaningful across passes; whoever uses it assigns it.
  uint32_t scratch_index = 0;
  AttrDict attrs; ///< inherent and discardable attributes
  Location loc;

  size_t numOperands() const { return operands_.size(); }
  Value *operand(size_t i) const { return operands_[i].value; }
  OpOperand &operandUse(size_t i) { return operands_[i]; }
  const OpOperand *operandUses() const { return operands_.begin(); }
  void setOperands(std::span<Value *const> values);
  void setOperands(std::initializer_list<Value *> values) {
    setOperands(std::span<Value *const>(values.begin(), values.size()));
  }
  void setOperand(size_t i, Value *value) { operands_[i].set(value); }

  size_t numResults() const { return results_.size(); }
  Value *result(size_t i) { return &results_[i]; }
  const Value *result(size_t i) const { return &results_[i]; }
  /// Creates the results; only called once, right after construction.
  void setResultTypes(std::span<const Type> types);
  void setResultTypes(std::initializer_list<Type> types) {
    setResultTypes(std::span<const Type>(types.begin(), types.size()));
  }

  size_t numRegions() const { return regions_ ? regions_->size() : 0; }
  Region &region(size_t i) { return *(*regions_)[i]; }
  const Region &region(size_t i) const { return *(*regions_)[i]; }
  Region &addRegion();

  Block *parentBlock() const { return parent_; }
  Operation *parentOp() const;
  Operation *nextInBlock() const { return next_; }
  Operation *prevInBlock() const { return prev_; }
  /// Drops all operand uses (before erasing the op).
  void dropAllUses();

  // Op-name checks used everywhere. Compared inline a word at a time: with
  // a literal the length is known, so most names are rejected by one
  // integer compare and the rest without a call to memcmp.
  bool is(std::string_view op_name) const {
    return equalStrings(name, op_name);
  }
  /// The name up to its first '.' (empty when it has none).
  std::string_view dialect() const { return name.substr(0, dialect_size_); }

  /// The `<{...}>` properties of an unknown op (a known op keeps its
  /// inherent attributes in `attrs`): empty for nearly every op, so the
  /// dictionary is allocated on the first write (mutableProps).
  const AttrDict &props() const { return props_ ? *props_ : emptyDict(); }
  bool hasProps() const { return props_ && !props_->empty(); }
  AttrDict &mutableProps();

private:
  static const AttrDict &emptyDict();
  Operation *prev_ = nullptr;
  Block *parent_ = nullptr;
  std::unique_ptr<AttrDict> props_;
  friend class Block;
  // Inline: most ops have at most two operands and one result.
  InlineArray<OpOperand, 2> operands_;
  InlineArray<Value, 1> results_;
};

/// Asks the cache for the two lines a walk reads of the op a few slots
/// after `op` in its pool. Ops are mostly made in the order of their block,
/// so that is where a walk goes next; the hardware does not fetch a stride
/// of whole 320-byte slots ahead by itself. A prefetch never faults, so a
/// slot past the slab's end is harmless. (WebAssembly has no prefetch.)
inline void prefetchAhead(const Operation *op) {
  constexpr size_t kSlot = OpPool::strideFor(sizeof(Operation));
  // An address, not a pointer into an object: computed as an integer.
  const uintptr_t ahead = reinterpret_cast<uintptr_t>(op) + 4 * kSlot;
  __builtin_prefetch(reinterpret_cast<const void *>(ahead));
  __builtin_prefetch(reinterpret_cast<const void *>(ahead + 64));
}

uint32_t OpOperand::index() const {
  return static_cast<uint32_t>(this - owner->operandUses());
}

/// A block: arguments and an ordered list of operations it owns.
class Block {
public:
  Block() = default;
  ~Block();
  Block(const Block &) = delete;
  Block &operator=(const Block &) = delete;

  Region *parent = nullptr;

  Value *addArgument(Type type, Location loc);
  /// Removes argument `index`, which nothing may use; the later ones move
  /// down a place.
  void eraseArgument(size_t index);
  /// Room for `count` arguments in all, before adding them one by one.
  void reserveArguments(size_t count) { args_.reserve(count); }
  size_t numArguments() const { return args_.size(); }
  Value *argument(size_t i) { return args_[i].get(); }

  /// Takes ownership; appends at the end or inserts before `before`.
  Operation *push_back(std::unique_ptr<Operation> op);
  Operation *insertBefore(Operation *before, std::unique_ptr<Operation> op);
  /// Unlinks and destroys `op` (its uses must be gone).
  void erase(Operation *op);
  /// Unlinks `op` and hands it over (to insert it in another block).
  std::unique_ptr<Operation> take(Operation *op);
  /// Changes whenever an op is inserted or erased (for caches).
  uint64_t version() const { return version_; }
  Operation *front() const { return first_; }
  Operation *back() const { return last_; }
  size_t size() const { return size_; }
  bool empty() const { return first_ == nullptr; }

  struct Iterator {
    Operation *op;
    Operation &operator*() const { return *op; }
    Iterator &operator++() {
      op = op->nextInBlock();
      return *this;
    }
    bool operator!=(const Iterator &other) const { return op != other.op; }
  };
  Iterator begin() const { return {first_}; }
  Iterator end() const { return {nullptr}; }

private:
  std::vector<std::unique_ptr<Value>> args_;
  Operation *first_ = nullptr;
  Operation *last_ = nullptr;
  size_t size_ = 0;
  uint64_t version_ = 0;
};

/// A region: a list of blocks owned by an op.
class Region {
public:
  Operation *parent = nullptr;
  std::vector<std::unique_ptr<Block>> blocks;

  Block &addBlock();
  bool empty() const { return blocks.empty(); }
  Block &front() { return *blocks.front(); }
};

/// A parsed module: the top-level `module` op (implicit or explicit) with
/// its body, plus the context owning types and attributes.
class Module {
public:
  explicit Module(std::shared_ptr<Context> context);
  Context &ctx() { return *context_; }
  const Context &ctx() const { return *context_; }
  std::shared_ptr<Context> sharedContext() const { return context_; }
  Operation &op() { return *op_; }
  Block &body() { return op_->region(0).front(); }
  /// Whether the source spelled `module { ... }` (printed the same either
  /// way, as MLIR does).
  bool explicit_module = false;
  std::string sym_name; ///< `module @name`, empty if none
  /// Source ranges of the parsed func signatures, by func name.
  std::unordered_map<std::string, FuncSignatureRanges> signature_ranges;
  /// When set, every pass run on this module records its wall time there.
  PassTiming *timing = nullptr;
  /// Set by a pass (markUnchanged) that left the module as it was: the pass
  /// runner then skips verifying it again. Reset before every pass.
  bool unchanged_by_pass = false;
  /// Which passes the runner verifies after (passes/pass_manager.h).
  enum class VerifyPasses : uint8_t {
    Steps,     ///< each step the caller runs, a pipeline as one (default)
    EveryPass, ///< also each pass a pipeline runs (MLIR's -verify-each)
    None,      ///< none (-verify-each=false); the input is still verified
  };
  VerifyPasses verify_passes = VerifyPasses::Steps;
  /// Set by -sdy-convert-global-to-local: every type is what one device
  /// holds (shardings stay as annotations). Not printed: a module read back
  /// from text is taken as global.
  bool per_device = false;
  /// What verifyModule last found valid: each top-level op with two
  /// fingerprints (verify/verifier.cpp), one of the op itself (its name and
  /// attributes), one of its body (its function type and everything nested
  /// in it). A function whose fingerprints have not changed is not verified
  /// again; one whose body has not changed gets only its own checks.
  struct VerifiedOp {
    const Operation *op = nullptr;
    uint64_t own = 0;
    uint64_t body = 0;
  };
  std::vector<VerifiedOp> verified_top_level;
  /// What the functions read of the other top-level ops then (their meshes).
  uint64_t verified_interface = 0;
  /// Finds a top-level op with `sym_name = @name` (sdy.mesh, func.func).
  /// The index is rebuilt when top-level ops are inserted or erased; a pass
  /// that renames a symbol in place calls invalidateSymbols().
  Operation *lookupSymbol(std::string_view name) const;
  void invalidateSymbols() { symbols_version_ = ~uint64_t{0}; }
  /// The main function, as Shardy's getMainFuncOrDie(useSingleFunc=true)
  /// finds it: the only func.func with a body, else @main when it is a
  /// func.func with a body; null otherwise. Every stage uses this one.
  Operation *mainFunc();

private:
  std::shared_ptr<Context> context_;
  std::unique_ptr<Operation> op_;
  // sym_name -> top-level op, rebuilt when the body changed.
  // Keys view the sym_name attributes (arena-owned, so they stay valid).
  mutable std::unordered_map<std::string_view, Operation *, StringHash,
                             StringEqual>
      symbols_;
  mutable uint64_t symbols_version_ = ~uint64_t{0};
};

/// Calls `fn(op)` for every op nested under `root`'s regions, in pre-order.
template <typename Fn> void walk(Operation &root, Fn &&fn) {
  for (size_t r = 0; r < root.numRegions(); ++r)
    for (auto &block : root.region(r).blocks)
      for (Operation *op = block->front(); op;) {
        Operation *next = op->nextInBlock();
        prefetchAhead(op);
        fn(*op);
        // Most ops have no regions: no call to find none (a call costs
        // more in WebAssembly, and walks visit every op many times).
        if (op->numRegions())
          walk(*op, fn);
        op = next;
      }
}

/// Calls `fn(op)` for every op nested under `root`'s regions, nested ops
/// before their parent (MLIR's default walk order).
template <typename Fn> void walkPostOrder(Operation &root, Fn &&fn) {
  for (size_t r = 0; r < root.numRegions(); ++r)
    for (auto &block : root.region(r).blocks)
      for (Operation *op = block->front(); op;) {
        Operation *next = op->nextInBlock();
        prefetchAhead(op);
        if (op->numRegions())
          walkPostOrder(*op, fn);
        fn(*op);
        op = next;
      }
}

/// The types of an op's operands / results, in order.
std::vector<Type> operandTypes(const Operation &op);
std::vector<Type> resultTypes(const Operation &op);

} // namespace shardlab
