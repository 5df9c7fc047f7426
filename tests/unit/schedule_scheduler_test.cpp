// The latency-hiding scheduler on hand-built graphs: XLA's scheduler tests
// (latency_hiding_scheduler_test.cc) reproduced with XLA's approximate
// costs (1 / 1000 / 5000, plain edges 1, async pairs 5000), limits, the
// shared-device rule, memory tracking and invariants over random graphs.
#include "shardlab/schedule/scheduler.h"

#include "result_text.h"
#include "schedule/shared_devices.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

using namespace shardlab::schedule;
using shardlab::Result;

namespace {

// Builds graphs the way the XLA tests spell HLO: ops in original order,
// operands by name; `ag`/`ar` add a start/done pair named name-start/-done.
struct Builder {
  Graph g;
  std::map<std::string, int64_t> ids;
  double plain = 1, async = 5000;

  int64_t op(const std::string &name, double cost,
             std::vector<std::string> operands = {}, int64_t bytes = 0) {
    Node n;
    n.name = name;
    n.cost_us = cost;
    n.output_bytes = bytes;
    const int64_t id = g.addNode(n);
    ids[name] = id;
    for (const std::string &o : operands)
      g.addEdge(ids.at(o), id, plain);
    return id;
  }
  void pair(const std::string &name, const std::string &operand,
            CollectiveKind kind = CollectiveKind::AllGather,
            std::vector<std::vector<int64_t>> groups = {{0, 1}},
            double latency = -1, int64_t bytes = 0) {
    Node start;
    start.name = name + "-start";
    start.kind = NodeKind::AsyncStart;
    start.cost_us = 1;
    start.collective = kind;
    start.device_groups =
        std::make_shared<const std::vector<std::vector<int64_t>>>(groups);
    start.output_bytes = bytes;
    Node done = start;
    done.name = name + "-done";
    done.kind = NodeKind::AsyncDone;
    done.output_bytes = 0;
    const int64_t s = g.addNode(start), d = g.addNode(done);
    ids[start.name] = s;
    ids[done.name] = d;
    ids[name] = d;
    g.addEdge(ids.at(operand), s, plain);
    g.linkAsyncPair(s, d, latency < 0 ? async : latency);
  }
  Schedule run(SchedulerConfig config = {}) {
    Result<Schedule> r = scheduleGraph(g, config);
    REQUIRE_MESSAGE(r.ok(), errorOf(r));
    return *r;
  }
  int64_t pos(const Schedule &s, const std::string &name) const {
    const int64_t id = ids.at(name);
    return std::find(s.order.begin(), s.order.end(), id) - s.order.begin();
  }
};

// The common prefix of XLA's all-gather tests: four parameters and two
// convolutions (5000 each) on them.
void convolutions(Builder &b) {
  b.op("replica_id", 1);
  b.op("convert", 1, {"replica_id"});
  b.op("color_operand", 1, {"convert"});
  for (const char *p : {"p0", "p1", "p2", "p3"})
    b.op(p, 1);
}

} // namespace

TEST_CASE("XLA AllGatherAsyncSimple: the done lands right before its user") {
  Builder b;
  convolutions(b);
  b.pair("ag0", "color_operand");
  b.op("c0", 5000, {"p0", "p1"});
  b.op("c1", 5000, {"p0", "p1"});
  b.op("a2", 1, {"ag0-done", "c0"});
  const Schedule s = b.run();
  CHECK(b.pos(s, "ag0-done") == b.pos(s, "a2") - 1);
  CHECK(b.pos(s, "ag0-start") < b.pos(s, "c0"));
}

TEST_CASE("XLA AllGatherAsyncBalance: each convolution in one window") {
  Builder b;
  convolutions(b);
  b.pair("ag0", "color_operand");
  b.op("ag0-bc", 1, {"ag0-done"});
  b.pair("ag1", "color_operand");
  b.op("ag1-bc", 1, {"ag1-done"});
  b.op("c0", 5000, {"p0", "p1"});
  b.op("c1", 5000, {"p0", "p1"});
  b.op("a2", 1, {"c1", "c0"});
  b.op("t", 1, {"a2", "ag1-bc", "ag0-bc"});
  const Schedule s = b.run();
  // Either convolution may pair with either all-gather; each window holds
  // exactly one convolution.
  for (const char *ag : {"ag0", "ag1"}) {
    const int64_t st = b.pos(s, std::string(ag) + "-start");
    const int64_t dn = b.pos(s, std::string(ag) + "-done");
    int inside = 0;
    for (const char *c : {"c0", "c1"})
      inside += b.pos(s, c) > st && b.pos(s, c) < dn;
    CHECK_MESSAGE(inside == 1, ag);
  }
  CHECK(s.exposed_comm_us == doctest::Approx(0));
}

