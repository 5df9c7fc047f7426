// JSON report, Chrome trace and text summary of a schedule.
#include "shardlab/schedule/report.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace shardlab::schedule {
namespace {

using nlohmann::json;

std::string streamName(const Node &node) {
  return node.kind == NodeKind::AsyncStart
             ? "collective-" + std::to_string(node.stream)
             : "compute";
}

// Report entries: every node in program order except dones, which fold
// into their start's collective entry.
std::vector<int64_t> entryIndex(const Graph &g, const Schedule &s,
                                std::vector<int64_t> &entries) {
  std::vector<int64_t> index(size_t(g.size()), -1);
  for (int64_t n : s.order)
    if (g.node(n).kind != NodeKind::AsyncDone) {
      index[size_t(n)] = int64_t(entries.size());
      entries.push_back(n);
    }
  for (int64_t n = 0; n < g.size(); ++n)
    if (g.node(n).kind == NodeKind::AsyncDone && g.node(n).partner >= 0)
      index[size_t(n)] = index[size_t(g.node(n).partner)];
  return index;
}

json opEntry(const Graph &g, const Schedule &s, int64_t n,
             const std::vector<int64_t> &index) {
  const Node &node = g.node(n);
  const NodeTiming &t = s.timing[size_t(n)];
  const bool coll = node.kind == NodeKind::AsyncStart;
  json deps = json::array();
  for (int64_t e : g.predecessors(n))
    deps.push_back(index[size_t(g.edges()[size_t(e)].from)]);
  json j = {{"name", node.name},
            {"kind", coll ? "collective" : "compute"},
            {"stream", streamName(node)},
            {"start_us", coll ? t.transfer_start_us : t.start_us},
            {"end_us", coll ? t.transfer_end_us : t.end_us},
            {"deps", deps},
            {"cost_explanation", node.explanation},
            {"reason", t.reason}};
  if (coll) {
    const NodeTiming &done = s.timing[size_t(node.partner)];
    j["collective"] = std::string(toString(node.collective));
    j["done_us"] = done.end_us;
    j["exposed_us"] = done.exposed_us;
  }
  return j;
}

// Parameters plus peak live temporaries of one device against its memory.
json memoryFit(const Program &program, const Schedule &s) {
  const int64_t capacity = program.topology.device_memory_bytes;
  json fit = {{"peak_bytes", s.peak_memory_bytes},
              {"capacity_bytes", capacity}};
  if (capacity > 0)
    fit["fits"] = s.peak_memory_bytes <= capacity;
  return fit;
}

std::string gib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / (1 << 30));
  return text;
}

json loopsValue(const Program &program) {
  json loops = json::array();
  for (const LoopInfo &loop : program.loops)
    loops.push_back({{"name", loop.name},
                     {"trip_count", loop.trip_count},
                     {"source", loop.source}});
  return loops;
}

json perKind(const Schedule &s) {
  json j = json::object();
  for (int k = 1; k < kNumCollectiveKinds; ++k) {
    const KindTotals &t = s.per_kind[size_t(k)];
    if (t.count > 0)
      j[std::string(toString(CollectiveKind(k)))] = {
          {"count", t.count},
          {"bytes", t.bytes},
          {"comm_us", t.comm_us},
          {"exposed_us", t.exposed_us},
          {"hidden_us", t.hidden_us}};
  }
  return j;
}

json perKindLimits(const SchedulerConfig &c) {
  json j = json::object();
  for (int k = 1; k < kNumCollectiveKinds; ++k)
    j[std::string(toString(CollectiveKind(k)))] =
        kindLimit(c, CollectiveKind(k));
  return j;
}

// The memory limit and XLA's rerun loop: every run's limit and peak.
json memoryLimit(const Schedule &s) {
  json attempts = json::array();
  for (const MemoryAttempt &a : s.memory_attempts)
    attempts.push_back({{"limit_bytes", a.limit_bytes},
                        {"peak_live_bytes", a.peak_live_bytes},
                        {"step_time_us", a.step_time_us}});
  const auto &limit = s.config.memory_limit_bytes;
  return {{"limit_bytes", limit ? json(*limit) : json(nullptr)},
          {"initial_limit_bytes",
           attempts.empty() ? json(nullptr) : attempts[0]["limit_bytes"]},
          {"reruns", s.reruns},
          {"max_reruns", s.config.reruns},
          {"over_limit", s.memory_over_limit},
          {"attempts", attempts}};
}

json memoryCurve(const Schedule &s) {
  json curve = json::array();
  for (int64_t n : s.order)
    curve.push_back({s.timing[size_t(n)].start_us,
                     s.parameter_bytes + s.timing[size_t(n)].live_bytes});
  return curve;
}

} // namespace

