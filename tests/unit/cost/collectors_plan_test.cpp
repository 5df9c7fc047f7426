// Collectors: sweep enumeration, group sets, dry-run text, metadata and
// tables written through the cost library's writer and read by its loader.
#include "shardlab/collectors/collective_plan.h"
#include "shardlab/collectors/gemm_plan.h"
#include "shardlab/collectors/metadata.h"
#include "shardlab/collectors/resume.h"
#include "shardlab/collectors/stats.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <set>

using namespace shardlab::collectors;
namespace cost = shardlab::cost;

namespace {

Topology Node8() { return Topology{8, 8, 8}; }

size_t Count(const CollectivePlan &p, CollOp op) {
  size_t n = 0;
  for (const CollectivePoint &pt : p.points)
    n += pt.op == op;
  return n;
}

RunEnvironment FakeEnv() {
  RunEnvironment env;
  env.device_name = "Test GPU";
  env.sm_major = 9, env.sm_minor = 0;
  env.gpu_count = 8, env.gpus_per_node = 8, env.partition_size = 8;
  env.cuda_runtime = 13000, env.cuda_driver = 13000, env.nccl = 22809;
  env.cublaslt = 130100;
  env.clocks_mhz["sm"] = 1980;
  env.env = {"NCCL_ALGO=Ring"};
  return env;
}

std::string TempPath(const char *name) {
  return std::string("/tmp/shardlab_collectors_") + name + ".json";
}

} // namespace

TEST_CASE("collectors: size sweep is log2 from 1 KiB to 2 GiB") {
  std::vector<int64_t> s = sizeSweep(1024, int64_t{2} << 30, 2);
  CHECK(s.size() == 22);
  CHECK(s.front() == 1024);
  CHECK(s.back() == int64_t{2} << 30);
  CHECK(sizeSweep(1000, 5000, 2) == std::vector<int64_t>{1000, 2000, 4000});
  CHECK(sizeSweep(10, 13, 1.1) == std::vector<int64_t>{10, 11, 12});
  CHECK(sizeSweep(1, 3, 1.2) == std::vector<int64_t>{1, 2, 3});
  CHECK(sizeSweep(5, 1, 2).empty());
}

TEST_CASE("collectors: default groups are XLA's, plus rails on many nodes") {
  CHECK(defaultGroupSpecs(Node8(), {2, 4, 8}) ==
        std::vector<std::string>{"[4,2]<=[8]", "[2,4]<=[8]", "[1,8]<=[8]"});
  CHECK(defaultGroupSpecs(Topology{4, 4, 4}, {2, 4, 8}) ==
        std::vector<std::string>{"[2,2]<=[4]", "[1,4]<=[4]"});
  CHECK(defaultGroupSpecs(Topology{16, 8, 8}, {2, 4, 8}) ==
        std::vector<std::string>{"[8,2]<=[16]", "[4,4]<=[16]", "[2,8]<=[16]",
                                 "[1,16]<=[16]", "[8,2]<=[2,8]T(1,0)"});
  CHECK(defaultGroupSpecs(Topology{1, 1, 1}, {2, 4, 8}).empty());
}

TEST_CASE("collectors: group specs are checked and deduplicated") {
  Result<std::vector<GroupSet>> sets =
      parseGroupSets(Node8(), {"[4,2]<=[8]", "{{0,1},{2,3},{4,5},{6,7}}",
                               "[4,2]<=[2,4]T(1,0)"});
  REQUIRE(sets);
  REQUIRE(sets->size() == 2); // the explicit list repeats [4,2]<=[8]
  CHECK((*sets)[1].lists[0] == std::vector<int64_t>{0, 4});
  CHECK(parseGroupSets(Node8(), {"[1,16]<=[16]"})
            .error()
            .message.find("outside the job's 8 ranks") != std::string::npos);
  CHECK(parseGroupSets(Node8(), {"{{0,1},{1,2}}"})
            .error()
            .message.find("rank 1 appears twice") != std::string::npos);
  CHECK(parseGroupSets(Node8(), {"{{0},{1}}"})
            .error()
            .message.find("at least 2 ranks") != std::string::npos);
  CHECK_FALSE(parseGroupSets(Node8(), {"[4,2]<="}));
}

