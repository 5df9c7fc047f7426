#include "shardlab/ir/op_pool.h"

#include <new>

// Under AddressSanitizer a given-back slot is poisoned until handed out
// again, so a use of an erased op is still reported as use-after-free.
#if defined(__SANITIZE_ADDRESS__)
#define SHARDLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHARDLAB_ASAN 1
#endif
#endif
#ifdef SHARDLAB_ASAN
#include <sanitizer/asan_interface.h>
#define POISON_SLOT(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON_SLOT(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON_SLOT(p, n) ((void)(p), (void)(n))
#define UNPOISON_SLOT(p, n) ((void)(p), (void)(n))
#endif

namespace shardlab {

OpPool::OpPool(size_t slot_size) : stride_(strideFor(slot_size)) {}

void *OpPool::allocateSlow() {
  ++live_;
  ++allocated_;
  if (free_) {
    Header *header = free_;
    free_ = header->next_free;
    UNPOISON_SLOT(header + 1, stride_ - sizeof(Header));
    return header + 1;
  }
  if (next_ == end_) {
    // Line-aligned, as is the stride. Not zeroed: slots are constructed
    // when handed out.
    slabs_.emplace_back(static_cast<std::byte *>(
        ::operator new (stride_ *kSlotsPerSlab, std::align_val_t{kLine})));
    next_ = slabs_.back().get();
    end_ = next_ + stride_ * kSlotsPerSlab;
  }
  auto *header = new (next_) Header{this, nullptr};
  next_ += stride_;
  return header + 1;
}

size_t OpPool::liveNamed(std::string_view op_name) const {
  auto it = named_.find(op_name);
  return it == named_.end() ? 0 : it->second;
}

void OpPool::fillCountSlot(CountSlot &slot, std::string_view op_name) {
  slot = {op_name.data(), op_name.size(), &named_[op_name]};
}

void OpPool::release(void *slot) {
  if (!slot)
    return;
  Header *header = static_cast<Header *>(slot) - 1;
  OpPool *pool = header->owner;
  header->next_free = pool->free_;
  pool->free_ = header;
  --pool->live_;
  POISON_SLOT(slot, pool->stride_ - sizeof(Header));
}

} // namespace shardlab
