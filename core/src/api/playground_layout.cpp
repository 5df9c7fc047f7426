// The device layout of one value: for every device of the value's mesh, its
// coordinates on the mesh axes, the shard it holds (an index per tensor
// dimension, from the axes sharding that dimension, major to minor) and
// that shard's offsets and sizes; plus the local (per-device) shape.
#include "shardlab/api/playground_api.h"

#include "guard.h"
#include "passes/pass_utils.h"
#include "playground_internal.h"
#include "request_fields.h"
#include "sharding/device_layout.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

#include <algorithm>

namespace shardlab::api {
namespace {

using detail::dumpReply;
using detail::guarded;
using detail::json;
using detail::OptionReader;

// Which shard the device at mesh position `index` holds: the same
// definition the partitioner writes into its offset tables.
json deviceJson(const Mesh &mesh, const TensorSharding &sharding,
                const std::vector<int64_t> &shape, int64_t index) {
  std::vector<int64_t> coords = meshCoordinates(mesh, index);
  std::vector<int64_t> shard, offsets, sizes;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t position = 0, shards = 1;
    if (d < sharding.dims.size()) {
      position = indexAlongAxes(mesh, sharding.dims[d].axes, coords);
      shards = axesTotalSize(sharding.dims[d].axes, mesh);
    }
    int64_t local = shape[d] < 0 ? -1 : (shape[d] + shards - 1) / shards;
    int64_t offset = local < 0 ? 0 : std::min(position * local, shape[d]);
    shard.push_back(position);
    offsets.push_back(offset);
    sizes.push_back(local < 0 ? -1 : std::min(local, shape[d] - offset));
  }
  return {{"id", deviceIdAt(mesh, index)},
          {"coords", coords},
          {"shard", shard},
          {"offsets", offsets},
          {"sizes", sizes}};
}

json meshJson(const TensorSharding &sharding, const Mesh &mesh) {
  json axes = json::array();
  for (const MeshAxis &axis : mesh.axes)
    axes.push_back({{"name", axis.name}, {"size", axis.size}});
  return {{"name", sharding.mesh.symbol},
          {"axes", axes},
          {"device_ids", mesh.device_ids},
          {"text", meshToString(mesh)}};
}

json layoutJson(Module &module, Value &value) {
  json reply = {
      {"ok", true},
      {"value",
       {{"line", value.loc.line},
        {"column", value.loc.col},
        {"kind", value.isBlockArgument() ? "argument" : "result"},
        {"index", value.index}}},
      {"op", value.defining_op ? std::string(value.defining_op->name) : ""},
      {"sharding", ""},
      {"devices", json::array()}};
  if (!value.type || !value.type->isRankedTensor())
    return reply;
  const std::vector<int64_t> &shape = value.type->shape;
  reply["shape"] = shape;
  reply["local_shape"] = shape;
  const TensorSharding *sharding = getSharding(&value);
  const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
  if (!sharding || !mesh)
    return reply;
  reply["sharding"] = shardingToString(*sharding);
  reply["local_shape"] = localShape(shape, *sharding, *mesh);
  reply["mesh"] = meshJson(*sharding, *mesh);
  json dims = json::array();
  for (const DimSharding &dim : sharding->dims)
    dims.push_back({{"axes", detail::axesJson(dim.axes)},
                    {"shards", shardedSize(dim, *mesh)},
                    {"closed", dim.closed}});
  reply["dims"] = dims;
  reply["replicated"] = detail::axesJson(sharding->replicated);
  reply["unreduced"] = detail::axesJson(sharding->unreduced);
  for (int64_t d = 0; d < mesh->totalSize() && d < 4096; ++d)
    reply["devices"].push_back(deviceJson(*mesh, *sharding, shape, d));
  return reply;
}

std::string layoutReply(std::string_view text, std::string_view options_json,
                        ViewCache *cache) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return detail::errorReply("options: expected a JSON object");
  OptionReader reader(options);
  reader.rejectUnknown(detail::fields::kValueLayoutRequest);
  detail::Position position;
  if (!detail::positionOption(reader, position))
    return detail::errorReply(reader.error());
  const json *before_flag = reader.get("before");
  bool before =
      before_flag && before_flag->is_boolean() && before_flag->get<bool>();
  std::shared_ptr<detail::BeforeAfter> cached =
      detail::parseBothCached(text, reader, cache);
  detail::BeforeAfter &both = *cached;
  if (!both.after)
    return dumpReply(detail::failureReply(both.error, both.diagnostics, text));
  Value *value = detail::findValue(*both.before, position);
  Value *shown =
      value && !before ? detail::sameValue(*both.after, *value) : value;
  if (!shown)
    return detail::errorReply("no value at line " +
                              std::to_string(position.line));
  return dumpReply(layoutJson(before ? *both.before : *both.after, *shown));
}

} // namespace

std::string valueLayoutJson(std::string_view text,
                            std::string_view options_json, ViewCache *cache) {
  return guarded([&] { return layoutReply(text, options_json, cache); });
}

} // namespace shardlab::api