TEST_CASE("collectors: permute patterns and their XLA classification") {
  CHECK(permutePairs(PermutePattern::OneWay, 4) ==
        cost::SourceTargetPairs{{0, 2}, {1, 3}});
  CHECK(permutePairs(PermutePattern::Ring, 3) ==
        cost::SourceTargetPairs{{0, 1}, {1, 2}, {2, 0}});
  CHECK(permutePairs(PermutePattern::Mutual, 4) ==
        cost::SourceTargetPairs{{0, 1}, {1, 0}, {2, 3}, {3, 2}});
  CollectiveOptions o;
  o.ops = {CollOp::CollectivePermute};
  o.min_bytes = o.max_bytes = 4096;
  Result<CollectivePlan> p = planCollectives(o, Node8());
  REQUIRE(p);
  std::set<std::string> kinds;
  for (const CollectivePoint &pt : p->points)
    kinds.insert(std::string(cost::toText(*pt.permute_type)) + "/" +
                 std::to_string(p->group_sets[pt.group_set].group_size));
  // Size 2: ring == mutual, listed once; sizes 4 and 8: all three.
  CHECK(kinds ==
        std::set<std::string>{
            "intra_partition_one_way/2", "intra_partition_two_way_all_mutual/2",
            "intra_partition_one_way/4",
            "intra_partition_two_way_has_non_mutual/4",
            "intra_partition_two_way_all_mutual/4", "intra_partition_one_way/8",
            "intra_partition_two_way_has_non_mutual/8",
            "intra_partition_two_way_all_mutual/8"});
}

TEST_CASE("collectors: the default 8-GPU plan") {
  Result<CollectivePlan> p = planCollectives(CollectiveOptions{}, Node8());
  REQUIRE(p);
  CHECK(p->group_sets.size() == 3);
  CHECK(Count(*p, CollOp::AllReduce) == 66);
  CHECK(Count(*p, CollOp::AllGather) == 66);
  CHECK(Count(*p, CollOp::CollectivePermute) == 8 * 22);
  CHECK(p->points.size() == 4 * 66 + 8 * 22);
  for (const CollectivePoint &pt : p->points)
    if (pt.comm_type)
      CHECK(*pt.comm_type == cost::CommType::SinglePartition);
  const auto [send, recv] = maxBufferBytes(*p);
  CHECK(send == int64_t{2} << 30);
  CHECK(recv == int64_t{2} << 30);
  const std::string text = formatCollectivePlan(*p, CollectiveOptions{});
  CHECK(text.find("all-reduce f32 1024 [4,2]<=[8] single_partition\n") !=
        std::string::npos);
  CHECK(text.find("# 440 points") != std::string::npos);
}

TEST_CASE("collectors: two nodes add world and rail groups") {
  CollectiveOptions o;
  o.ops = {CollOp::AllReduce};
  o.min_bytes = o.max_bytes = 1 << 20;
  Result<CollectivePlan> p = planCollectives(o, Topology{16, 8, 8});
  REQUIRE(p);
  std::vector<std::string> kinds;
  for (const CollectivePoint &pt : p->points)
    kinds.push_back(std::string(cost::toText(*pt.comm_type)));
  CHECK(kinds == std::vector<std::string>{
                     "single_partition", "single_partition", "single_partition",
                     "world_level", "non_world_level"});
  cost::CollectiveEntry e = entryFor(*p, p->points.back());
  CHECK(e.nodes == 2);
  CHECK(e.num_groups == 8);
  CHECK(e.devices_per_group == 2);
}

TEST_CASE("collectors: one GPU cannot run a collective sweep") {
  Result<CollectivePlan> p = planCollectives(CollectiveOptions{}, {1, 1, 1});
  REQUIRE_FALSE(p);
  CHECK(p.error().message.find("no device groups fit a job of 1 GPU") == 0);
}

