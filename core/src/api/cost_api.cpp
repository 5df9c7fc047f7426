// JSON entry points over the cost model: table loading and validation
// (shardlab JSON, XLA text-proto), hardware presets, collective and GEMM
// estimates with their explanations.
#include "guard.h"
#include "json_options.h"
#include "request_fields.h"
#include "shardlab/api/api.h"
#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/hardware.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/cost/sol_model.h"
#include "shardlab/cost/xla_import.h"

#include <set>

namespace shardlab::api {
namespace {

using namespace shardlab::cost;
using detail::dumpReply;
using detail::errorReply;
using detail::guarded;
using detail::json;
using detail::OptionReader;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

/// A loaded table and the format it was read from.
struct LoadedTable {
  PerfTable table;
  std::string format;
};

/// "shardlab" for JSON text, else the XLA text-proto kind by its fields.
std::string detectFormat(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{')
    return "shardlab";
  bool gemm = text.find("flops") != std::string_view::npos &&
              text.find("instruction") == std::string_view::npos;
  return gemm ? "xla-gemm" : "xla-collective";
}

Result<LoadedTable> loadTable(std::string_view text, std::string format,
                              const std::string &device, int64_t partition) {
  if (int64_t(text.size()) > kMaxPerfTableFileBytes)
    return tableTooLargeError("table text", int64_t(text.size()));
  if (format.empty() || format == "auto")
    format = detectFormat(text);
  Result<PerfTable> table = makeError("");
  if (format == "shardlab")
    table = parsePerfTable(text);
  else if (format == "xla-collective")
    table = importXlaCollectiveProfiles(text, device, partition);
  else if (format == "xla-gemm")
    table = importXlaGemmTable(text, device);
  else
    return makeError("options.format: expected \"auto\", \"shardlab\", "
                     "\"xla-collective\" or \"xla-gemm\", got \"" +
                     format + "\"");
  if (!table)
    return table.error();
  return LoadedTable{std::move(*table), format};
}

json tableSummary(const PerfTable &table) {
  std::set<std::string> ops, gemm_keys;
  for (const CollectiveEntry &e : table.collectives)
    ops.insert(e.op);
  for (const GemmEntry &e : table.gemms)
    gemm_keys.insert(gemmDtypeKey(e));
  return {{"source", table.metadata.source},
          {"device_name", table.metadata.device_name},
          {"partition_size", table.metadata.partition_size},
          {"collectives", table.collectives.size()},
          {"gemms", table.gemms.size()},
          {"collective_ops", ops},
          {"gemm_dtype_keys", gemm_keys}};
}

std::string loadTableReply(std::string_view text,
                           std::string_view options_json) {
  json options =
      options_json.empty() ? json::object() : detail::parseJson(options_json);
  OptionReader reader(options);
  reader.rejectUnknown(detail::fields::kLoadTableOptions);
  std::string format = "auto", device;
  int64_t partition = 8;
  reader.string("format", format);
  reader.string("device", device);
  reader.integer("partition_size", partition, 1, 1 << 20);
  if (!reader.ok())
    return errorReply(reader.error());
  Result<LoadedTable> loaded = loadTable(text, format, device, partition);
  if (!loaded)
    return errorReply(loaded.error().message);
  json reply = {
      {"ok", true},
      {"format", loaded->format},
      {"summary", tableSummary(loaded->table)},
      {"table", detail::parseJson(serializePerfTable(loaded->table))}};
  if (loaded->format != "shardlab") {
    Result<std::vector<std::string>> keys = listXlaDeviceKeys(text);
    reply["devices"] = keys ? json(*keys) : json::array();
  }
  return dumpReply(reply);
}

/// One table given as a JSON object or as text (shardlab JSON or XLA's).
Result<PerfTable> tableValue(const json &value, const std::string &where,
                             const std::string &device) {
  if (!value.is_string() && !value.is_object())
    return makeError(where + ": expected a table object or table text");
  std::string text =
      value.is_string() ? value.get<std::string>() : detail::dumpReply(value);
  Result<LoadedTable> loaded = loadTable(text, "auto", device, 8);
  if (!loaded)
    return makeError(where + ": " + loaded.error().message);
  return std::move(loaded->table);
}

/// The "tables" option: several tables merged (entries appended, the
/// first table's metadata kept), e.g. a collective and a GEMM table.
Result<PerfTable> tablesValue(const json &list, const std::string &device) {
  if (!list.is_array() || list.empty())
    return makeError("options.tables: expected a non-empty array of tables");
  PerfTable merged;
  for (size_t i = 0; i < list.size(); ++i) {
    Result<PerfTable> one = tableValue(
        list[i], "options.tables[" + std::to_string(i) + "]", device);
    if (!one)
      return one.error();
    if (i == 0)
      merged.metadata = one->metadata;
    for (CollectiveEntry &e : one->collectives)
      merged.collectives.push_back(std::move(e));
    for (GemmEntry &e : one->gemms)
      merged.gemms.push_back(std::move(e));
  }
  return merged;
}

Result<HardwarePreset> hardwareOption(OptionReader &reader) {
  std::string hardware = "h100";
  reader.string("hardware", hardware);
  if (!reader.ok())
    return makeError(reader.error());
  Result<HardwarePreset> hw = findHardwarePreset(hardware);
  if (!hw)
    return makeError("options.hardware: " + hw.error().message);
  return hw;
}

/// The "tables" or "table" option, else the hardware's analytical table.
Result<PerfTable> tableOption(OptionReader &reader, bool &is_default) {
  is_default = false;
  std::string device; // XLA device key of text-proto tables, e.g. "sm_90"
  reader.string("device", device);
  if (!reader.ok())
    return makeError(reader.error());
  if (const json *tables = reader.get("tables"))
    return tablesValue(*tables, device);
  if (const json *table = reader.get("table"))
    return tableValue(*table, "options.table", device);
  Result<HardwarePreset> hw = hardwareOption(reader);
  if (!hw)
    return hw.error();
  is_default = true;
  return presetTable(*hw);
}

Result<EstimateMode> modeOption(OptionReader &reader) {
  std::string mode = "compatible";
  reader.string("mode", mode);
  if (mode == "compatible")
    return EstimateMode::Compatible;
  if (mode == "accurate")
    return EstimateMode::Accurate;
  return makeError("options.mode: expected \"compatible\" or \"accurate\"");
}

/// The estimate, or the error; `warning` (when not empty) is listed under
/// "warnings".
std::string estimateReply(const Result<Estimate> &estimate,
                          const std::string &warning = "") {
  if (!estimate)
    return errorReply(estimate.error().message);
  json reply = detail::parseJson(toJson(*estimate));
  if (!reply.is_object())
    return errorReply("estimate could not be rendered");
  reply["ok"] = true;
  if (!warning.empty())
    reply["warnings"] = json::array({warning});
  return dumpReply(reply);
}

/// Replica groups from "[2,4]<=[8]" / "{{0,1},{2,3}}" or [[0,1],[2,3]].
Result<ReplicaGroups> groupsOption(const json *value) {
  if (!value)
    return ReplicaGroups{};
  if (value->is_string())
    return parseReplicaGroups(value->get<std::string>());
  const char *expected = "options.replica_groups: expected a string or an "
                         "array of arrays of device ids";
  if (!value->is_array())
    return makeError(expected);
  std::vector<std::vector<int64_t>> lists;
  for (const json &group : *value) {
    lists.emplace_back();
    if (!detail::readIntegerArray(group, lists.back()))
      return makeError(expected);
  }
  return ReplicaGroups::fromLists(std::move(lists));
}

Result<SourceTargetPairs> pairsOption(const json *value) {
  SourceTargetPairs pairs;
  if (!value)
    return pairs;
  const char *expected = "options.source_target_pairs: expected an array "
                         "of [source, target] pairs";
  if (!value->is_array())
    return makeError(expected);
  for (const json &pair : *value) {
    std::vector<int64_t> ids;
    if (!detail::readIntegerArray(pair, ids) || ids.size() != 2)
      return makeError(expected);
    pairs.push_back({ids[0], ids[1]});
  }
  return pairs;
}

/// Reads op, bytes, dtype, groups and pairs of a collective query.
Result<CollectiveQuery> collectiveQuery(OptionReader &reader) {
  CollectiveQuery query;
  std::string op;
  reader.string("op", op);
  reader.requiredInteger("bytes", query.bytes);
  query.dtype = "f32";
  reader.string("dtype", query.dtype);
  if (!reader.ok())
    return makeError(reader.error());
  Result<CollectiveOp> parsed_op = parseCollectiveOp(op);
  if (!parsed_op)
    return makeError("options.op: " + parsed_op.error().message);
  query.op = *parsed_op;
  Result<ReplicaGroups> groups = groupsOption(reader.get("replica_groups"));
  if (!groups)
    return groups.error();
  query.groups = std::move(*groups);
  Result<SourceTargetPairs> pairs =
      pairsOption(reader.get("source_target_pairs"));
  if (!pairs)
    return pairs.error();
  query.pairs = std::move(*pairs);
  return query;
}

Result<CollectiveInterpolatorOptions> collectiveOptions(OptionReader &reader,
                                                        bool default_table) {
  CollectiveInterpolatorOptions options;
  Result<EstimateMode> mode = modeOption(reader);
  if (!mode)
    return mode.error();
  options.mode = *mode;
  reader.integer("partition_size", options.devices_per_partition, 1, 1 << 20);
  std::string interpolation = default_table ? "grid-snap" : "nearest";
  reader.string("interpolation", interpolation);
  if (!reader.ok())
    return makeError(reader.error());
  if (interpolation == "grid-snap")
    options.interpolation = TableInterpolation::GridSnap;
  else if (interpolation != "nearest")
    return makeError("options.interpolation: expected \"nearest\" or "
                     "\"grid-snap\"");
  return options;
}

/// A query by topology: a group of `group_size` GPUs spread over `nodes`
/// nodes of `gpus_per_node` GPUs (the CLI's --group-size/--nodes).
struct Topology {
  int64_t group_size = 0, nodes = 1, gpus_per_node = 0;
};

Result<Topology> topologyOption(OptionReader &reader,
                                const HardwarePreset &hw) {
  constexpr int64_t kMax = int64_t{1} << 20;
  Topology t;
  t.gpus_per_node = hw.gpus_per_node;
  reader.integer("group_size", t.group_size, 1, kMax);
  reader.integer("nodes", t.nodes, 1, kMax);
  reader.integer("gpus_per_node", t.gpus_per_node, 1, kMax);
  if (!reader.ok())
    return makeError(reader.error());
  if (t.group_size == 0)
    return makeError("options.group_size: required with \"nodes\"");
  return t;
}

/// The preset's S-curve defaults, gpus_per_node, then "sol_options".
Result<SolConfig> solOption(OptionReader &reader, const HardwarePreset &hw,
                            const Topology &t) {
  SolConfig config = solDefaultsFor(hw);
  config.gpus_per_node = t.gpus_per_node;
  std::string text;
  reader.string("sol_options", text);
  if (!reader.ok())
    return makeError(reader.error());
  Result<SolConfig> applied = applySolOptions(config, text);
  if (!applied)
    return makeError("options.sol_options: " + applied.error().message);
  return applied;
}

/// The groups a table lookup sees for one node: [P/G, G]<=[P] when G
/// divides P, else one group; permutes get a ring over the group.
CollectiveQuery intraNodeQuery(CollectiveQuery q, const Topology &t) {
  const int64_t g = t.group_size, p = t.gpus_per_node;
  const bool tiles = p % g == 0;
  const std::string groups = "[" + std::to_string(tiles ? p / g : 1) + "," +
                             std::to_string(g) + "]<=[" +
                             std::to_string(tiles ? p : g) + "]";
  if (Result<ReplicaGroups> parsed = parseReplicaGroups(groups))
    q.groups = std::move(*parsed);
  for (int64_t i = 0; g > 1 && i < g; ++i)
    q.pairs.push_back({i, (i + 1) % g});
  return q;
}

/// One node: the tables when given and covering the query, else the
/// analytical NVLink model of the preset.
Result<Estimate> intraNodeEstimate(OptionReader &reader,
                                   const CollectiveQuery &query,
                                   const Topology &t,
                                   const HardwarePreset &hw) {
  if (t.group_size > t.gpus_per_node)
    return makeError("options.group_size: a group of " +
                     std::to_string(t.group_size) +
                     " GPUs does not fit one node of " +
                     std::to_string(t.gpus_per_node) + "; give nodes > 1");
  std::string why = "no table given";
  if (reader.get("tables") || reader.get("table")) {
    bool is_default = false;
    Result<PerfTable> table = tableOption(reader, is_default);
    if (!table)
      return table.error();
    Result<CollectiveInterpolatorOptions> options =
        collectiveOptions(reader, false);
    if (!options)
      return options.error();
    options->devices_per_partition = t.gpus_per_node;
    auto interpolator = CollectiveInterpolator::create(*table, *options);
    if (!interpolator)
      return interpolator.error();
    Result<Estimate> e = interpolator->estimateTime(intraNodeQuery(query, t));
    if (e)
      return e;
    why = "the tables do not cover it: " + e.error().message;
  }
  Result<Estimate> e =
      intraNodeCollectiveEstimate(hw, query.op, query.bytes, t.group_size);
  if (e)
    e->explanation.note += " (" + why + ")";
  return e;
}

/// nodes > 1: the S-curve model alone; nodes = 1: table, else NVLink model.
Result<Estimate> topologyEstimate(OptionReader &reader) {
  Result<CollectiveQuery> query = collectiveQuery(reader);
  if (!query)
    return query.error();
  Result<HardwarePreset> hw = hardwareOption(reader);
  if (!hw)
    return hw.error();
  Result<Topology> t = topologyOption(reader, *hw);
  if (!t)
    return t.error();
  Result<EstimateMode> mode = modeOption(reader);
  if (!mode)
    return mode.error();
  Result<SolConfig> sol = solOption(reader, *hw, *t);
  if (!sol)
    return sol.error();
  if (t->nodes == 1)
    return intraNodeEstimate(reader, *query, *t, *hw);
  return solTopologyEstimate(*sol, query->op, query->bytes, t->group_size,
                             t->nodes);
}

std::string estimateCollectiveReply(std::string_view options_json) {
  json options = detail::parseJson(options_json);
  OptionReader reader(options);
  reader.rejectUnknown(detail::fields::kCollectiveOptions);
  if (!reader.ok())
    return errorReply(reader.error());
  if (reader.get("group_size") || reader.get("nodes"))
    return estimateReply(topologyEstimate(reader));
  Result<CollectiveQuery> query = collectiveQuery(reader);
  if (!query)
    return errorReply(query.error().message);
  bool default_table = false;
  Result<PerfTable> table = tableOption(reader, default_table);
  if (!table)
    return errorReply(table.error().message);
  Result<CollectiveInterpolatorOptions> interp_options =
      collectiveOptions(reader, default_table);
  if (!interp_options)
    return errorReply(interp_options.error().message);
  auto interpolator = CollectiveInterpolator::create(*table, *interp_options);
  if (!interpolator)
    return errorReply(interpolator.error().message);
  return estimateReply(interpolator->estimateTime(*query));
}

/// Dims and dtypes of a GEMM query ("dtype" sets all three).
Result<GemmQuery> gemmQuery(OptionReader &reader) {
  GemmQuery query;
  reader.integer("b", query.dims.b, 1);
  reader.requiredInteger("m", query.dims.m, 1);
  reader.requiredInteger("k", query.dims.k, 1);
  reader.requiredInteger("n", query.dims.n, 1);
  std::string dtype = "bf16";
  reader.string("dtype", dtype);
  query.lhs_dtype = query.rhs_dtype = query.out_dtype = dtype;
  reader.string("lhs_dtype", query.lhs_dtype);
  reader.string("rhs_dtype", query.rhs_dtype);
  reader.string("out_dtype", query.out_dtype);
  std::string dtypes;
  reader.string("dtypes", dtypes);
  if (!reader.ok())
    return makeError(reader.error());
  if (!dtypes.empty()) {
    Result<std::vector<std::string>> parts = splitGemmDtypeKey(dtypes);
    if (!parts)
      return makeError("options.dtypes: " + parts.error().message);
    query.lhs_dtype = (*parts)[0];
    query.rhs_dtype = (*parts)[1];
    query.out_dtype = (*parts)[2];
  }
  return query;
}

std::string estimateGemmReply(std::string_view options_json) {
  json options = detail::parseJson(options_json);
  OptionReader reader(options);
  reader.rejectUnknown(detail::fields::kGemmOptions);
  if (!reader.ok())
    return errorReply(reader.error());
  Result<GemmQuery> query = gemmQuery(reader);
  if (!query)
    return errorReply(query.error().message);
  Result<HardwarePreset> hw = hardwareOption(reader);
  if (!hw)
    return errorReply(hw.error().message);
  bool default_table = false;
  Result<PerfTable> table = tableOption(reader, default_table);
  Result<EstimateMode> mode = modeOption(reader);
  // Every table is read per dtype key; XLA's user-profile path (nearest
  // neighbour on byte-normalised dims, all dtypes in one point set) only
  // when asked for.
  std::string kind = "default";
  reader.string("table_kind", kind);
  MatmulOptions matmul;
  reader.boolean("dtype_fallback", matmul.dtype_fallback);
  if (!table || !mode || !reader.ok())
    return errorReply(!table  ? table.error().message
                      : !mode ? mode.error().message
                              : reader.error());
  if (kind != "default" && kind != "user")
    return errorReply("options.table_kind: expected \"default\" or \"user\"");
  matmul.kind =
      kind == "default" ? GemmTableKind::Default : GemmTableKind::UserProfiles;
  matmul.mode = *mode;
  matmul.min_time_us = hw->kernel_launch_us;
  auto interpolator = MatmulInterpolator::create(*table, matmul);
  if (!interpolator)
    return errorReply(interpolator.error().message);
  const bool combined = reader.get("hardware") && !default_table;
  return estimateReply(interpolator->estimateTime(*query),
                       combined ? deviceMismatch(*hw, *table) : "");
}

std::string hardwarePresetsReply() {
  json presets = json::array();
  for (const std::string &name : hardwarePresetNames()) {
    Result<HardwarePreset> hw = findHardwarePreset(name);
    if (!hw)
      continue;
    presets.push_back({{"name", hw->name},
                       {"device_name", hw->device_name},
                       {"sm_version", hw->sm_version},
                       {"hbm_bytes_per_s", hw->hbm_bytes_per_s},
                       {"nvlink_bytes_per_s", hw->nvlink_bytes_per_s},
                       {"gpus_per_node", hw->gpus_per_node},
                       {"peak_flop_per_s", hw->peak_flop_per_s},
                       {"kernel_launch_us", hw->kernel_launch_us},
                       {"gemm_rates", presetGemmSource(*hw)},
                       {"nic_bytes_per_s", hw->nic_bytes_per_s},
                       {"device_memory_bytes", hw->device_memory_bytes},
                       {"sources", hw->sources},
                       {"source", hw->source}});
  }
  return dumpReply({{"ok", true}, {"presets", presets}});
}

} // namespace

std::string loadTableJson(std::string_view text,
                          std::string_view options_json) {
  return guarded([&] { return loadTableReply(text, options_json); });
}

std::string hardwarePresetsJson() {
  return guarded([] { return hardwarePresetsReply(); });
}

std::string estimateCollectiveJson(std::string_view options_json) {
  return guarded([&] { return estimateCollectiveReply(options_json); });
}

std::string estimateGemmJson(std::string_view options_json) {
  return guarded([&] { return estimateGemmReply(options_json); });
}

} // namespace shardlab::api
