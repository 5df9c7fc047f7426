// HashIndex: the attribute arena's index of uniqued attributes by hash.
#include "shardlab/support/hash_index.h"

#include <doctest/doctest.h>

#include <vector>

using shardlab::HashIndex;

TEST_CASE("HashIndex: finds what was filed, only under its own hash") {
  HashIndex<const int *> index;
  std::vector<int> values(1000);
  for (int i = 0; i < 1000; ++i) {
    values[i] = i;
    index.insert(static_cast<size_t>(i) * 7919, &values[i]);
  }
  CHECK(index.size() == 1000);
  for (int i = 0; i < 1000; ++i) {
    const int *found = index.find(static_cast<size_t>(i) * 7919,
                                  [](const int *) { return true; });
    REQUIRE(found != nullptr);
    CHECK(*found == i);
  }
  // A hash nothing was filed under finds nothing, whatever matches says.
  CHECK(index.find(1, [](const int *) { return true; }) == nullptr);
}

TEST_CASE("HashIndex: several values under one hash, told apart by matches") {
  HashIndex<const int *> index;
  CHECK(index.find(5, [](const int *) { return true; }) == nullptr);
  std::vector<int> values = {10, 20, 30, 40};
  for (const int &value : values)
    index.insert(5, &value);
  // Values whose hashes collide in the slots but differ keep out of the way.
  int other = 99;
  index.insert(5 + (size_t{1} << 40), &other);
  for (int wanted : {10, 20, 30, 40}) {
    const int *found =
        index.find(5, [&](const int *value) { return *value == wanted; });
    REQUIRE(found != nullptr);
    CHECK(*found == wanted);
  }
  CHECK(index.find(5, [](const int *value) { return *value == 99; }) ==
        nullptr);
  // The first filed comes first when several match.
  CHECK(*index.find(5, [](const int *value) { return *value >= 20; }) == 20);
}

TEST_CASE("HashIndex: growing keeps every value findable") {
  HashIndex<const int *> index;
  std::vector<int> values(5000);
  for (int i = 0; i < 5000; ++i) {
    values[i] = i;
    // Few distinct hashes: long runs of equal hashes across growths.
    index.insert(static_cast<size_t>(i % 37), &values[i]);
  }
  for (int i = 0; i < 5000; i += 97) {
    const int *found = index.find(static_cast<size_t>(i % 37),
                                  [&](const int *v) { return *v == i; });
    REQUIRE(found != nullptr);
    CHECK(*found == i);
  }
}
