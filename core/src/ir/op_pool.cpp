#include "shardlab/ir/op_pool.h"

#include <new>

namespace shardlab {

OpPool::OpPool(size_t slot_size) {
  constexpr size_t align = alignof(std::max_align_t);
  size_t body = (slot_size + align - 1) / align * align;
  stride_ = sizeof(Header) + (body < sizeof(void *) ? align : body);
}

void *OpPool::allocate() {
  ++live_;
  if (free_) {
    void *slot = free_;
    free_ = *static_cast<void **>(slot);
    return slot;
  }
  if (next_ == end_) {
    // operator new[] of std::byte is max-aligned, and so is the stride.
    // Plain new[]: slots are constructed when handed out, not zeroed here.
    slabs_.emplace_back(new std::byte[stride_ * kSlotsPerSlab]);
    next_ = slabs_.back().get();
    end_ = next_ + stride_ * kSlotsPerSlab;
  }
  auto *header = new (next_) Header{this};
  next_ += stride_;
  return header + 1;
}

size_t OpPool::liveNamed(std::string_view op_name) const {
  auto it = named_.find(op_name);
  return it == named_.end() ? 0 : it->second;
}

void OpPool::countNamed(std::string_view op_name, int delta) {
  named_[op_name] += static_cast<size_t>(delta);
}

OpPool &OpPool::ownerOf(const void *slot) {
  return *(static_cast<const Header *>(slot) - 1)->owner;
}

void OpPool::release(void *slot) {
  if (!slot)
    return;
  OpPool *pool = (static_cast<Header *>(slot) - 1)->owner;
  *static_cast<void **>(slot) = pool->free_;
  pool->free_ = slot;
  --pool->live_;
}

} // namespace shardlab
