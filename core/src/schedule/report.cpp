// JSON report, Chrome trace and text summary of a schedule.
#include "shardlab/schedule/report.h"
#include "shardlab/schedule/validation.h"

#include "support/byte_units.h"
#include "support/json_writer.h"

#include <cstdio>

namespace shardlab::schedule {
namespace {

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

void writeStrings(JsonWriter &w, const std::vector<std::string> &strings) {
  w.beginArray();
  for (const std::string &text : strings)
    w.value(text);
  w.endArray();
}

void writeOp(JsonWriter &w, const Graph &g, const Schedule &s, int64_t n,
             const std::vector<int64_t> &index) {
  const Node &node = g.node(n);
  const NodeTiming &t = s.timing[size_t(n)];
  const bool coll = node.kind == NodeKind::AsyncStart;
  w.beginObject()
      .field("name", node.name)
      .field("line", node.line)
      .field("kind", coll ? "collective" : "compute")
      .field("stream", streamName(node))
      .field("start_us", coll ? t.transfer_start_us : t.start_us)
      .field("end_us", coll ? t.transfer_end_us : t.end_us);
  w.key("deps").beginArray();
  for (int64_t e : g.predecessors(n))
    w.value(index[size_t(g.edges()[size_t(e)].from)]);
  w.endArray();
  w.field("cost_explanation", node.explanation).field("reason", t.reason);
  if (coll) {
    const NodeTiming &done = s.timing[size_t(node.partner)];
    w.field("collective", toString(node.collective))
        .field("done_us", done.end_us)
        .field("exposed_us", done.exposed_us);
  }
  if (node.fusion) {
    w.key("fusion").beginObject().field("kind", node.fusion->kind);
    writeStrings(w.key("ops"), node.fusion->members);
    if (!node.fusion->second_outputs.empty())
      writeStrings(w.key("second_outputs"), node.fusion->second_outputs);
    w.field("bytes_read", node.bytes_read)
        .field("bytes_written", node.bytes_written)
        .endObject();
  }
  w.endObject();
}

// The largest temporaries live at the peak that the report names; the
// rest are summed.
constexpr size_t kPeakBuffersNamed = 10;

// Parameters plus peak live temporaries of one device against its memory,
// and what is live at the peak.
void writeMemoryFit(JsonWriter &w, const Program &program, const Schedule &s) {
  const int64_t capacity = program.topology.device_memory_bytes;
  w.beginObject()
      .field("peak_bytes", s.peak_memory_bytes)
      .field("capacity_bytes", capacity)
      .field("parameter_bytes", s.parameter_bytes);
  if (capacity > 0)
    w.field("fits", s.peak_memory_bytes <= capacity);
  if (s.peak_node >= 0) {
    w.field("peak_at", program.graph.node(s.peak_node).name);
    w.key("largest_live").beginArray();
    const std::vector<NamedBuffer> named =
        largestLive(program, s, kPeakBuffersNamed);
    for (const NamedBuffer &b : named)
      w.beginObject()
          .field("name", b.name)
          .field("line", b.line)
          .field("bytes", b.bytes)
          .endObject();
    w.endArray();
    // The rest summed from the scheduler's own account, not as what the
    // peak leaves: the report's parts must add up on their own.
    int64_t other_bytes = 0;
    for (size_t i = named.size(); i < s.peak_live.size(); ++i)
      other_bytes += s.peak_live[i].bytes;
    w.key("other_live")
        .beginObject()
        .field("count", int64_t(s.peak_live.size() - named.size()))
        .field("bytes", other_bytes)
        .endObject();
  }
  w.endObject();
}

std::string gib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / (1 << 30));
  return text;
}

// The summary's account of the peak: the parameters, and the three largest
// temporaries live while the peak's node runs.
std::string peakText(const Program &program, const Schedule &s) {
  if (s.peak_node < 0)
    return "";
  std::string out = "  at the peak, while " +
                    program.graph.node(s.peak_node).name +
                    " runs: parameters " + bytesText(s.parameter_bytes);
  for (const NamedBuffer &b : largestLive(program, s, 3))
    out += ", " + b.name + " " + bytesText(b.bytes);
  if (s.peak_live.size() > 3)
    out += " and " + std::to_string(s.peak_live.size() - 3) + " more";
  return out + "\n";
}

void writeLoops(JsonWriter &w, const Program &program) {
  w.beginArray();
  for (const LoopInfo &loop : program.loops)
    w.beginObject()
        .field("name", loop.name)
        .field("trip_count", loop.trip_count)
        .field("source", loop.source)
        .endObject();
  w.endArray();
}

void writePerKind(JsonWriter &w, const Schedule &s) {
  w.beginObject();
  for (int k = 1; k < kNumCollectiveKinds; ++k) {
    const KindTotals &t = s.per_kind[size_t(k)];
    if (t.count > 0)
      w.key(toString(CollectiveKind(k)))
          .beginObject()
          .field("count", t.count)
          .field("bytes", t.bytes)
          .field("comm_us", t.comm_us)
          .field("exposed_us", t.exposed_us)
          .field("hidden_us", t.hidden_us)
          .endObject();
  }
  w.endObject();
}