TEST_CASE("XLA AllGatherAsyncReshaped: done, bitcast, user in a row") {
  Builder b;
  convolutions(b);
  b.pair("ag0", "color_operand");
  b.op("ag0-bc", 1, {"ag0-done"});
  b.op("c0", 5000, {"p0", "p1"});
  b.op("c1", 5000, {"p0", "p1"});
  b.op("a2", 1, {"ag0-bc", "c0"});
  const Schedule s = b.run();
  CHECK(b.pos(s, "ag0-done") == b.pos(s, "a2") - 2);
  CHECK(b.pos(s, "ag0-bc") == b.pos(s, "a2") - 1);
}

TEST_CASE("XLA AllGatherAsyncOverlapped: one all-gather in flight at once") {
  for (bool consumed_by_conv : {false, true}) {
    Builder b;
    b.op("replica_id", 1);
    b.op("c19", 1);
    b.op("add1", 1, {"replica_id", "c19"});
    b.op("convert", 1, {"replica_id"});
    b.op("convert1", 1, {"add1"});
    b.op("color1", 1, {"convert"});
    b.op("color2", 1, {"convert1"});
    b.pair("ag0", "color1");
    b.pair("ag1", "color2");
    b.op("p0", 1);
    b.op("p1", 1);
    if (consumed_by_conv) { // AllGatherAsyncOverlapped2
      b.op("c0", 5000, {"ag0-done", "ag1-done"});
      b.op("c1", 5000, {"p0", "p1"});
      b.op("a2", 1, {"c0", "c1"});
    } else {
      b.op("c0", 5000, {"p0", "p1"});
      b.op("c1", 5000, {"p0", "p1"});
      b.op("a2", 1, {"ag0-done", "ag1-done"});
    }
    const Schedule s = b.run();
    const bool ag0_first = b.pos(s, "ag0-start") < b.pos(s, "ag1-start");
    const std::string first = ag0_first ? "ag0" : "ag1";
    const std::string second = ag0_first ? "ag1" : "ag0";
    CHECK(b.pos(s, first + "-done") < b.pos(s, second + "-start"));
    CHECK(b.pos(s, "ag0-start") < b.pos(s, "ag0-done"));
    CHECK(b.pos(s, "ag1-start") < b.pos(s, "ag1-done"));
  }
}

TEST_CASE("Collectives: per-kind and stream limits, shared-device rule") {
  auto build = [](CollectiveKind second,
                  std::vector<std::vector<int64_t>> groups) {
    Builder b;
    b.plain = 0;
    b.op("x", 1);
    b.pair("c0", "x", CollectiveKind::AllGather, {{0, 1}, {2, 3}}, 100);
    b.pair("c1", "x", second, groups, 100);
    b.op("big", 500, {"x"});
    b.op("y", 1, {"c0", "c1", "big"});
    return b;
  };
  auto overlapped = [](Builder &b, const Schedule &s) {
    return b.pos(s, "c1-start") < b.pos(s, "c0-done") &&
           b.pos(s, "c0-start") < b.pos(s, "c1-done");
  };
  SchedulerConfig two;
  two.overlap_limit = 2;
  {
    Builder b = build(CollectiveKind::AllReduce, {{0, 2}, {1, 3}});
    CHECK_FALSE(overlapped(b, b.run())); // one stream slot by default
    CHECK(overlapped(b, b.run(two)));    // two slots, disjoint devices
  }
  {
    Builder b = build(CollectiveKind::AllGather, {{0, 2}, {1, 3}});
    CHECK_FALSE(overlapped(b, b.run(two))); // all-gather limit stays 1
  }
  {
    Builder b = build(CollectiveKind::AllReduce, {{0, 1}, {2, 3}});
    CHECK_FALSE(overlapped(b, b.run(two))); // groups share two devices
    two.gpu_no_shared_device_overlap = false;
    CHECK(overlapped(b, b.run(two)));
  }
  SchedulerConfig bad;
  bad.per_kind_limit = 2;
  Builder b = build(CollectiveKind::AllReduce, {{0, 2}});
  const Result<Schedule> r = scheduleGraph(b.g, bad);
  REQUIRE_FALSE(r.ok());
  CHECK(
      r.error().message.find("exceeds the parallel collective overlap limit") !=
      std::string::npos);
}

