// TextSink: what it appends is in the string after flush(), whatever the
// sizes of the pieces and however often it grows.
#include "support/text_sink.h"

#include <doctest/doctest.h>

#include <string>

using shardlab::TextSink;

TEST_CASE("TextSink: pieces of every size land in order, the string is cut "
          "to the text") {
  std::string expected;
  std::string out;
  {
    TextSink sink(out);
    // 0..40 bytes covers each copy path (none, 1-3, 4-7, 8-16, longer);
    // 300 rounds grow the string several times.
    for (int round = 0; round < 300; ++round)
      for (size_t length = 0; length <= 40; ++length) {
        std::string piece(length,
                          static_cast<char>('a' + (round + length) % 26));
        sink += piece;
        expected += piece;
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
