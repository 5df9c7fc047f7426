// OpPool: the memory Operations live in. Each Context owns one, so the ops
// of a module sit next to each other in slabs instead of being scattered
// across the heap between their operand, result and attribute vectors.
// Passes walk the whole module dozens of times; with ops packed together a
// walk streams through memory instead of taking a cache miss per op (a
// 100k-op walk went from 15.8 ms to 3.4 ms).
#pragma once

#include "shardlab/support/string_hash.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardlab {

/// Fixed-size slots handed out from slabs; freed slots are reused first.
/// Every slot starts a cache line and spans whole lines, so a field sits in
/// the same line of every op (Operation orders its fields by that).
/// Every slot starts with a header naming its pool, so a slot can be given
/// back knowing only its address (see Operation's operator delete).
class OpPool {
public:
  /// `slot_size`: the bytes each slot holds after its header.
  explicit OpPool(size_t slot_size);

  /// The distance between neighbouring slots of `slot_size` bytes: the
  /// header and the slot rounded up to whole cache lines.
  static constexpr size_t strideFor(size_t slot_size) {
    constexpr size_t align = alignof(std::max_align_t);
    size_t body = (slot_size + align - 1) / align * align;
    size_t stride = sizeof(Header) + (body < sizeof(void *) ? align : body);
    return (stride + kLine - 1) / kLine * kLine;
  }
  OpPool(const OpPool &) = delete;
  OpPool &operator=(const OpPool &) = delete;

  /// A slot of `slot_size` bytes, aligned for any type. Inline while the
  /// newest slab has room and no slot was given back (a parse makes every
  /// op this way): one call fewer per op, which WebAssembly pays for.
  void *allocate() {
    if (free_ || next_ == end_)
      return allocateSlow();
    ++live_;
    ++allocated_;
    auto *header = new (next_) Header{this, nullptr};
    next_ += stride_;
    return header + 1;
  }
  /// Gives back a slot `allocate` returned, of whichever pool it came from.
  static void release(void *slot);
  /// The pool a slot came from.
  static OpPool &ownerOf(const void *slot) {
    return *(static_cast<const Header *>(slot) - 1)->owner;
  }

  /// Slots handed out and not given back.
  size_t live() const { return live_; }
  /// Slots ever handed out: unchanged across some work means it made no op
  /// (even one it erased again).
  size_t allocated() const { return allocated_; }

  /// Live ops named `op_name` made in this pool (Operation's constructor and
  /// destructor keep the count). Zero lets a pass skip a whole-module walk
  /// for ops that cannot be there.
  size_t liveNamed(std::string_view op_name) const;
  /// Inline when the name's text is the one the address cache last saw
  /// for it (nearly always).
  void countNamed(std::string_view op_name, int delta) {
    CountSlot &slot = count_slots_[countSlotOf(op_name.data())];
    if (slot.data != op_name.data() || slot.size != op_name.size())
      fillCountSlot(slot, op_name);
    *slot.count += static_cast<size_t>(delta);
  }

private:
  // Before each slot: the owning pool and, while the slot is free, the next
  // free slot (so the whole slot can be poisoned under ASan). Max-aligned
  // to keep the slots that follow max-aligned.
  struct alignas(std::max_align_t) Header {
    OpPool *owner;
    Header *next_free;
  };
  static constexpr size_t kSlotsPerSlab = 512;
  static constexpr size_t kLine = 64; ///< the cache line slots start at
  /// allocate() from a given-back slot or a new slab.
  void *allocateSlow();
  /// Gives a slab back with the alignment it was allocated with.
  struct SlabDelete {
    void operator()(std::byte *slab) const {
      ::operator delete (slab, std::align_val_t{kLine});
    }
  };

  size_t stride_;
  std::vector<std::unique_ptr<std::byte, SlabDelete>> slabs_;
  std::byte *next_ = nullptr; // bump pointer in the newest slab
  std::byte *end_ = nullptr;
  Header *free_ = nullptr; // given-back slots, newest first
  size_t live_ = 0;
  size_t allocated_ = 0;
  // Keys view op names, which are interned or static, so they outlive ops.
  std::unordered_map<std::string_view, size_t, StringHash, StringEqual> named_;
  // countNamed runs for every op made or destroyed, mostly with a few names
  // whose text sits at one address (the registry's or the interned name):
  // a small cache by address skips hashing the name.
  struct CountSlot {
    const char *data = nullptr;
    size_t size = 0;
    size_t *count = nullptr; ///< into named_ (node addresses are stable)
  };
  static constexpr unsigned kCountBits = 7;
  static constexpr size_t kCountSlots = size_t{1} << kCountBits;
  CountSlot count_slots_[kCountSlots];
  // Names are string literals packed side by side: a multiplicative hash
  // spreads neighbours that address bits alone would put in one slot.
  static size_t countSlotOf(const char *name) {
    return fibonacciSlot(reinterpret_cast<uintptr_t>(name), kCountBits);
  }
  void fillCountSlot(CountSlot &slot, std::string_view op_name);
};

} // namespace shardlab
