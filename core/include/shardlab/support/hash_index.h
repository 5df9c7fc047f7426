// HashIndex: pointers filed under hashes their owner computed, several per
// hash allowed, in one flat open-addressing array. The attribute arena
// files every structurally uniqued attribute (shardings, dense arrays,
// dictionaries) under its hash and asks "is one equal to this already
// made?" for each new one, once or more per op while parsing and per
// update while propagating. A node-based multimap allocated a node per
// attribute and chased pointers per lookup; here a lookup reads
// consecutive slots.
//
//   HashIndex<const Attr *> index;
//   index.insert(hash, attr);
//   const Attr *same = index.find(hash, [&](const Attr *old) {
//     return *old == candidate;
//   }); // nullptr when none matches
#pragma once

#include "shardlab/support/string_hash.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardlab {

template <typename Pointer> class HashIndex {
public:
  /// The first pointer filed under `hash` for which `matches` is true, or
  /// nullptr. `matches` sees only pointers filed under exactly `hash`.
  template <typename Matches>
  Pointer find(size_t hash, Matches &&matches) const {
    if (slots_.empty())
      return nullptr;
    const size_t mask = slots_.size() - 1;
    for (size_t at = home(hash);; at = (at + 1) & mask) {
      const Slot &slot = slots_[at];
      if (!slot.value)
        return nullptr;
      if (slot.hash == hash && matches(slot.value))
        return slot.value;
    }
  }

  /// Files `value` (not null) under `hash`, after any already there.
  void insert(size_t hash, Pointer value) {
    if (2 * (size_ + 1) > slots_.size())
      grow();
    place(hash, value);
    ++size_;
  }

  size_t size() const { return size_; }

private:
  struct Slot {
    size_t hash = 0;
    Pointer value = nullptr; ///< nullptr: empty
  };

  /// The slot a hash starts probing from (hashes that differ only in
  /// their high bits spread too).
  size_t home(size_t hash) const { return fibonacciSlot(hash, log2_slots_); }

  void place(size_t hash, Pointer value) {
    const size_t mask = slots_.size() - 1;
    size_t at = home(hash);
    while (slots_[at].value)
      at = (at + 1) & mask;
    slots_[at] = Slot{hash, value};
  }

  /// Doubles the slots (64 at first) and files every pointer again.
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    log2_slots_ = old.empty() ? 6 : log2_slots_ + 1;
    slots_.assign(size_t{1} << log2_slots_, Slot{});
    for (const Slot &slot : old)
      if (slot.value)
        place(slot.hash, slot.value);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  unsigned log2_slots_ = 0;
};

} // namespace shardlab