void writePerKindLimits(JsonWriter &w, const SchedulerConfig &c) {
  w.beginObject();
  for (int k = 1; k < kNumCollectiveKinds; ++k)
    w.field(toString(CollectiveKind(k)), kindLimit(c, CollectiveKind(k)));
  w.endObject();
}

// The memory limit and XLA's rerun loop: every run's limit and peak.
void writeMemoryLimit(JsonWriter &w, const Schedule &s) {
  const auto &limit = s.config.memory_limit_bytes;
  w.beginObject().key("limit_bytes");
  limit ? w.value(*limit) : w.null();
  w.key("initial_limit_bytes");
  s.memory_attempts.empty() ? w.null()
                            : w.value(s.memory_attempts[0].limit_bytes);
  w.field("reruns", s.reruns)
      .field("max_reruns", s.config.reruns)
      .field("over_limit", s.memory_over_limit);
  w.key("attempts").beginArray();
  for (const MemoryAttempt &a : s.memory_attempts)
    w.beginObject()
        .field("limit_bytes", a.limit_bytes)
        .field("peak_live_bytes", a.peak_live_bytes)
        .field("step_time_us", a.step_time_us)
        .endObject();
  w.endArray().endObject();
}

void writeMemoryCurve(JsonWriter &w, const Schedule &s) {
  w.beginArray();
  for (int64_t n : s.order)
    w.beginArray()
        .value(s.timing[size_t(n)].start_us)
        .value(s.parameter_bytes + s.timing[size_t(n)].live_bytes)
        .endArray();
  w.endArray();
}

void writeTopology(JsonWriter &w, const Topology &t) {
  w.beginObject()
      .field("mesh", t.mesh_name)
      .field("num_devices", t.num_devices)
      .field("device_count_source", t.device_count_source)
      .field("input_form", t.input_form)
      .field("gpus_per_node", t.gpus_per_node)
      .field("num_nodes", t.num_nodes)
      .endObject();
}

// The numbers the estimate used for the machine, each with its source.
// The validation band of this kind of estimate (schedule/validation.h).
void writeValidation(JsonWriter &w, const ValidationBand &band,
                     const std::string &kind) {
  w.beginObject()
      .field("kind", kind)
      .field("band_kind", band.kind)
      .field("measured_over_estimate_p10", band.low)
      .field("measured_over_estimate_p90", band.high)
      .field("runs", band.runs)
      .field("basis", band.basis)
      .field("note", band.note)
      .field("schedule", band.schedule)
      .endObject();
}

// The published runs' band for this estimate (none with the approximate
// estimator, which costs for no machine).
std::optional<ValidationBand> bandOf(const Program &program,
                                     const Schedule &s) {
  if (program.hardware.name.empty())
    return std::nullopt;
  return validationBand(s.step_time_us, s.exposed_comm_us,
                        program.topology.num_devices, program.band_schedule);
}

/// "measured steps of communication-bound estimates were 0.20-0.36x the
/// estimate (p10-p90 of 8 published runs)".
std::string validationLine(const ValidationBand &band, const std::string &kind,
                           double step_us) {
  if (band.kind == "none")
    return kind + " estimate: " + band.note + " (" + band.basis + ")";
  char text[448];
  std::snprintf(text, sizeof text,
                "%s estimate: published runs measured %.2f-%.2fx their "
                "estimate (p10-p90 of %d%s, estimated with %s), here "
                "%.0f-%.0f us",
                kind.c_str(), band.low, band.high, band.runs,
                band.kind == kind ? " runs of this kind"
                                  : " runs of every kind; fewer than 3 of this",
                band.schedule.c_str(), band.low * step_us, band.high * step_us);
  return text;
}

void writeHardware(JsonWriter &w, const Program &program) {
  const cost::HardwarePreset &hw = program.hardware;
  w.beginObject()
      .field("preset", hw.name)
      .field("device_name", hw.device_name)
      .field("hbm_bytes_per_s", hw.hbm_bytes_per_s)
      .field("device_memory_bytes", hw.device_memory_bytes)
      .field("nvlink_bytes_per_s", hw.nvlink_bytes_per_s)
      .field("gpus_per_node", program.network.gpus_per_node)
      .field("nic_bytes_per_s", hw.nic_bytes_per_s)
      .field("s_curve_nic_gbps", program.network.nic_speed_gbps)
      .field("gemm_rates", program.gemm_rates);
  w.key("peak_flop_per_s").beginObject();
  for (const auto &[dtype, rate] : hw.peak_flop_per_s)
    w.field(dtype, rate);
  w.endObject();
  w.key("sources").beginObject();
  for (const auto &[field, source] : hw.sources)
    w.field(field, source);
  w.endObject().endObject();
}