// The rule as written: some pair of groups with two devices in common,
// each of a's devices looked up in b's group.
bool sharesTwoByScan(const std::vector<std::vector<int64_t>> &a,
                     const std::vector<std::vector<int64_t>> &b) {
  for (const auto &ga : a)
    for (const auto &gb : b) {
      int shared = 0;
      for (int64_t d : ga)
        if (std::find(gb.begin(), gb.end(), d) != gb.end() && ++shared > 1)
          return true;
    }
  return false;
}

TEST_CASE("Shared-device rule: the linear check agrees with the pairwise "
          "scan") {
  using shardlab::schedule::detail::shareMoreThanOneDevice;
  using Groups = std::vector<std::vector<int64_t>>;
  CHECK_FALSE(shareMoreThanOneDevice({{0, 1}, {2, 3}}, {{0, 2}, {1, 3}}));
  CHECK(shareMoreThanOneDevice({{0, 1}, {2, 3}}, {{0, 1, 2, 3}}));
  // Ring permutes as source-target pairs: the same ring shares each pair,
  // the reverse ring too; a ring two hops on shares none.
  Groups ring, reverse, two_on;
  for (int64_t d = 0; d < 8; ++d) {
    ring.push_back({d, (d + 1) % 8});
    reverse.push_back({(d + 1) % 8, d});
    two_on.push_back({d, (d + 2) % 8});
  }
  CHECK(shareMoreThanOneDevice(ring, ring));
  CHECK(shareMoreThanOneDevice(ring, reverse));
  CHECK_FALSE(shareMoreThanOneDevice(ring, two_on));
  // A negative id names no device (the scan would match it).
  CHECK_FALSE(shareMoreThanOneDevice({{-1, 0}}, {{-1, 0}, {-1}}));
  // A device a group lists twice counts twice, as the scan counts it.
  CHECK(shareMoreThanOneDevice({{3, 3}}, {{3, 5}}));
  CHECK_FALSE(shareMoreThanOneDevice({{3, 5}}, {{3, 3}}));
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    auto groups = [&] {
      Groups out(size_t(1 + rng() % 4));
      for (auto &g : out) {
        g.resize(size_t(1 + rng() % 4));
        for (int64_t &d : g)
          d = int64_t(rng() % 10);
      }
      return out;
    };
    const Groups a = groups(), b = groups();
    CAPTURE(trial);
    CHECK(shareMoreThanOneDevice(a, b) == sharesTwoByScan(a, b));
  }
  // Through nodes: none without groups; asked twice, the same answer.
  shardlab::schedule::detail::SharedDeviceRule rule;
  Node x, y, none;
  x.device_groups = std::make_shared<const Groups>(ring);
  y.device_groups = std::make_shared<const Groups>(two_on);
  CHECK_FALSE(rule(x, none));
  CHECK(rule(x, x));
  CHECK_FALSE(rule(x, y));
  CHECK(rule(x, x));
  CHECK_FALSE(rule(x, y));
}

TEST_CASE("Per-kind limits: all-gathers overlap only with their own limit") {
  Builder b;
  b.plain = 0;
  b.op("x", 1);
  b.pair("g0", "x", CollectiveKind::AllGather, {{0, 2}}, 100);
  b.pair("g1", "x", CollectiveKind::AllGather, {{1, 3}}, 100);
  b.op("big", 500, {"x"});
  b.op("y", 1, {"g0", "g1", "big"});
  auto overlapped = [&](const Schedule &s) {
    return b.pos(s, "g1-start") < b.pos(s, "g0-done") &&
           b.pos(s, "g0-start") < b.pos(s, "g1-done");
  };
  SchedulerConfig c;
  c.overlap_limit = 2;
  CHECK_FALSE(overlapped(b.run(c)));
  c.kind_limits[size_t(CollectiveKind::AllReduce)] = 2;
  CHECK_FALSE(overlapped(b.run(c))); // another kind's limit
  c.kind_limits[size_t(CollectiveKind::AllGather)] = 2;
  CHECK(kindLimit(c, CollectiveKind::AllGather) == 2);
  CHECK(kindLimit(c, CollectiveKind::ReduceScatter) == 1);
  CHECK(overlapped(b.run(c)));
  c.overlap_limit = 1; // a per-kind limit above the stream limit
  const Result<Schedule> r = scheduleGraph(b.g, c);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("all-gather limit (2)") != std::string::npos);
}