TEST_CASE("collectors: small gathers that round to nothing are noted") {
  CollectiveOptions o;
  o.ops = {CollOp::AllGather};
  o.min_bytes = 16, o.max_bytes = 64;
  Result<CollectivePlan> p = planCollectives(o, Node8());
  REQUIRE(p);
  CHECK_FALSE(p->notes.empty());
  for (const CollectivePoint &pt : p->points)
    CHECK(pt.counts.bytes > 0);
}

TEST_CASE("collectors: gemm plan and helpers") {
  Result<GemmPlan> p = planGemms(GemmOptions{}, 90);
  REQUIRE(p);
  CHECK(p->points.size() == 750);
  CHECK(p->dtypes[1].compute == "CUBLAS_COMPUTE_32F_FAST_TF32");
  CHECK(p->points[0].key == "bf16xbf16->bf16|1,256,256,256");
  GemmOptions fp8;
  fp8.dtypes = {"fp8"};
  fp8.batch = {1};
  Result<GemmPlan> old = planGemms(fp8, 80);
  REQUIRE(old);
  CHECK(old->points.empty());
  CHECK(old->notes.at(0).find("needs sm_89+") != std::string::npos);
  Result<GemmPlan> h = planGemms(fp8, 90);
  CHECK(h->points.size() == 125);
  CHECK(cost::gemmDtypeKey(entryFor(*h, h->points[0])) ==
        "f8e4m3fnxf8e4m3fn->bf16");
  CHECK(gemmFootprintBytes(*p, p->points[0]) == 3 * 256 * 256 * 2);
  CHECK(rotatingSets(100, 1000, 64) == 10);
  CHECK(rotatingSets(100, 1001, 64) == 11);
  CHECK(rotatingSets(100, 100000, 64) == 64);
  CHECK(rotatingSets(5000, 1000, 64) == 1);
  CHECK(launchesPerSample(2.0, 100.0, 1000) == 50);
  CHECK(launchesPerSample(500.0, 100.0, 1000) == 1);
  CHECK(launchesPerSample(0.001, 100.0, 1000) == 1000);
  const std::string text = formatGemmPlan(*p, GemmOptions{});
  CHECK(text.find("1 256 256 256 bf16\n") != std::string::npos);
  CHECK(text.find("# 750 points") != std::string::npos);
}

TEST_CASE("collectors: version strings and metadata") {
  CHECK(smVersion(9, 0) == "sm_90");
  CHECK(smVersion(10, 0) == "sm_100");
  CHECK(cudaVersionString(13000) == "13.0");
  CHECK(cudaVersionString(12080) == "12.8");
  CHECK(ncclVersionString(22809) == "2.28.9");
  CHECK(ncclVersionString(2708) == "2.7.8");
  CHECK(cublasVersionString(130100) == "13.1.0");
  CHECK(isoDateUtc(0) == "1970-01-01T00:00:00Z");
  CHECK(selectEnv({"PATH=/bin", "NCCL_PROTO=Simple", "HOME=/root",
                   "CUDA_VISIBLE_DEVICES=0,1", "NCCL_ALGO=Ring"}) ==
        std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0,1", "NCCL_ALGO=Ring",
                                 "NCCL_PROTO=Simple"});
  cost::TableMetadata m =
      buildMetadata(FakeEnv(), "shardlab-collect-collectives", {"-n", "5"},
                    "settings", 86400);
  CHECK(m.source == "measured");
  CHECK(m.sm_version == "sm_90");
  CHECK(m.topology == "1 node x 8 GPUs");
  CHECK(m.software.at("nccl") == "2.28.9");
  CHECK(m.software.at("cublaslt") == "13.1.0");
  CHECK(m.software.at("env:NCCL_ALGO") == "Ring");
  CHECK(m.date == "1970-01-02T00:00:00Z");
  CHECK(m.collector_version == kCollectorVersion);
}