void writeReport(JsonWriter &w, const Program &program, const Schedule &s) {
  const Graph &g = program.graph;
  std::vector<int64_t> entries;
  const std::vector<int64_t> index = entryIndex(g, s, entries);
  w.beginObject()
      .field("step_time_us", s.step_time_us)
      .field("compute_us", s.compute_us)
      .field("comm_us", s.comm_us)
      .field("exposed_comm_us", s.exposed_comm_us)
      .field("hidden_comm_us", s.comm_us - s.exposed_comm_us)
      .field("results_only_comm_us", s.results_only_comm_us)
      .field("contention_us", s.contention_us)
      .field("wasted_us", s.exposed_comm_us)
      .field("serial_us", s.serial_us)
      .field("lower_bound_us", s.lower_bound_us)
      .field("critical_path_us", s.critical_path_us)
      .field("forward_sim_us", s.forward_sim_us)
      .field("peak_memory_bytes", s.peak_memory_bytes)
      .field("parameter_bytes", s.parameter_bytes)
      .field("memory_over_limit", s.memory_over_limit)
      .field("overlap_limit", s.config.overlap_limit);
  writePerKindLimits(w.key("per_kind_limits"), s.config);
  writeMemoryLimit(w.key("memory_limit"), s);
  w.field("limit_overrides", s.limit_overrides);
  writePerKind(w.key("per_kind"), s);
  writeTopology(w.key("topology"), program.topology);
  if (!program.hardware.name.empty())
    writeHardware(w.key("hardware"), program);
  if (const auto band = bandOf(program, s))
    writeValidation(w.key("validation"), *band,
                    costKind(s.step_time_us, s.exposed_comm_us));
  writeStrings(w.key("assumptions"), program.assumptions);
  w.key("not_costed").beginObject();
  for (const auto &[target, count] : program.not_costed)
    w.field(target, count);
  w.endObject();
  writeLoops(w.key("loops"), program);
  writeMemoryFit(w.key("memory_per_device"), program, s);
  writeMemoryCurve(w.key("memory_curve"), s);
  w.key("ops").beginArray();
  for (int64_t n : entries)
    writeOp(w, g, s, n, index);
  w.endArray().endObject();
}

void writeEvent(JsonWriter &w, std::string_view name, std::string_view cat,
                int tid, double ts, double dur) {
  w.beginObject().field("name", name);
  if (!cat.empty())
    w.field("cat", cat);
  w.field("ph", "X")
      .field("pid", 0)
      .field("tid", tid)
      .field("ts", ts)
      .field("dur", dur);
}

void writeThreadName(JsonWriter &w, int tid, const std::string &name) {
  w.beginObject()
      .field("name", "thread_name")
      .field("ph", "M")
      .field("pid", 0)
      .field("tid", tid)
      .key("args")
      .beginObject()
      .field("name", name)
      .endObject()
      .endObject();
}

} // namespace

std::string reportJson(const Program &program, const Schedule &s) {
  std::string out;
  JsonWriter w(out);
  writeReport(w, program, s);
  return out;
}

std::string chromeTraceJson(const Program &program, const Schedule &s) {
  const Graph &g = program.graph;
  std::string out;
  JsonWriter w(out);
  w.beginObject().key("traceEvents").beginArray();
  int max_stream = 0;
  for (int64_t n : s.order) {
    const Node &node = g.node(n);
    const NodeTiming &t = s.timing[size_t(n)];
    max_stream = std::max(max_stream, node.stream);
    if (node.kind == NodeKind::AsyncStart) {
      writeEvent(w, node.name, "collective", 1 + node.stream,
                 t.transfer_start_us, t.transfer_end_us - t.transfer_start_us);
      w.key("args")
          .beginObject()
          .field("kind", toString(node.collective))
          .endObject()
          .endObject();
    }
    if (node.kind != NodeKind::Nop && t.end_us > t.start_us) {
      writeEvent(w, node.name, "compute", 0, t.start_us, t.end_us - t.start_us);
      w.endObject();
    }
    w.beginObject()
        .field("name", "memory")
        .field("ph", "C")
        .field("pid", 0)
        .field("ts", t.start_us)
        .key("args")
        .beginObject()
        .field("bytes", s.parameter_bytes + t.live_bytes)
        .endObject()
        .endObject();
  }
  writeThreadName(w, 0, "compute");
  for (int st = 0; st <= max_stream; ++st)
    writeThreadName(w, 1 + st, "collectives-" + std::to_string(st));
  w.endArray().field("displayTimeUnit", "ms").endObject();
  return out;
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
  if (const auto band = bandOf(program, s))
    out += "  " +
           validationLine(*band, costKind(s.step_time_us, s.exposed_comm_us),
                          s.step_time_us) +
           "\n";
  add("compute busy", s.compute_us);
  if (s.contention_us > 0)
    add("  beside transfers", s.contention_us);
  add("communication", s.comm_us);
  add("  exposed", s.exposed_comm_us);
  if (s.results_only_comm_us > 0)
    add("    read by no kernel", s.results_only_comm_us);
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
  out += peakText(program, s);
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

std::vector<NamedBuffer> largestLive(const Program &program, const Schedule &s,
                                     size_t most) {
  std::vector<NamedBuffer> out;
  for (size_t i = 0; i < s.peak_live.size() && i < most; ++i) {
    const Node &node = program.graph.node(s.peak_live[i].node);
    out.push_back({node.name, node.line, s.peak_live[i].bytes});
  }
  return out;
}

} // namespace shardlab::schedule
