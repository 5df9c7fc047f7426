// JSON entry points over the cost model: table loading and validation
// (shardlab JSON, XLA text-proto), hardware presets, collective and GEMM
// estimates with their explanations.
#include "guard.h"
#include "json_options.h"
#include "shardlab/api/api.h"
#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/hardware.h"
#include "shardlab/cost/perf_table.h"
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
  if (format.empty() || format == "auto")
    format = detectFormat(text);
  Result<PerfTable> table = MakeError("");
  if (format == "shardlab")
    table = ParsePerfTable(text);
  else if (format == "xla-collective")
    table = ImportXlaCollectiveProfiles(text, device, partition);
  else if (format == "xla-gemm")
    table = ImportXlaGemmTable(text, device);
  else
    return MakeError("options.format: expected \"auto\", \"shardlab\", "
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
    gemm_keys.insert(GemmDtypeKey(e));
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
      {"table", detail::parseJson(SerializePerfTable(loaded->table))}};
  if (loaded->format != "shardlab") {
    Result<std::vector<std::string>> keys = ListXlaDeviceKeys(text);
    reply["devices"] = keys ? json(*keys) : json::array();
  }
  return dumpReply(reply);
}

/// The "table" option (object or text), else the hardware's analytical one.
Result<PerfTable> tableOption(OptionReader &reader, bool &is_default) {
  is_default = false;
  if (const json *table = reader.get("table")) {
    std::string text = table->is_string() ? table->get<std::string>()
                                          : detail::dumpReply(*table);
    Result<LoadedTable> loaded = loadTable(text, "auto", "", 8);
    if (!loaded)
      return MakeError("options.table: " + loaded.error().message);
    return std::move(loaded->table);
  }
  std::string hardware = "h100";
  reader.string("hardware", hardware);
  Result<HardwarePreset> hw = FindHardwarePreset(hardware);
  if (!hw)
    return MakeError("options.hardware: " + hw.error().message);
  is_default = true;
  return GenerateAnalyticalTable(*hw);
}

Result<EstimateMode> modeOption(OptionReader &reader) {
  std::string mode = "compatible";
  reader.string("mode", mode);
  if (mode == "compatible")
    return EstimateMode::kCompatible;
  if (mode == "accurate")
    return EstimateMode::kAccurate;
  return MakeError("options.mode: expected \"compatible\" or \"accurate\"");
}

std::string estimateReply(const Result<Estimate> &estimate) {
  if (!estimate)
    return errorReply(estimate.error().message);
  json reply = detail::parseJson(ToJson(*estimate));
  if (!reply.is_object())
    return errorReply("estimate could not be rendered");
  reply["ok"] = true;
  return dumpReply(reply);
}

/// Replica groups from "[2,4]<=[8]" / "{{0,1},{2,3}}" or [[0,1],[2,3]].
Result<ReplicaGroups> groupsOption(const json *value) {
  if (!value)
    return ReplicaGroups{};
  if (value->is_string())
    return ParseReplicaGroups(value->get<std::string>());
  const char *expected = "options.replica_groups: expected a string or an "
                         "array of arrays of device ids";
  if (!value->is_array())
    return MakeError(expected);
  std::vector<std::vector<int64_t>> lists;
  for (const json &group : *value) {
    lists.emplace_back();
    if (!detail::readIntegerArray(group, lists.back()))
      return MakeError(expected);
  }
  return ReplicaGroups::FromLists(std::move(lists));
}

Result<SourceTargetPairs> pairsOption(const json *value) {
  SourceTargetPairs pairs;
  if (!value)
    return pairs;
  const char *expected = "options.source_target_pairs: expected an array "
                         "of [source, target] pairs";
  if (!value->is_array())
    return MakeError(expected);
  for (const json &pair : *value) {
    std::vector<int64_t> ids;
    if (!detail::readIntegerArray(pair, ids) || ids.size() != 2)
      return MakeError(expected);
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
    return MakeError(reader.error());
  Result<CollectiveOp> parsed_op = ParseCollectiveOp(op);
  if (!parsed_op)
    return MakeError("options.op: " + parsed_op.error().message);
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
    return MakeError(reader.error());
  if (interpolation == "grid-snap")
    options.interpolation = TableInterpolation::kGridSnap;
  else if (interpolation != "nearest")
    return MakeError("options.interpolation: expected \"nearest\" or "
                     "\"grid-snap\"");
  return options;
}

std::string estimateCollectiveReply(std::string_view options_json) {
  json options = detail::parseJson(options_json);
  OptionReader reader(options);
  if (!reader.ok())
    return errorReply(reader.error());
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
  auto interpolator = CollectiveInterpolator::Create(*table, *interp_options);
  if (!interpolator)
    return errorReply(interpolator.error().message);
  return estimateReply(interpolator->EstimateTime(*query));
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
  if (!reader.ok())
    return MakeError(reader.error());
  return query;
}

std::string estimateGemmReply(std::string_view options_json) {
  json options = detail::parseJson(options_json);
  OptionReader reader(options);
  if (!reader.ok())
    return errorReply(reader.error());
  Result<GemmQuery> query = gemmQuery(reader);
  if (!query)
    return errorReply(query.error().message);
  bool default_table = false;
  Result<PerfTable> table = tableOption(reader, default_table);
  Result<EstimateMode> mode = modeOption(reader);
  std::string kind = default_table ? "default" : "user";
  reader.string("table_kind", kind);
  if (!table || !mode || !reader.ok())
    return errorReply(!table  ? table.error().message
                      : !mode ? mode.error().message
                              : reader.error());
  if (kind != "default" && kind != "user")
    return errorReply("options.table_kind: expected \"default\" or \"user\"");
  auto interpolator = MatmulInterpolator::Create(
      *table,
      kind == "default" ? GemmTableKind::kDefault
                        : GemmTableKind::kUserProfiles,
      *mode);
  if (!interpolator)
    return errorReply(interpolator.error().message);
  return estimateReply(interpolator->EstimateTime(*query));
}

std::string hardwarePresetsReply() {
  json presets = json::array();
  for (const std::string &name : HardwarePresetNames()) {
    Result<HardwarePreset> hw = FindHardwarePreset(name);
    if (!hw)
      continue;
    presets.push_back({{"name", hw->name},
                       {"device_name", hw->device_name},
                       {"sm_version", hw->sm_version},
                       {"hbm_bytes_per_s", hw->hbm_bytes_per_s},
                       {"nvlink_bytes_per_s", hw->nvlink_bytes_per_s},
                       {"gpus_per_node", hw->gpus_per_node},
                       {"peak_flop_per_s", hw->peak_flop_per_s},
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
