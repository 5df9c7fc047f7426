// Storage that keeps a few elements inside its owner and only goes to the
// heap beyond them. An op used to allocate three vectors (operands,
// results, attributes) besides its pooled slot; most ops have at most two
// operands, one result and two attributes, so with these their whole state
// is one slot: parsing, cloning and destroying an op stop calling malloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>

namespace shardlab {

/// `N` elements inline, more on the heap; sized once by reset() and never
/// grown, so element addresses stay put until the next reset (values and
/// their use lists point at them).
template <typename T, size_t N> class InlineArray {
public:
  InlineArray() = default;
  InlineArray(const InlineArray &) = delete;
  InlineArray &operator=(const InlineArray &) = delete;
  ~InlineArray() { destroy(); }

  /// Replaces the contents with `n` default-constructed elements.
  void reset(size_t n) {
    destroy();
    if (n == 0)
      return;
    data_ = n <= N ? reinterpret_cast<T *>(inline_)
                   : static_cast<T *>(::operator new(n * sizeof(T)));
    for (size_t i = 0; i < n; ++i)
      new (data_ + i) T();
    size_ = static_cast<uint32_t>(n);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }

private:
  void destroy() {
    for (size_t i = 0; i < size_; ++i)
      data_[i].~T();
    if (data_ && data_ != reinterpret_cast<T *>(inline_))
      ::operator delete(data_);
    data_ = nullptr;
    size_ = 0;
  }

  T *data_ = nullptr;
  uint32_t size_ = 0;
  alignas(T) std::byte inline_[N * sizeof(T)];
};

/// A growable list of trivially copyable `T` with `N` elements inline.
template <typename T, size_t N> class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>);

public:
  SmallVector() = default;
  SmallVector(const SmallVector &other) { assign(other.begin(), other.end()); }
  SmallVector &operator=(const SmallVector &other) {
    if (this != &other) {
      size_ = 0;
      assign(other.begin(), other.end());
    }
    return *this;
  }
  ~SmallVector() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T *begin() { return data(); }
  T *end() { return data() + size_; }
  const T *begin() const { return data(); }
  const T *end() const { return data() + size_; }
  T &operator[](size_t i) { return data()[i]; }
  const T &operator[](size_t i) const { return data()[i]; }
  operator std::span<const T>() const { return {data(), size_}; }
  void clear() { size_ = 0; }

  /// Inserts `value` before position `at` (0..size()).
  void insert(size_t at, const T &value) {
    grow(size_ + 1);
    T *d = data();
    std::memmove(d + at + 1, d + at, (size_ - at) * sizeof(T));
    d[at] = value;
    ++size_;
  }
  void push_back(const T &value) { insert(size_, value); }
  void erase(size_t at) {
    T *d = data();
    std::memmove(d + at, d + at + 1, (size_ - at - 1) * sizeof(T));
    --size_;
  }

private:
  T *data() { return heap_ ? heap_ : reinterpret_cast<T *>(inline_); }
  const T *data() const {
    return heap_ ? heap_ : reinterpret_cast<const T *>(inline_);
  }
  void assign(const T *first, const T *last) {
    size_t n = static_cast<size_t>(last - first);
    grow(n);
    if (n)
      std::memcpy(data(), first, n * sizeof(T));
    size_ = static_cast<uint32_t>(n);
  }
  void grow(size_t n) {
    if (n <= capacity_)
      return;
    size_t capacity = capacity_ * 2 > n ? capacity_ * 2 : n;
    T *fresh = static_cast<T *>(::operator new(capacity * sizeof(T)));
    if (size_)
      std::memcpy(fresh, data(), size_ * sizeof(T));
    release();
    heap_ = fresh;
    capacity_ = static_cast<uint32_t>(capacity);
  }
  void release() {
    if (heap_)
      ::operator delete(heap_);
    heap_ = nullptr;
    capacity_ = N;
  }

  T *heap_ = nullptr;
  uint32_t size_ = 0;
  uint32_t capacity_ = N;
  alignas(T) std::byte inline_[N * sizeof(T)];
};

} // namespace shardlab
