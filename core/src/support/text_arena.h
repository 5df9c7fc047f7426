// TextArena: copies of short strings at addresses that never move, so
// tables can key on views of them. Text is carved from 16 KiB chunks; a
// string longer than a chunk gets a chunk of its own. `clear` keeps the
// first chunk for reuse. (std::pmr::monotonic_buffer_resource would do,
// but Emscripten 3.1.6's libc++ has no <memory_resource>.)
//
//   TextArena arena;
//   std::string_view a = arena.store("arg0"); // stays valid until clear()
#pragma once

#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace shardlab {

class TextArena {
public:
  std::string_view store(std::string_view text) {
    if (text.size() > left_)
      grow(text.size());
    char *at = next_;
    if (!text.empty())
      std::memcpy(at, text.data(), text.size());
    next_ += text.size();
    left_ -= text.size();
    return {at, text.size()};
  }

  void clear() {
    if (chunks_.size() > 1)
      chunks_.resize(1);
    next_ = chunks_.empty() ? nullptr : chunks_.front().get();
    left_ = chunks_.empty() ? 0 : first_size_;
  }

private:
  static constexpr size_t kChunk = 16 * 1024;
  void grow(size_t need) {
    size_t size = need > kChunk ? need : kChunk;
    chunks_.push_back(std::make_unique<char[]>(size));
    if (chunks_.size() == 1)
      first_size_ = size;
    next_ = chunks_.back().get();
    left_ = size;
  }
  std::vector<std::unique_ptr<char[]>> chunks_;
  char *next_ = nullptr;
  size_t left_ = 0, first_size_ = 0;
};

} // namespace shardlab
