// TextSink: appends text to a std::string with the room check and the copy
// inline. The printer appends a few bytes at a time (`%3`, `, `, a type's
// spelling) a million times for a 10k-op module; each std::string append is
// a call that checks the short-string flag twice before copying, and with
// Emscripten's libc++ the call and its memcpy were 9% of the WASM
// parse + print profile.
//
// The sink keeps the string's size ahead of the text (the bytes past the
// text are scratch) and tracks the end of the text itself; flush() cuts the
// string back to the text. Every byte is zeroed once when the string grows
// into it, so growing costs a memset of what is later written anyway.
//
//   std::string out;
//   TextSink sink(out);
//   sink += "%";
//   sink.append(name.data(), name.size());
//   sink.flush(); // out == "%" + name (also done by the destructor)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace shardlab {

class TextSink {
public:
  explicit TextSink(std::string &out)
      : out_(out), cur_(out.data() + out.size()), end_(cur_) {}
  TextSink(const TextSink &) = delete;
  TextSink &operator=(const TextSink &) = delete;
  ~TextSink() { flush(); }

  /// The string holding exactly the text so far; appending may go on.
  std::string &flush() {
    size_t used = size();
    if (out_.size() != used)
      out_.resize(used);
    cur_ = end_ = out_.data() + used;
    return out_;
  }

  size_t size() const { return static_cast<size_t>(cur_ - out_.data()); }
  bool empty() const { return size() == 0; }
  char back() const { return cur_[-1]; }
  /// The text from `from` to the end.
  std::string_view view(size_t from = 0) const {
    return {out_.data() + from, size() - from};
  }
  /// Drops the text after its first `length` bytes.
  void truncate(size_t length) { cur_ = out_.data() + length; }
  /// Room for `extra` more bytes without growing again.
  __attribute__((always_inline)) void reserve(size_t extra) {
    if (room() < extra)
      grow(extra);
  }

  // Forced inline: clang kept it out of line, and with a literal the
  // length is known, so the copy is two moves.
  __attribute__((always_inline)) void append(const char *text, size_t length) {
    if (room() < length)
      grow(length);
    copy(cur_, text, length);
    cur_ += length;
  }
  /// `count` copies of `c` (an indentation, mostly: 4 spaces in a
  /// function body): up to 16 with overlapping stores, as copy() does,
  /// instead of a call to memset.
  __attribute__((always_inline)) void append(size_t count, char c) {
    if (room() < count)
      grow(count);
    const uint64_t word = 0x0101010101010101ull * static_cast<unsigned char>(c);
    if (count > 16) {
      std::memset(cur_, c, count);
    } else if (count >= 8) {
      std::memcpy(cur_, &word, 8);
      std::memcpy(cur_ + count - 8, &word, 8);
    } else if (count >= 4) {
      std::memcpy(cur_, &word, 4);
      std::memcpy(cur_ + count - 4, &word, 4);
    } else if (count > 0) {
      cur_[0] = c;
      cur_[count / 2] = c;
      cur_[count - 1] = c;
    }
    cur_ += count;
  }
  __attribute__((always_inline)) TextSink &operator+=(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }
  // Forced inline: the printer appends one char ~9 times per op, and
  // clang kept this out of line (a call per char, dearer in WebAssembly).
  __attribute__((always_inline)) TextSink &operator+=(char c) {
    if (room() < 1)
      grow(1);
    *cur_++ = c;
    return *this;
  }
  /// `value` in decimal. Inline for 0-99 (dimension numbers, most SSA
  /// and argument numbers): clang kept the whole function out of line, a
  /// call per number printed.
  __attribute__((always_inline)) void appendDecimal(int64_t value) {
    if (static_cast<uint64_t>(value) >= 100) {
      appendLongDecimal(value);
      return;
    }
    reserve(2);
    if (value >= 10) {
      std::memcpy(cur_, kDigitPairs + 2 * value, 2);
      cur_ += 2;
    } else {
      *cur_++ = static_cast<char>('0' + value);
    }
  }
  /// Any `value` in decimal. The digits are counted first and written in
  /// place, two at a time, with no intermediate buffer (libc++'s to_chars
  /// into one and a copy out was 3% of the WASM parse + print profile).
  void appendLongDecimal(int64_t value) {
    reserve(20);
    uint64_t magnitude = static_cast<uint64_t>(value);
    if (value < 0) {
      *cur_++ = '-';
      magnitude = 0 - magnitude;
    }
    appendUnsignedDecimal(magnitude);
  }
  /// `magnitude` in decimal, read as unsigned (a ui64 above 2^63).
  void appendUnsignedDecimal(uint64_t magnitude) {
    reserve(20);
    size_t digits = decimalDigits(magnitude);
    char *at = cur_ + digits;
    cur_ = at;
    // 32-bit division where the value allows: wasm32 and most targets
    // divide 32-bit integers faster.
    while (magnitude >= (uint64_t{1} << 32)) {
      unsigned pair = static_cast<unsigned>(magnitude % 100);
      magnitude /= 100;
      std::memcpy(at -= 2, kDigitPairs + 2 * pair, 2);
    }
    auto small = static_cast<uint32_t>(magnitude);
    while (small >= 100) {
      unsigned pair = small % 100;
      small /= 100;
      std::memcpy(at -= 2, kDigitPairs + 2 * pair, 2);
    }
    if (small >= 10)
      std::memcpy(at - 2, kDigitPairs + 2 * small, 2);
    else
      at[-1] = static_cast<char>('0' + small);
  }
  /// Inserts `text` at byte `at` of the text.
  void insert(size_t at, std::string_view text) {
    size_t old_end = size();
    append(text.data(), text.size());
    char *base = out_.data();
    std::rotate(base + at, base + old_end, cur_);
  }

private:
  static constexpr char kDigitPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233"
      "34353637383940414243444546474849505152535455565758596061626364656667"
      "6869707172737475767778798081828384858687888990919293949596979899";

