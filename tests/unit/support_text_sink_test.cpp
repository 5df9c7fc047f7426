// TextSink: what it appends is in the string after flush(), whatever the
// sizes of the pieces and however often it grows.
#include "support/text_sink.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using shardlab::TextSink;

TEST_CASE("TextSink: pieces of every size land in order, the string is cut "
          "to the text") {
  std::string expected;
  std::string out;
  {
    TextSink sink(out);
    // 0..40 bytes covers each copy path (none, 1-3, 4-7, 8-16, 17-32,
    // longer), each byte different from its neighbours so that a misplaced
    // head or tail shows; 300 rounds grow the string several times.
    for (int round = 0; round < 300; ++round)
      for (size_t length = 0; length <= 40; ++length) {
        std::string piece(length, ' ');
        for (size_t i = 0; i < length; ++i)
          piece[i] = static_cast<char>('a' + (round + length + i) % 26);
        sink += piece;
        expected += piece;
        // Fills of 0..20 (the 8-16 bytes are two overlapping stores).
        sink.append(length % 21, '.');
        expected.append(length % 21, '.');
      }
    sink += 'z';
    sink.append(3, '-');
    expected += "z---";
    CHECK(sink.size() == expected.size());
    CHECK(sink.back() == '-');
    CHECK(sink.view(expected.size() - 4) == "z---");
    CHECK(sink.flush() == expected);
    // Appending goes on after a flush.
    sink += "tail";
    expected += "tail";
  } // the destructor flushes
  CHECK(out == expected);
}

TEST_CASE("TextSink: appends after what the string held; insert and "
          "truncate") {
  std::string out = "module";
  TextSink sink(out);
  sink += " {";
  size_t mark = sink.size();
  sink += "x}";
  sink.insert(mark, "attributes ");
  CHECK(sink.view() == "module {attributes x}");
  sink.truncate(mark);
  sink += "}";
  CHECK(sink.flush() == "module {}");
  CHECK(out == "module {}");
}

TEST_CASE("TextSink: reserve makes room without changing the text") {
  std::string out;
  TextSink sink(out);
  sink.reserve(1 << 20);
  CHECK(sink.empty());
  sink += "a";
  CHECK(sink.flush() == "a");
  CHECK(out.capacity() >= (1u << 20));
}

TEST_CASE("TextSink: appendDecimal spells every int64 as to_string does") {
  std::vector<int64_t> values = {0,   1,    9,         10,        99, 100,
                                 999, 1000, 9999,      10000,     -1, -9,
                                 -10, -100, 123456789, -987654321};
  // Each power of ten and its neighbours, past the 32-bit boundary.
  for (int64_t p = 10; p < INT64_MAX / 10; p *= 10)
    for (int64_t v : {p - 1, p, p + 1})
      values.insert(values.end(), {v, -v});
  values.insert(values.end(), {int64_t{UINT32_MAX}, int64_t{UINT32_MAX} + 1,
                               INT64_MAX, INT64_MIN, INT64_MIN + 1});
  std::string out, expected;
  {
    TextSink sink(out);
    for (int64_t v : values) {
      sink.appendDecimal(v);
      sink += ' ';
      expected += std::to_string(v) + ' ';
    }
  }
  CHECK(out == expected);
}