json reportValue(const Program &program, const Schedule &s) {
  const Graph &g = program.graph;
  std::vector<int64_t> entries;
  const std::vector<int64_t> index = entryIndex(g, s, entries);
  json ops = json::array();
  for (int64_t n : entries)
    ops.push_back(opEntry(g, s, n, index));
  const Topology &t = program.topology;
  json j = {{"step_time_us", s.step_time_us},
            {"compute_us", s.compute_us},
            {"comm_us", s.comm_us},
            {"exposed_comm_us", s.exposed_comm_us},
            {"hidden_comm_us", s.comm_us - s.exposed_comm_us},
            {"wasted_us", s.exposed_comm_us},
            {"serial_us", s.serial_us},
            {"lower_bound_us", s.lower_bound_us},
            {"critical_path_us", s.critical_path_us},
            {"forward_sim_us", s.forward_sim_us},
            {"peak_memory_bytes", s.peak_memory_bytes},
            {"parameter_bytes", s.parameter_bytes},
            {"memory_over_limit", s.memory_over_limit},
            {"overlap_limit", s.config.overlap_limit},
            {"per_kind_limits", perKindLimits(s.config)},
            {"memory_limit", memoryLimit(s)},
            {"limit_overrides", s.limit_overrides},
            {"per_kind", perKind(s)},
            {"topology",
             {{"mesh", t.mesh_name},
              {"num_devices", t.num_devices},
              {"device_count_source", t.device_count_source},
              {"input_form", t.input_form},
              {"gpus_per_node", t.gpus_per_node},
              {"num_nodes", t.num_nodes}}},
            {"assumptions", program.assumptions},
            {"not_costed", program.not_costed},
            {"loops", loopsValue(program)},
            {"memory_per_device", memoryFit(program, s)},
            {"memory_curve", memoryCurve(s)},
            {"ops", ops}};
  return j;
}

std::string reportJson(const Program &program, const Schedule &s) {
  return reportValue(program, s).dump(1);
}

json chromeTraceValue(const Program &program, const Schedule &s) {
  const Graph &g = program.graph;
  json events = json::array();
  int max_stream = 0;
  for (int64_t n : s.order) {
    const Node &node = g.node(n);
    const NodeTiming &t = s.timing[size_t(n)];
    max_stream = std::max(max_stream, node.stream);
    if (node.kind == NodeKind::AsyncStart)
      events.push_back({{"name", node.name},
                        {"cat", "collective"},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", 1 + node.stream},
                        {"ts", t.transfer_start_us},
                        {"dur", t.transfer_end_us - t.transfer_start_us},
                        {"args", {{"kind", toString(node.collective)}}}});
    if (node.kind != NodeKind::Nop && t.end_us > t.start_us)
      events.push_back({{"name", node.name},
                        {"cat", "compute"},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", 0},
                        {"ts", t.start_us},
                        {"dur", t.end_us - t.start_us}});
    events.push_back({{"name", "memory"},
                      {"ph", "C"},
                      {"pid", 0},
                      {"ts", t.start_us},
                      {"args", {{"bytes", s.parameter_bytes + t.live_bytes}}}});
  }
  events.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"tid", 0},
                    {"args", {{"name", "compute"}}}});
  for (int st = 0; st <= max_stream; ++st)
    events.push_back(
        {{"name", "thread_name"},
         {"ph", "M"},
         {"pid", 0},
         {"tid", 1 + st},
         {"args", {{"name", "collectives-" + std::to_string(st)}}}});
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

std::string chromeTraceJson(const Program &program, const Schedule &s) {
  return chromeTraceValue(program, s).dump();
}

std::string summaryText(const Program &program, const Schedule &s) {
  char line[256];
  std::string out;
  auto add = [&](const char *label, double us) {
    std::snprintf(line, sizeof line, "%-22s %14.3f us\n", label, us);
    out += line;
  };
  const Topology &topology = program.topology;
  std::snprintf(line, sizeof line, "%-22s %14lld (%s%s)\n", "devices",
                (long long)topology.num_devices,
                topology.device_count_source.c_str(),
                topology.input_form == "gspmd"
                    ? "; GSPMD shardings imported into Shardy form"
                    : "");
  out += line;
  add("step time", s.step_time_us);
  add("compute busy", s.compute_us);
  add("communication", s.comm_us);
  add("  exposed", s.exposed_comm_us);
  add("  hidden", s.comm_us - s.exposed_comm_us);
  add("serial (no overlap)", s.serial_us);
  add("lower bound", s.lower_bound_us);
  for (int k = 1; k < kNumCollectiveKinds; ++k) {
    const KindTotals &t = s.per_kind[size_t(k)];
    if (t.count == 0)
      continue;
    std::snprintf(line, sizeof line,
                  "  %-20s %3lld x, %12.3f us, exposed %12.3f us\n",
                  std::string(toString(CollectiveKind(k))).c_str(),
                  (long long)t.count, t.comm_us, t.exposed_us);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-22s %14lld bytes\n", "peak memory",
                (long long)s.peak_memory_bytes);
  out += line;
  if (const int64_t capacity = program.topology.device_memory_bytes) {
    const bool fits = s.peak_memory_bytes <= capacity;
    out += std::string(fits ? "fits in device memory (" : "DOES NOT FIT (") +
           gib(s.peak_memory_bytes) + (fits ? " of " : " > ") + gib(capacity) +
           " per device)\n";
  }
  if (!s.memory_attempts.empty()) {
    std::snprintf(line, sizeof line,
                  "%-22s %14lld bytes (%d rerun%s, initially %lld)%s\n",
                  "memory limit", (long long)*s.config.memory_limit_bytes,
                  s.reruns, s.reruns == 1 ? "" : "s",
                  (long long)s.memory_attempts.front().limit_bytes,
                  s.memory_over_limit ? ", peak over it" : "");
    out += line;
  }
  for (const auto &[target, count] : program.not_costed)
    out += "not costed: custom_call @" + target + " x" + std::to_string(count) +
           " (bytes at memory speed)\n";
  for (const std::string &a : program.assumptions)
    out += "assumption: " + a + "\n";
  return out;
}

} // namespace shardlab::schedule
