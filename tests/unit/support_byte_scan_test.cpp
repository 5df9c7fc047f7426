// isAscii: one byte at or above 0x80 anywhere, in the SIMD steps or the
// tail, makes a text non-ASCII.
#include "support/byte_scan.h"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("isAscii: a high byte at every position of texts up to 200 bytes") {
  for (size_t length = 0; length <= 200; ++length) {
    std::string text(length, 'a');
    CHECK(shardlab::isAscii(text));
    for (size_t at = 0; at < length; ++at) {
      std::string high = text;
      high[at] = static_cast<char>(0x80 | (at % 0x80));
      CHECK_FALSE(shardlab::isAscii(high));
    }
  }
}