namespace {

// A table as the collective runner builds it (timings are test data).
cost::PerfTable CollectiveTable(const CollectivePlan &plan) {
  cost::PerfTable t;
  t.metadata = buildMetadata(FakeEnv(), "shardlab-collect-collectives", {},
                             "settings", 0);
  for (const CollectivePoint &p : plan.points) {
    cost::CollectiveEntry e = entryFor(plan, p);
    e.time = summarize({10.0, 11.0, 12.0});
    e.throughput_bytes_per_s = e.bytes / (e.time->median_us * 1e-6);
    t.collectives.push_back(e);
  }
  return t;
}

} // namespace

TEST_CASE("collectors: written tables load and resume skips their points") {
  CollectiveOptions o;
  o.min_bytes = 1024, o.max_bytes = 4096;
  Result<CollectivePlan> plan = planCollectives(o, Node8());
  REQUIRE(plan);
  const std::string path = TempPath("coll");
  std::remove(path.c_str());
  cost::PerfTable t = CollectiveTable(*plan);
  CheckpointWriter w(path, 5.0);
  CHECK(*w.maybe(t, 100.0, false));
  CHECK_FALSE(*w.maybe(t, 101.0, false)); // throttled
  CHECK(*w.maybe(t, 101.0, true));
  Result<cost::PerfTable> loaded = cost::loadPerfTable(path);
  REQUIRE(loaded);
  CHECK(loaded->collectives.size() == plan->points.size());
  CHECK(loaded->metadata.software.at("nccl") == "2.28.9");
  Result<OutputTable> out = openOutputTable(path, t.metadata, false);
  REQUIRE(out);
  CHECK(out->resumed);
  for (const CollectivePoint &p : plan->points)
    CHECK(out->done.count(p.key) == 1);
  std::remove(path.c_str());
}

TEST_CASE("collectors: resume refuses other devices and broken files") {
  const std::string path = TempPath("mismatch");
  cost::PerfTable t;
  t.metadata = buildMetadata(FakeEnv(), "shardlab-collect-gemm", {}, "s", 0);
  REQUIRE(cost::writePerfTable(t, path));
  cost::TableMetadata other = t.metadata;
  other.device_name = "Other GPU";
  CHECK(openOutputTable(path, other, false)
            .error()
            .message.find("it was measured on 'Test GPU'") !=
        std::string::npos);
  other = t.metadata;
  other.description = "t";
  CHECK_FALSE(openOutputTable(path, other, false));
  CHECK(openOutputTable(path, other, true)); // --overwrite
  std::ofstream(path) << "{ not json";
  CHECK(openOutputTable(path, t.metadata, false)
            .error()
            .message.find("cannot resume") == 0);
  std::remove(path.c_str());
  Result<OutputTable> fresh = openOutputTable(path, t.metadata, false);
  REQUIRE(fresh);
  CHECK_FALSE(fresh->resumed);
}

TEST_CASE("collectors: gemm entries round-trip through the loader") {
  GemmOptions o;
  o.batch = {1}, o.m = {256, 512}, o.n = {256}, o.k = {256};
  Result<GemmPlan> plan = planGemms(o, 90);
  REQUIRE(plan);
  cost::PerfTable t;
  t.metadata = buildMetadata(FakeEnv(), "shardlab-collect-gemm", {}, "s", 0);
  for (const GemmPoint &p : plan->points) {
    cost::GemmEntry e = entryFor(*plan, p);
    e.time = summarize({20.0, 21.0});
    e.flop_per_s = gemmFlops(e.b, e.m, e.n, e.k) / (e.time->median_us * 1e-6);
    t.gemms.push_back(e);
  }
  Result<cost::PerfTable> back =
      cost::parsePerfTable(cost::serializePerfTable(t));
  REQUIRE(back);
  CHECK(back->gemms.size() == 4);
  CHECK(cost::checkFullGemmGrid(*back, "f32xf32->f32"));
  std::set<std::string> keys;
  for (const cost::GemmEntry &e : back->gemms)
    keys.insert(gemmEntryKey(e));
  for (const GemmPoint &p : plan->points)
    CHECK(keys.count(p.key) == 1);
}
