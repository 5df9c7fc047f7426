// Replica-group parsing/expansion and XLA's communication classifications.
#include "shardlab/cost/device_groups.h"

#include <doctest/doctest.h>

using namespace shardlab::cost;

TEST_CASE("iota groups expand with transposes") {
  Result<ReplicaGroups> g = ParseReplicaGroups("[8,2]<=[2,8]T(1,0)");
  REQUIRE(g);
  auto lists = Expand(*g);
  REQUIRE(lists);
  CHECK(lists->size() == 8);
  CHECK((*lists)[0] == std::vector<int64_t>{0, 8});
  CHECK((*lists)[7] == std::vector<int64_t>{7, 15});
  CHECK(ToString(*g) == "[8,2]<=[2,8]T(1,0)");
}

TEST_CASE("malformed group text is an error, not a crash") {
  CHECK_FALSE(ParseReplicaGroups("[8,2]<=[3,8]"));
  CHECK_FALSE(ParseReplicaGroups("[2,2]<=[4]T(1)"));
  CHECK_FALSE(ParseReplicaGroups("{{0,1},{2}}"));
  CHECK_FALSE(ParseReplicaGroups("{{0,1}"));
  CHECK_FALSE(ParseReplicaGroups("[99999999999,9]<=[9]"));
  CHECK(ParseReplicaGroups("{{0,1},{2,3}}")->group_size() == 2);
}

TEST_CASE("explicit lists canonicalise to a contiguous iota (XLA quirk)") {
  ReplicaGroups g = ReplicaGroups::FromLists({{0, 8}, {1, 9}});
  CHECK(*CanonicalKey(g) == "{{0,1},{2,3}}");
}

TEST_CASE("communication type from partition histograms") {
  auto classify = [](const char *text) {
    return *ClassifyCommType(*ParseReplicaGroups(text), 8);
  };
  CHECK(classify("[2,8]<=[16]") == CommType::kSinglePartition);
  CHECK(classify("[1,16]<=[16]") == CommType::kWorldLevel);
  CHECK(classify("[8,2]<=[2,8]T(1,0)") == CommType::kNonWorldLevel);
  Result<CommType> mixed =
      ClassifyCommType(ReplicaGroups::FromLists({{0, 1}, {2, 9}}), 8);
  REQUIRE_FALSE(mixed);
  CHECK(mixed.error().message == "Non homogenous replica group");
}

TEST_CASE("collective-permute types") {
  CHECK(*ClassifyPermute({{0, 2}, {1, 3}}, 8) ==
        PermuteType::kIntraPartitionOneWay);
  CHECK(*ClassifyPermute({{0, 1}, {1, 0}}, 8) ==
        PermuteType::kIntraPartitionTwoWayAllMutual);
  CHECK(*ClassifyPermute({{0, 1}, {1, 2}, {2, 0}}, 8) ==
        PermuteType::kIntraPartitionTwoWayHasNonMutual);
  CHECK(*ClassifyPermute({{0, 8}}, 8) == PermuteType::kInterPartitionOneWay);
  CHECK(IsInterPartition(*ClassifyPermute({{0, 8}, {8, 0}}, 8)));
}