TEST_CASE("Memory rerun loop: a lower limit until the peak fits") {
  // Two chains a1 -> a2 and b1 -> b2 joined by y. Bottom-up in original
  // order, the scheduler keeps b1 (1000 B) live while it makes a1 (1200 B)
  // live: a peak of 2200 B. The memory rules act only above half the limit
  // (1000 B live is not above 2100 / 2), so under 2100 B the first run is
  // over; the rerun at 1890 B activates them and b1 goes first.
  Builder b;
  b.plain = 0;
  b.op("a1", 1, {}, 1200);
  b.op("b1", 1, {}, 1000);
  b.op("a2", 1, {"a1"}, 0);
  b.op("b2", 1, {"b1"}, 0);
  b.op("y", 1, {"a2", "b2"}, 0);
  SchedulerConfig c;
  CHECK(b.run(c).peak_memory_bytes == 2200);
  c.memory_limit_bytes = 2100;
  const Schedule once = b.run(c);
  CHECK(once.peak_memory_bytes == 2200);
  CHECK(once.memory_over_limit);
  CHECK(once.reruns == 0);
  c.reruns = 3;
  const Schedule s = b.run(c);
  CHECK(s.reruns == 1);
  REQUIRE(s.memory_attempts.size() == 2);
  CHECK(s.memory_attempts[0].limit_bytes == 2100);
  CHECK(s.memory_attempts[0].peak_live_bytes == 2200);
  CHECK(s.memory_attempts[1].limit_bytes == 1890);
  CHECK(s.memory_attempts[1].peak_live_bytes == 1200);
  CHECK(s.peak_memory_bytes == 1200);
  CHECK_FALSE(s.memory_over_limit);
  CHECK(*s.config.memory_limit_bytes == 1890);
  // An unreachable limit: every rerun is spent, the last schedule kept.
  c.memory_limit_bytes = 500;
  const Schedule tight = b.run(c);
  CHECK(tight.reruns == 3);
  CHECK(tight.memory_attempts.size() == 4);
  CHECK(tight.memory_over_limit);
  CHECK(*tight.config.memory_limit_bytes ==
        int64_t(int64_t(int64_t(500 * 0.9) * 0.9) * 0.9));
}

TEST_CASE("Timeline: exposed communication and wasted time") {
  Builder b;
  b.plain = 0;
  b.op("x", 10);
  b.pair("ar", "x", CollectiveKind::AllReduce, {{0, 1}}, 100);
  b.op("w", 30, {"x"});
  b.op("y", 5, {"ar", "w"});
  const Schedule s = b.run();
  // 10 + start 1 + 30 of compute under the transfer; 70 exposed; done 1; 5.
  CHECK(s.exposed_comm_us == doctest::Approx(100 - 30 - 1));
  CHECK(s.per_kind[size_t(CollectiveKind::AllReduce)].hidden_us ==
        doctest::Approx(31));
  CHECK(s.step_time_us == doctest::Approx(10 + 1 + 100 + 5));
  CHECK(s.forward_sim_us == doctest::Approx(s.step_time_us));
  const NodeTiming &start = s.timing[size_t(b.ids["ar-start"])];
  CHECK(start.transfer_end_us - start.transfer_start_us ==
        doctest::Approx(100));
  CHECK(s.serial_us == doctest::Approx(10 + 1 + 1 + 30 + 5 + 100));
}

TEST_CASE("Memory: live temporaries, parameters excluded, limit rule") {
  Builder b;
  b.plain = 0;
  const int64_t p = b.op("p", 0, {}, 1000);
  b.g.node(p).is_parameter = true;
  b.op("a", 1, {"p"}, 100);
  b.op("b", 1, {"a"}, 200);
  b.op("c", 1, {"b"}, 50);
  const Schedule s = b.run();
  CHECK(s.parameter_bytes == 1000);
  // b runs with a (its operand) and its own result live.
  CHECK(s.timing[size_t(b.ids["b"])].live_bytes == 300);
  CHECK(s.peak_memory_bytes == 1300);
  CHECK(gpuMemoryLimitBytes(100, 10) == int64_t((80 - 10) * 0.95));
}

