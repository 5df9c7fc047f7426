// GEMM dims/lookups and the S-curve model: formulas, options and errors.
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/sol_model.h"

#include <doctest/doctest.h>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

TEST_CASE("gemm dims from dimension numbers") {
  auto d = extractGemmDims({4, 32, 64}, {4, 64, 16}, {0}, {2}, {0}, {1});
  REQUIRE(d);
  CHECK(d->b == 4);
  CHECK(d->m == 32);
  CHECK(d->k == 64);
  CHECK(d->n == 16);
  CHECK_FALSE(extractGemmDims({4, 32}, {4, 32}, {}, {5}, {}, {0}));
  CHECK_FALSE(extractGemmDims({4, 32}, {16, 8}, {}, {1}, {}, {0}));
}

TEST_CASE("default GEMM table: a missing corner is answered from the points") {
  PerfTable t;
  t.metadata.source = "analytical";
  GemmEntry g;
  g.m = g.n = g.k = 256;
  g.lhs_dtype = g.rhs_dtype = g.out_dtype = "bf16";
  g.flop_per_s = 1e12;
  t.gemms.push_back(g);
  auto mi = MatmulInterpolator::create(t, GemmTableKind::Default,
                                       EstimateMode::Compatible);
  REQUIRE(mi);
  GemmQuery q{{1, 256, 256, 256}, "bf16", "bf16", "bf16"};
  auto e = mi->estimateTime(q);
  REQUIRE(e);
  CHECK(e->time_us == doctest::Approx(2.0 * 256 * 256 * 256 / 1e12 * 1e6));
  q.dims.m = 300;
  auto miss = mi->estimateTime(q);
  REQUIRE(miss); // one point: its rate, said so
  CHECK(miss->time_us == doctest::Approx(2.0 * 300 * 256 * 256 / 1e12 * 1e6));
  CHECK(miss->explanation.note.find("lacks a corner XLA's weighted average "
                                    "needs") != std::string::npos);
  CHECK(miss->explanation.neighbours.size() == 1);
}

TEST_CASE(
    "default GEMM table: a dtype it lacks is refused, naming its dtypes") {
  PerfTable t;
  t.gemms.push_back({1, 256, 256, 256, "bf16", "bf16", "bf16", {}, 1e12});
  t.gemms.push_back({1, 256, 256, 256, "f32", "f32", "f32", {}, 5e11});
  MatmulOptions options; // dtype_fallback off: a loaded table's default
  auto mi = MatmulInterpolator::create(t, options);
  REQUIRE(mi);
  GemmQuery q{{1, 256, 256, 256}, "f8e4m3fn", "f8e4m3fn", "bf16"};
  auto e = mi->estimateTime(q);
  REQUIRE_FALSE(e);
  CHECK(e.error().message ==
        "gemm table has no 'f8e4m3fnxf8e4m3fn->bf16' entries (it has: "
        "bf16xbf16->bf16, f32xf32->f32); XLA's bf16 byte-normalised fallback "
        "is off (option dtype_fallback / --dtype-fallback turns it on)");
  // XLA's rule, asked for: the bf16 point at byte-normalised dims, and the
  // problem's own flops reported.
  options.dtype_fallback = true;
  auto xla = MatmulInterpolator::create(t, options);
  q.out_dtype = "s8";
  q.lhs_dtype = q.rhs_dtype = "s8";
  q.dims = {1, 512, 512, 512};
  auto f = xla->estimateTime(q);
  REQUIRE(f);
  CHECK(f->explanation.model == "gemm-table/bf16-byte-normalised-fallback");
  CHECK(f->explanation.terms[0].name == "flops");
  CHECK(f->explanation.terms[0].value == 2.0 * 512 * 512 * 512);
}

TEST_CASE("GEMM estimates: launch floor and each neighbour once") {
  PerfTable t;
  for (int64_t m : {256, 512})
    for (int64_t k : {256, 512})
      for (int64_t n : {256, 512})
        t.gemms.push_back({1, m, n, k, "f32", "f32", "f32", {}, 4e13});
  MatmulOptions options;
  options.min_time_us = 1.0;
  auto mi = MatmulInterpolator::create(t, options);
  REQUIRE(mi);
  // hello.mlir's per-device GEMM: 4x16x16 f32, far below the smallest point.
  GemmQuery tiny{{1, 4, 16, 16}, "f32", "f32", "f32"};
  auto e = mi->estimateTime(tiny);
  REQUIRE(e);
  CHECK(e->time_us == 1.0);
  CHECK(e->explanation.note.find("kernel-launch floor") != std::string::npos);
  // Every dim clamps to 256: one corner, named once.
  CHECK(e->explanation.neighbours.size() == 1);
  CHECK(e->explanation.neighbours[0].weight == doctest::Approx(1.0));
}

