// AxisName: the name of a mesh axis inside an AxisRef, stored inline.
//
// Propagation and export copy and compare axis references millions of
// times (every factor of every step folds, truncates and expands lists of
// them). With a std::string name each copy ran the string's constructor and
// each comparison called memcmp; mesh axis names are short ("x", "data",
// "tensor"), so here a name of up to 23 bytes lives in the object itself,
// zero-padded, and copying it is three word moves and comparing it three
// word compares. Longer names (allowed, as in Shardy) go to the heap.
#pragma once

#include "shardlab/support/string_hash.h"

#include <compare>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace shardlab {

class AxisName {
public:
  AxisName() noexcept { clear(); }
  // Implicit, as a std::string name was: AxisRef{"x"} and AxisRef{name}.
  AxisName(std::string_view text) { assign(text); }
  AxisName(const char *text) { assign(std::string_view(text)); }
  AxisName(const std::string &text) { assign(text); }
  AxisName(const AxisName &other) {
    if (other.isLong())
      assign(other.view());
    else
      std::memcpy(words_, other.words_, sizeof(words_));
  }
  AxisName(AxisName &&other) noexcept {
    std::memcpy(words_, other.words_, sizeof(words_));
    other.clear();
  }
  AxisName &operator=(const AxisName &other) {
    if (this != &other) {
      release();
      if (other.isLong())
        assign(other.view());
      else
        std::memcpy(words_, other.words_, sizeof(words_));
    }
    return *this;
  }
  AxisName &operator=(AxisName &&other) noexcept {
    if (this != &other) {
      release();
      std::memcpy(words_, other.words_, sizeof(words_));
      other.clear();
    }
    return *this;
  }
  ~AxisName() { release(); }

  std::string_view view() const {
    if (!isLong())
      return {bytes(), static_cast<size_t>(tag())};
    const char *data = nullptr;
    size_t size = 0;
    std::memcpy(&data, bytes(), sizeof(data));
    std::memcpy(&size, bytes() + sizeof(data), sizeof(size));
    return {data, size};
  }
  operator std::string_view() const { return view(); }
  std::string str() const { return std::string(view()); }
  size_t size() const { return view().size(); }
  bool empty() const { return tag() == 0; }

  friend bool operator==(const AxisName &a, const AxisName &b) {
    if (!a.isLong() && !b.isLong())
      return a.words_[0] == b.words_[0] && a.words_[1] == b.words_[1] &&
             a.words_[2] == b.words_[2];
    return a.view() == b.view();
  }
  friend bool operator==(const AxisName &a, std::string_view b) {
    return a.view() == b;
  }
  friend bool operator==(const AxisName &a, const char *b) {
    return a.view() == std::string_view(b);
  }
  friend bool operator==(const AxisName &a, const std::string &b) {
    return a.view() == std::string_view(b);
  }
  // Through compare(): Emscripten's libc++ has no <=> for string_view.
  friend std::strong_ordering operator<=>(const AxisName &a,
                                          const AxisName &b) {
    return order(a.view().compare(b.view()));
  }
  friend std::strong_ordering operator<=>(const AxisName &a,
                                          std::string_view b) {
    return order(a.view().compare(b));
  }
  friend std::ostream &operator<<(std::ostream &os, const AxisName &name) {
    return os << name.view();
  }
  friend std::string operator+(const std::string &a, const AxisName &b) {
    std::string out = a;
    out.append(b.view());
    return out;
  }
  friend std::string operator+(const AxisName &a, const std::string &b) {
    std::string out = a.str();
    out.append(b);
    return out;
  }
  friend std::string operator+(const char *a, const AxisName &b) {
    std::string out = a;
    out.append(b.view());
    return out;
  }
  friend std::string operator+(const AxisName &a, const char *b) {
    std::string out = a.str();
    out.append(b);
    return out;
  }

private:
  static std::strong_ordering order(int compared) {
    return compared < 0   ? std::strong_ordering::less
           : compared > 0 ? std::strong_ordering::greater
                          : std::strong_ordering::equal;
  }
  static constexpr size_t kInline = 23;
  static constexpr uint8_t kLong = 0xFF;

  // Bytes 0..22: the name, zero-padded; byte 23: its length, or kLong when
  // bytes 0..15 hold a heap pointer and the length.
  uint64_t words_[3];

  const char *bytes() const { return reinterpret_cast<const char *>(words_); }
  char *bytes() { return reinterpret_cast<char *>(words_); }
  uint8_t tag() const { return static_cast<uint8_t>(bytes()[kInline]); }
  bool isLong() const { return tag() == kLong; }
  void clear() { words_[0] = words_[1] = words_[2] = 0; }
  void release() {
    if (isLong())
      delete[] const_cast<char *>(view().data());
    clear();
  }
  void assign(std::string_view text) {
    clear();
    if (text.size() <= kInline) {
      std::memcpy(bytes(), text.data(), text.size());
      bytes()[kInline] = static_cast<char>(text.size());
      return;
    }
    char *data = new char[text.size()];
    std::memcpy(data, text.data(), text.size());
    size_t size = text.size();
    std::memcpy(bytes(), &data, sizeof(data));
    std::memcpy(bytes() + sizeof(data), &size, sizeof(size));
    bytes()[kInline] = static_cast<char>(kLong);
  }
};

} // namespace shardlab

template <> struct std::hash<shardlab::AxisName> {
  size_t operator()(const shardlab::AxisName &name) const {
    return shardlab::hashString(name.view());
  }
};