namespace {

Builder randomProgram(std::mt19937 &rng) {
  Builder b;
  b.plain = 0;
  std::uniform_int_distribution<int> count(3, 60), pct(0, 99), cost(1, 100),
      latency(1, 400), kind(1, kNumCollectiveKinds - 1);
  const int n = count(rng);
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> operands;
    for (int k = 0; k < 2 && !names.empty(); ++k)
      if (k == 0 || pct(rng) < 40)
        operands.push_back(names[size_t(rng() % names.size())]);
    std::string name = "n";
    name += std::to_string(i);
    if (!operands.empty() && pct(rng) < 30) {
      const bool x = pct(rng) < 50;
      b.pair(name, operands[0], CollectiveKind(kind(rng)),
             x ? std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}
               : std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}},
             latency(rng), 64);
      const int stream = pct(rng) < 20;
      b.g.node(b.ids[name + "-start"]).stream = stream;
      b.g.node(b.ids[name + "-done"]).stream = stream;
    } else {
      b.op(name, cost(rng), operands, 8 * cost(rng));
    }
    names.push_back(name);
  }
  return b;
}

void checkLimits(const Graph &g, const Schedule &s, const SchedulerConfig &c) {
  std::map<int, int> stream;
  std::map<CollectiveKind, int> kind;
  for (int64_t n : s.order) {
    const Node &node = g.node(n);
    const int delta = node.kind == NodeKind::AsyncStart  ? 1
                      : node.kind == NodeKind::AsyncDone ? -1
                                                         : 0;
    stream[node.stream] += node.kind == NodeKind::Compute ? 0 : delta;
    kind[node.collective] += delta;
    if (node.kind == NodeKind::AsyncStart) {
      CHECK(stream[node.stream] <= c.overlap_limit);
      CHECK(kind[node.collective] <= c.per_kind_limit);
    }
  }
}

} // namespace

TEST_CASE("Timeline: kernels and transfers slowing each other") {
  // x (10), the all-reduce's start (1), w (100) beside its 40 us transfer,
  // the done (1), y (5). OverlapSlowdown's worked example: w and the
  // transfer run together for 80 us (the transfer at half speed), w has
  // done 80 / 1.5 of its work then, and its rest alone.
  Builder b;
  b.plain = 0;
  b.op("x", 10);
  b.pair("ar", "x", CollectiveKind::AllReduce, {{0, 1}}, 40);
  b.op("w", 100, {"x"});
  b.op("y", 5, {"ar", "w"});
  const Schedule alone = b.run();
  CHECK(alone.step_time_us == doctest::Approx(10 + 1 + 100 + 1 + 5));
  CHECK(alone.contention_us == 0);
  SchedulerConfig slowed;
  slowed.overlap_slowdown = {1.5, 2.0, "by hand"};
  const Schedule s = b.run(slowed);
  REQUIRE(s.order == alone.order); // the slowdown does not move any choice
  const double lost = 80 - 80 / 1.5;
  CHECK(s.contention_us == doctest::Approx(lost));
  CHECK(s.step_time_us == doctest::Approx(10 + 1 + 100 + lost + 1 + 5));
  CHECK(s.forward_sim_us == doctest::Approx(s.step_time_us));
  const NodeTiming &w = s.timing[size_t(b.ids["w"])];
  CHECK(w.start_us == doctest::Approx(11));
  CHECK(w.end_us == doctest::Approx(11 + 100 + lost));
  const NodeTiming &start = s.timing[size_t(b.ids["ar-start"])];
  CHECK(start.transfer_end_us - start.transfer_start_us == doctest::Approx(80));
  CHECK(s.comm_us == doctest::Approx(80));
  CHECK(s.exposed_comm_us == 0);
  CHECK(s.per_kind[size_t(CollectiveKind::AllReduce)].hidden_us ==
        doctest::Approx(80));

  SUBCASE("a transfer slowed into exposure") {
    // w of 30 beside a 100 us transfer at half speed: 15 us of it done
    // under w, 1 under the done's own cost (no kernel), 84 waited for.
    Builder e;
    e.plain = 0;
    e.op("x", 10);
    e.pair("ar", "x", CollectiveKind::AllReduce, {{0, 1}}, 100);
    e.op("w", 30, {"x"});
    e.op("y", 5, {"ar", "w"});
    SchedulerConfig comm_only;
    comm_only.overlap_slowdown = {1.0, 2.0, "by hand"};
    const Schedule c = e.run(comm_only);
    CHECK(c.contention_us == 0);
    CHECK(c.exposed_comm_us == doctest::Approx(84));
    CHECK(c.comm_us == doctest::Approx(30 + 1 + 84));
    CHECK(c.step_time_us == doctest::Approx(10 + 1 + 30 + 1 + 84 + 5));
    CHECK(e.run().step_time_us == doctest::Approx(10 + 1 + 100 + 5));
  }
  SUBCASE("factors below 1 are refused") {
    SchedulerConfig faster;
    faster.overlap_slowdown.compute = 0.9;
    Result<Schedule> r = scheduleGraph(b.g, faster);
    REQUIRE_FALSE(r.ok());
    CHECK(errorOf(r).find("overlap slowdowns") != std::string::npos);
  }
}