TEST_CASE("S-curve ring latency by hand") {
  SolConfig c;
  c.nccl_op_launch_us = 10;
  c.nic_speed_gbps = 1; // 1e9 B/s
  c.chunk_prep_us = 1;
  c.rtt_us = 2;
  c.gpus_per_node = 2;
  c.chunk_size_bytes = 1000;
  c.header_overhead = 0;
  // 2 nodes x 2 GPUs: g = 4, per = 1000, gpn = 2; step = 1 + 1 + 2 = 4 us.
  CHECK(*ringLatencyUs(c, 4000, 2, SolCollective::AllGather, 1) ==
        doctest::Approx(4 * 3.0 / 2 + 10));
  CHECK(*ringLatencyUs(c, 4000, 2, SolCollective::AllReduce, 1) ==
        doctest::Approx(2 * 4 * 3.0 / 2 + 10));
  CHECK_FALSE(ringLatencyUs(c, 4000, 2, SolCollective::AllGather, 3));
  SUBCASE("a pipelined ring pays a hop per step, no round trip or chunk "
          "preparation") {
    c.ring_hop_us = 0.5; // step = transfer 1 + hop 0.5 = 1.5 us
    CHECK(*ringLatencyUs(c, 4000, 2, SolCollective::AllGather, 1) ==
          doctest::Approx(1.5 * 3.0 / 2 + 10));
    CHECK(*ringLatencyUs(c, 4000, 2, SolCollective::AllReduce, 1) ==
          doctest::Approx(2 * 1.5 * 3.0 / 2 + 10));
    // Send/recv is one transfer between two hosts: XLA's step, unchanged.
    CHECK(*ringLatencyUs(c, 1000, 2, SolCollective::SendRecv, 1) ==
          doctest::Approx(4 * 1.0 / 1 + 10));
  }
}

TEST_CASE("A tree all-reduce by hand, and where it beats the ring") {
  SolConfig c;
  c.nccl_op_launch_us = 10;
  c.nic_speed_gbps = 1; // 1e9 B/s
  c.chunk_prep_us = 1;
  c.rtt_us = 2;
  c.gpus_per_node = 2;
  c.chunk_size_bytes = 1000;
  c.header_overhead = 0;
  // 256 nodes of 2: 8 levels of rtt + one chunk's prep (3 us), each NIC
  // sending 4000 / 2 bytes once each way (2 us and 2 chunks' prep, 2 us).
  CHECK(treeAllReduceUs(c, 4000, 256, 2) ==
        doctest::Approx(2 * (8 * 3.0 + 2 + 2) + 10));
  // 5 nodes: 3 levels.
  CHECK(treeAllReduceUs(c, 4000, 5, 2) ==
        doctest::Approx(2 * (3 * 3.0 + 2 + 2) + 10));
  // The ring over 512 GPUs: 2 x 511 / 2 steps of (transfer 7.8 B + 1 chunk
  // prep + rtt) = 1,533 us and more; off by default, the ring stays.
  const double ring = *ringLatencyUs(c, 4000, 256, SolCollective::AllReduce, 1);
  CHECK(ring > 1533);
  bool tree = true;
  CHECK(allReduceUs(c, ring, 4000, 256, 2, &tree) == ring);
  CHECK_FALSE(tree);
  c.tree_all_reduce = true;
  CHECK(allReduceUs(c, ring, 4000, 256, 2, &tree) ==
        doctest::Approx(treeAllReduceUs(c, 4000, 256, 2)));
  CHECK(tree);
  // Large buffers on few nodes: the ring's 2 (g - 1) / g of the buffer
  // beats the tree's twice the buffer, and is kept.
  const double big_ring =
      *ringLatencyUs(c, 4000000, 2, SolCollective::AllReduce, 1);
  CHECK(allReduceUs(c, big_ring, 4000000, 2, 2, &tree) == big_ring);
  CHECK_FALSE(tree);
  // Through the estimator: the model says which ran.
  DcnQuery q;
  q.op = CollectiveOp::AllReduce;
  q.groups = *parseReplicaGroups("[1,512]<=[512]");
  q.msg_bytes = 4000;
  auto e = dcnCollectiveEstimate(c, 1e12, q);
  REQUIRE(e);
  CHECK(e->explanation.model.find("tree all-reduce") != std::string::npos);
  c.tree_all_reduce = false;
  e = dcnCollectiveEstimate(c, 1e12, q);
  REQUIRE(e);
  CHECK(e->explanation.model == "s-curve/ring all-reduce");
}