  static size_t decimalDigits(uint64_t value) {
    size_t digits = 1;
    for (; value >= 10000; value /= 10000)
      digits += 4;
    return digits + (value >= 10) + (value >= 100) + (value >= 1000);
  }

  size_t room() const { return static_cast<size_t>(end_ - cur_); }

  // Rare (a few times per printed module): kept out of the inlined appends.
  __attribute__((noinline)) void grow(size_t length) {
    size_t used = size();
    // A chunk ahead, or half again what there is: amortized, each byte is
    // zeroed once (and within the capacity, resize does not reallocate).
    size_t ahead = std::max({length, size_t{4096}, used / 2});
    out_.resize(used + ahead);
    cur_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  // Short copies (most are 1-16 bytes; a tensor type's spelling 17-32)
  // with two overlapping moves instead of a call to memcpy.
  __attribute__((always_inline)) static void copy(char *to, const char *from,
                                                  size_t length) {
    if (length > 32) {
      std::memcpy(to, from, length);
    } else if (length > 16) {
      char head[16], tail[16];
      std::memcpy(head, from, 16);
      std::memcpy(tail, from + length - 16, 16);
      std::memcpy(to, head, 16);
      std::memcpy(to + length - 16, tail, 16);
    } else if (length >= 8) {
      uint64_t head, tail;
      std::memcpy(&head, from, 8);
      std::memcpy(&tail, from + length - 8, 8);
      std::memcpy(to, &head, 8);
      std::memcpy(to + length - 8, &tail, 8);
    } else if (length >= 4) {
      uint32_t head, tail;
      std::memcpy(&head, from, 4);
      std::memcpy(&tail, from + length - 4, 4);
      std::memcpy(to, &head, 4);
      std::memcpy(to + length - 4, &tail, 4);
    } else if (length > 0) {
      to[0] = from[0];
      to[length / 2] = from[length / 2];
      to[length - 1] = from[length - 1];
    }
  }

  std::string &out_;
  char *cur_; // end of the text
  char *end_; // end of the string's current size
};

} // namespace shardlab