TEST_CASE("Invariants over 1000 random programs") {
  std::mt19937 rng(1234);
  int64_t overrides = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    Builder b = randomProgram(rng);
    SchedulerConfig c;
    c.overlap_limit = 1 + int(rng() % 3);
    c.per_kind_limit = 1 + int(rng() % uint32_t(c.overlap_limit));
    const Schedule s = b.run(c);
    REQUIRE(s.order.size() == size_t(b.g.size()));
    std::vector<int64_t> pos(size_t(b.g.size()));
    for (size_t i = 0; i < s.order.size(); ++i)
      pos[size_t(s.order[i])] = int64_t(i);
    for (const Edge &e : b.g.edges()) {
      REQUIRE(pos[size_t(e.from)] < pos[size_t(e.to)]);
      const NodeTiming &f = s.timing[size_t(e.from)],
                       &t = s.timing[size_t(e.to)];
      const double ready = b.g.node(e.from).kind == NodeKind::AsyncStart
                               ? f.transfer_end_us
                               : f.end_us;
      REQUIRE(ready <= (e.latency_us > 0 ? t.end_us : t.start_us) + 1e-6);
    }
    overrides += s.limit_overrides;
    if (s.limit_overrides == 0)
      checkLimits(b.g, s, c);
    REQUIRE(s.step_time_us >= s.lower_bound_us - 1e-6);
    REQUIRE(s.step_time_us <= s.serial_us + 1e-6);
    REQUIRE(s.forward_sim_us == doctest::Approx(s.step_time_us));
    // The same order run with kernels and transfers slowing each other:
    // every dependency still met, never faster, and at factors a hair
    // above 1 the step XLA's statistics give.
    SchedulerConfig hair = c, slow = c;
    hair.overlap_slowdown = {1 + 1e-9, 1 + 1e-9, "test"};
    slow.overlap_slowdown = {1.3, 1.7, "test"};
    REQUIRE(b.run(hair).step_time_us ==
            doctest::Approx(s.step_time_us).epsilon(1e-6));
    const Schedule r = b.run(slow);
    REQUIRE(r.step_time_us >= s.step_time_us - 1e-6);
    for (const Edge &e : b.g.edges()) {
      const NodeTiming &f = r.timing[size_t(e.from)],
                       &t = r.timing[size_t(e.to)];
      const double ready = b.g.node(e.from).kind == NodeKind::AsyncStart
                               ? f.transfer_end_us
                               : f.end_us;
      REQUIRE(ready <= (e.latency_us > 0 ? t.end_us : t.start_us) + 1e-6);
    }
  }
  CHECK(overrides == 0);
}

TEST_CASE("Communication read by no kernel: through another collective a "
          "kernel still reads it; a node of no time is not a kernel") {
  // g0's result feeds g1's transfer, whose result kernel k reads: both are
  // read by a kernel. g2's result is read only by `free`, a node of no
  // time (a bitcast, a tuple): read by no kernel, so the part of its time
  // that was exposed is the step's results-only communication.
  Builder b;
  b.op("p0", 1);
  b.op("p1", 1);
  b.pair("g0", "p0");
  b.pair("g1", "g0");
  b.op("k", 100, {"g1"});
  b.pair("g2", "p1");
  b.op("free", 0, {"g2"});
  b.op("t", 0, {"k", "free"});
  const Schedule s = b.run();
  const double g2_exposed = s.timing[size_t(b.ids.at("g2-done"))].exposed_us;
  CHECK(g2_exposed > 0);
  CHECK(s.timing[size_t(b.ids.at("g0-done"))].exposed_us > 0);
  CHECK(s.results_only_comm_us == doctest::Approx(g2_exposed));
}
