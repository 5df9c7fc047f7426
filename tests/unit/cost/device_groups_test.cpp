// Replica-group parsing/expansion and XLA's communication classifications.
#include "shardlab/cost/device_groups.h"

#include <doctest/doctest.h>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

TEST_CASE("iota groups expand with transposes") {
  Result<ReplicaGroups> g = parseReplicaGroups("[8,2]<=[2,8]T(1,0)");
  REQUIRE(g);
  auto lists = expand(*g);
  REQUIRE(lists);
  CHECK(lists->size() == 8);
  CHECK((*lists)[0] == std::vector<int64_t>{0, 8});
  CHECK((*lists)[7] == std::vector<int64_t>{7, 15});
  CHECK(toText(*g) == "[8,2]<=[2,8]T(1,0)");
}

TEST_CASE("malformed group text is an error, not a crash") {
  CHECK_FALSE(parseReplicaGroups("[8,2]<=[3,8]"));
  CHECK_FALSE(parseReplicaGroups("[2,2]<=[4]T(1)"));
  CHECK_FALSE(parseReplicaGroups("{{0,1},{2}}"));
  CHECK_FALSE(parseReplicaGroups("{{0,1}"));
  CHECK_FALSE(parseReplicaGroups("[99999999999,9]<=[9]"));
  CHECK(parseReplicaGroups("{{0,1},{2,3}}")->group_size() == 2);
}

TEST_CASE("explicit lists canonicalise to a contiguous iota (XLA quirk)") {
  ReplicaGroups g = ReplicaGroups::fromLists({{0, 8}, {1, 9}});
  CHECK(*canonicalKey(g) == "{{0,1},{2,3}}");
}

TEST_CASE("communication type from partition histograms") {
  auto classify = [](const char *text) {
    return *classifyCommType(*parseReplicaGroups(text), 8);
  };
  CHECK(classify("[2,8]<=[16]") == CommType::SinglePartition);
  CHECK(classify("[1,16]<=[16]") == CommType::WorldLevel);
  CHECK(classify("[8,2]<=[2,8]T(1,0)") == CommType::NonWorldLevel);
  Result<CommType> mixed =
      classifyCommType(ReplicaGroups::fromLists({{0, 1}, {2, 9}}), 8);
  REQUIRE_FALSE(mixed);
  CHECK(mixed.error().message == "Non homogenous replica group");
}

TEST_CASE("collective-permute types") {
  CHECK(*classifyPermute({{0, 2}, {1, 3}}, 8) ==
        PermuteType::IntraPartitionOneWay);
  CHECK(*classifyPermute({{0, 1}, {1, 0}}, 8) ==
        PermuteType::IntraPartitionTwoWayAllMutual);
  CHECK(*classifyPermute({{0, 1}, {1, 2}, {2, 0}}, 8) ==
        PermuteType::IntraPartitionTwoWayHasNonMutual);
  CHECK(*classifyPermute({{0, 8}}, 8) == PermuteType::InterPartitionOneWay);
  CHECK(isInterPartition(*classifyPermute({{0, 8}, {8, 0}}, 8)));
}