TEST_CASE("S-curve options: > 0 overrides, integers must be integers") {
  SolConfig base = solPlatformDefaults("NVIDIA H100 80GB HBM3");
  CHECK(base.nic_speed_gbps == doctest::Approx(25.002));
  auto c = applySolOptions(base, "nic_speed_gbps=12.5, gpus_per_node=4,"
                                 "rtt_us=3,chunk_prep_us=-1");
  REQUIRE(c);
  CHECK(c->nic_speed_gbps == 12.5);
  CHECK(c->gpus_per_node == 4);
  CHECK(c->rtt_us == 3);
  CHECK(c->chunk_prep_us == base.chunk_prep_us); // <= 0: XLA's default
  CHECK_FALSE(applySolOptions(base, "nic_speed=3"));
  // A value that cannot be read is an error, never silently the default.
  auto fraction = applySolOptions(base, "rtt_us=2.5");
  REQUIRE_FALSE(fraction);
  CHECK(fraction.error().message.find("not an integer") != std::string::npos);
  CHECK_FALSE(applySolOptions(base, "nccl_op_launch_us"));
  CHECK_FALSE(applySolOptions(base, "nic_speed_gbps=fast"));
  auto hop = applySolOptions(base, "ring_hop_us=2.7");
  REQUIRE(hop);
  CHECK(hop->ring_hop_us == 2.7);
  CHECK(base.ring_hop_us == 0); // XLA's ring by default
  auto tree = applySolOptions(base, "tree_all_reduce=1");
  REQUIRE(tree);
  CHECK(tree->tree_all_reduce);
  CHECK_FALSE(base.tree_all_reduce); // XLA's ring only by default
  CHECK_FALSE(applySolOptions(base, "tree_all_reduce=yes"));
  // A preset's S-curve takes the tree; 0 turns it off.
  SolConfig preset = solDefaultsFor(*findHardwarePreset("h100"));
  CHECK(preset.tree_all_reduce);
  auto off = applySolOptions(preset, "tree_all_reduce=0");
  REQUIRE(off);
  CHECK_FALSE(off->tree_all_reduce);
}

TEST_CASE("unknown devices get the <unknown> defaults") {
  SolConfig h200 = solPlatformDefaults("NVIDIA H200");
  SolConfig b200 = solPlatformDefaults("NVIDIA B200");
  CHECK(h200.nic_speed_gbps == b200.nic_speed_gbps);
  CHECK(h200.chunk_prep_us != b200.chunk_prep_us);
}

TEST_CASE("DCN dispatch refuses single-partition collectives") {
  SolConfig c = solPlatformDefaults("");
  DcnQuery q;
  q.op = CollectiveOp::AllGather;
  q.groups = *parseReplicaGroups("[2,8]<=[16]");
  q.msg_bytes = 1 << 20;
  CHECK_FALSE(dcnCollectiveEstimate(c, 1e12, q));
  q.groups = *parseReplicaGroups("[1,16]<=[16]");
  auto e = dcnCollectiveEstimate(c, 1e12, q);
  REQUIRE(e);
  CHECK(e->explanation.model == "s-curve/ring all-gather");
}

TEST_CASE("node cost precedence") {
  NodeCostInput in;
  in.gemm_us = 7;
  in.wrapped_cost = 100;
  CHECK(nodeCost(in).time_us == 7);
  in.is_async_collective = true;
  CHECK(nodeCost(in).time_us == 1);
  in.latency_metadata_ns = 2500;
  CHECK(nodeCost(in).time_us == 2.5);
  CHECK(nodeCost(NodeCostInput{{}, false, {}, {}, 100}).time_us == 1);
}

