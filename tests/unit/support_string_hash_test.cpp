// hashString: the word-at-a-time string hash of the name tables.
#include "shardlab/support/file_io.h"
#include "shardlab/support/string_hash.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <sys/stat.h>
#include <thread>

using shardlab::equalStrings;
using shardlab::hashString;

TEST_CASE("hashString: depends on every byte and on the length") {
  // Every string of length 0..24 over "ab", one byte changed at each
  // position: a tail read as overlapping words must still see each byte.
  for (size_t length = 1; length <= 24; ++length) {
    const std::string base(length, 'a');
    for (size_t i = 0; i < length; ++i) {
      std::string changed = base;
      changed[i] = 'b';
      CAPTURE(length);
      CAPTURE(i);
      CHECK(hashString(changed) != hashString(base));
    }
  }
  CHECK(hashString("a") != hashString(std::string_view("a\0", 2)));
  CHECK(hashString("") != hashString(std::string_view("\0", 1)));
  // Only the characters count, not where they are.
  const std::string copy = "stablehlo.dot_general";
  CHECK(hashString(copy) == hashString("stablehlo.dot_general"));
}

TEST_CASE("equalStrings: equal characters only, at every length and position") {
  // Word-at-a-time with an overlapping tail: a difference at any position
  // of any length up to three words is seen, and only the characters count.
  for (size_t length = 0; length <= 24; ++length) {
    const std::string base(length, 'a');
    const std::string copy(length, 'a');
    CHECK(equalStrings(base, copy));
    for (size_t i = 0; i < length; ++i) {
      std::string changed = base;
      changed[i] = 'b';
      CAPTURE(length);
      CAPTURE(i);
      CHECK_FALSE(equalStrings(changed, base));
    }
    CHECK_FALSE(equalStrings(base, base + "a"));
  }
  // Views into a longer text compare only their own characters.
  const std::string text = "stablehlo.add stablehlo.addx";
  CHECK(equalStrings(std::string_view(text).substr(0, 13),
                     std::string_view(text).substr(14, 13)));
}

TEST_CASE("hashString: SSA names spread over the low bits tables index by") {
  // Open-addressing tables take the low bits: 10000 names like the
  // parser's (%0 .. %9999) must not pile into few of 16384 buckets.
  std::set<size_t> buckets;
  for (int i = 0; i < 10000; ++i)
    buckets.insert(hashString(std::to_string(i)) & 16383);
  CHECK(buckets.size() > 7000);
}

TEST_CASE("readFile: a regular file whole, an empty one, a missing one") {
  const std::string path = "support_string_hash_test.tmp";
  std::string big(300000, 'x');
  big[123456] = '\n';
  big.back() = 'y';
  {
    std::ofstream out(path, std::ios::binary);
    out << big;
  }
  std::string text = "stale";
  REQUIRE(shardlab::readFile(path, text));
  CHECK(text == big);
  { std::ofstream out(path, std::ios::binary | std::ios::trunc); }
  REQUIRE(shardlab::readFile(path, text));
  CHECK(text.empty());
  std::remove(path.c_str());
  CHECK_FALSE(shardlab::readFile(path, text));
}

TEST_CASE("readFile: a pipe, which has no size and cannot seek") {
  // As a shell's <(...) hands one over: reading must not depend on seeking.
  const std::string path = "support_string_hash_test.fifo";
  std::remove(path.c_str());
  REQUIRE(mkfifo(path.c_str(), 0600) == 0);
  const std::string sent(100000, 'p');
  std::thread writer([&] {
    std::ofstream out(path, std::ios::binary);
    out << sent;
  });
  std::string text;
  const bool read = shardlab::readFile(path, text);
  writer.join();
  std::remove(path.c_str());
  CHECK(read);
  CHECK(text == sent);
}