TEST_CASE("DCN hosts: a group spans the nodes its device ids fall on") {
  // 64 GPUs on 8 nodes of 8; two data-parallel groups of 32, each taking
  // 4 GPUs of every node. XLA's estimator counts 32 hosts; the group spans
  // 8, and the two groups share each node's NICs (2 communicators).
  SolConfig c = solPlatformDefaults("NVIDIA H100 80GB HBM3");
  DcnQuery q;
  q.op = CollectiveOp::AllReduce;
  q.groups = *parseReplicaGroups("[2,32]<=[8,2,4]T(1,0,2)");
  q.msg_bytes = 256 << 20;
  auto term = [](const Estimate &e, const std::string &name) {
    for (const auto &t : e.explanation.terms)
      if (t.name == name)
        return t.value;
    return -1.0;
  };
  auto xla = dcnCollectiveEstimate(c, 1e12, q);
  REQUIRE(xla);
  CHECK(term(*xla, "hosts") == 32);
  q.hosts_from_device_ids = true;
  auto real = dcnCollectiveEstimate(c, 1e12, q);
  REQUIRE(real);
  CHECK(term(*real, "hosts") == 8);
  CHECK(term(*real, "communicators") == 2);
  CHECK(term(*real, "network") ==
        doctest::Approx(
            *ringLatencyUs(c, q.msg_bytes, 8, SolCollective::AllReduce, 2)));
  CHECK(term(*real, "network") < term(*xla, "network"));
}

TEST_CASE("DCN hosts: groups of whole nodes each have the nodes' NICs") {
  // 1,024 GPUs on 128 nodes of 8, in 16 groups of 64 consecutive devices
  // (a pipeline's data axis: each stage's 8 nodes). XLA counts 16
  // communicators sharing every node, and 8 GPUs / 16 is no whole number:
  // its model fails. Each group has its 8 nodes to itself: 1 communicator,
  // the ring of one group of 64 alone on 8 nodes.
  SolConfig c = solPlatformDefaults("NVIDIA H100 80GB HBM3");
  DcnQuery q;
  q.op = CollectiveOp::AllReduce;
  q.groups = *parseReplicaGroups("[16,64]<=[1024]");
  q.msg_bytes = 256 << 20;
  CHECK_FALSE(dcnCollectiveEstimate(c, 1e12, q));
  q.hosts_from_device_ids = true;
  auto blocks = dcnCollectiveEstimate(c, 1e12, q);
  REQUIRE(blocks);
  DcnQuery one = q;
  one.groups = *parseReplicaGroups("[1,64]<=[64]");
  auto alone = dcnCollectiveEstimate(c, 1e12, one);
  REQUIRE(alone);
  CHECK(blocks->time_us == alone->time_us);
  CHECK(blocks->time_us ==
        doctest::Approx(
            *ringLatencyUs(c, q.msg_bytes, 8, SolCollective::AllReduce, 1) +
            1e6 * double(float(q.hbm_bytes_accessed) / 1e12f)));
  // Two such groups on 16 nodes: XLA halves each group's bandwidth (2
  // communicators a node); each has its own 8 nodes.
  q.groups = *parseReplicaGroups("[2,64]<=[128]");
  auto two = dcnCollectiveEstimate(c, 1e12, q);
  REQUIRE(two);
  CHECK(two->time_us == alone->time_us);
  q.hosts_from_device_ids = false;
  auto xla = dcnCollectiveEstimate(c, 1e12, q);
  REQUIRE(xla);
  CHECK(xla->time_us > alone->time_us);
}

TEST_CASE("S-curve defaults follow the preset's NIC") {
  const HardwarePreset h100 = *findHardwarePreset("h100");
  const HardwarePreset a100 = *findHardwarePreset("a100");
  const SolConfig xla = solPlatformDefaults(h100.device_name);
  const SolConfig ours = solDefaultsFor(h100);
  // h100 keeps XLA's numbers exactly.
  CHECK(ours.nic_speed_gbps == xla.nic_speed_gbps);
  CHECK(ours.rtt_us == xla.rtt_us);
  CHECK(ours.chunk_prep_us == xla.chunk_prep_us);
  // An A100 DGX has 200 Gb/s per GPU, half an H100 DGX's 400: half the
  // bandwidth, not the <unknown> entry's (B200's) double.
  const SolConfig a = solDefaultsFor(a100);
  CHECK(a.nic_speed_gbps == doctest::Approx(xla.nic_speed_gbps / 2));
  CHECK(solPlatformDefaults(a100.device_name).nic_speed_gbps ==
        doctest::Approx(2 * xla.nic_speed_gbps));
  CHECK(a.rtt_us == xla.rtt_us);
}
