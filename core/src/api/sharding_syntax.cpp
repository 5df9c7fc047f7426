// Sharding and mesh attribute text <-> JSON values, through the core's
// parser (parseAttributeText) and printer (sharding/format.h).
#include "shardlab/api/sharding_syntax.h"

#include "guard.h"
#include "json_options.h"
#include "request_fields.h"
#include "shardlab/sharding/format.h"
#include "shardlab/text/text.h"

#include <array>

namespace shardlab::api {
namespace {

using detail::dumpReply;
using detail::errorReply;
using detail::guarded;
using detail::json;

constexpr std::array<ReductionKind, 3> kReductionKinds = {
    ReductionKind::Sum, ReductionKind::Max, ReductionKind::Min};

// ---- values -> JSON

json axisJson(const AxisRef &axis) {
  json out = {{"name", axis.name}};
  if (axis.sub)
    out["sub"] = {{"pre_size", axis.sub->pre_size}, {"size", axis.sub->size}};
  return out;
}

json axesJson(const std::vector<AxisRef> &axes) {
  json out = json::array();
  for (const AxisRef &axis : axes)
    out.push_back(axisJson(axis));
  return out;
}

json meshJson(const Mesh &mesh) {
  json axes = json::array();
  for (const MeshAxis &axis : mesh.axes)
    axes.push_back({{"name", axis.name}, {"size", axis.size}});
  return {{"axes", axes}, {"device_ids", mesh.device_ids}};
}

json shardingJson(const TensorSharding &sharding) {
  json dims = json::array();
  for (const DimSharding &dim : sharding.dims) {
    json d = {{"axes", axesJson(dim.axes)}, {"closed", dim.closed}};
    if (dim.priority)
      d["priority"] = *dim.priority;
    dims.push_back(d);
  }
  json mesh = sharding.mesh.inline_mesh
                  ? json{{"inline", meshJson(*sharding.mesh.inline_mesh)}}
                  : json{{"symbol", sharding.mesh.symbol}};
  return {{"mesh", mesh},
          {"dims", dims},
          {"replicated", axesJson(sharding.replicated)},
          {"unreduced", axesJson(sharding.unreduced)},
          {"unreduced_kind", reductionKindName(sharding.unreduced_kind)}};
}

/// One body parsed as `#<mnemonic><body>`: {"ok", <key>: value} or the
/// parser's error.
json parseOne(const json &body, const char *mnemonic, const char *key) {
  if (!body.is_string())
    return {{"ok", false}, {"error", "expected the text of an attribute"}};
  // The attribute lives in the context: keep it alive while reading it.
  auto context = std::make_shared<Context>();
  Result<const Attr *> parsed = parseAttributeText(
      std::string(mnemonic) + body.get<std::string>(), context);
  if (!parsed)
    return {{"ok", false}, {"error", parsed.error().message}};
  const Attr *attr = *parsed;
  if (attr->kind == AttrKind::Sharding && std::string_view(key) == "sharding")
    return {{"ok", true}, {key, shardingJson(attr->sharding())}};
  if (attr->kind == AttrKind::Mesh && std::string_view(key) == "mesh")
    return {{"ok", true}, {key, meshJson(attr->mesh())}};
  return {{"ok", false}, {"error", std::string("expected a ") + key}};
}

// ---- JSON -> values (an error naming the field)

Result<AxisRef> readAxis(const json &j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() ||
      j["name"].get<std::string>().empty())
    return makeError("an axis is {\"name\": non-empty text, \"sub\"?: {...}}");
  AxisRef axis;
  axis.name = j["name"].get<std::string>();
  if (!j.contains("sub"))
    return axis;
  const json &sub = j["sub"];
  if (!sub.is_object() || !sub.value("pre_size", json()).is_number_integer() ||
      !sub.value("size", json()).is_number_integer() ||
      sub["pre_size"].get<int64_t>() < 1 || sub["size"].get<int64_t>() < 1)
    return makeError("a sub-axis is {\"pre_size\": >= 1, \"size\": >= 1}");
  axis.sub =
      SubAxisInfo{sub["pre_size"].get<int64_t>(), sub["size"].get<int64_t>()};
  return axis;
}

Result<std::vector<AxisRef>> readAxes(const json &j) {
  if (!j.is_array())
    return makeError("expected an array of axes");
  std::vector<AxisRef> axes;
  for (const json &one : j) {
    Result<AxisRef> axis = readAxis(one);
    if (!axis)
      return axis.error();
    axes.push_back(std::move(*axis));
  }
  return axes;
}

Result<Mesh> readMesh(const json &j) {
  if (!j.is_object() || !j.value("axes", json()).is_array())
    return makeError(
        "a mesh is {\"axes\": [{\"name\", \"size\"}], \"device_ids\"}");
  Mesh mesh;
  for (const json &axis : j["axes"]) {
    if (!axis.is_object() || !axis.value("name", json()).is_string() ||
        !axis.value("size", json()).is_number_integer() ||
        axis["size"].get<int64_t>() < 1)
      return makeError("a mesh axis is {\"name\": text, \"size\": >= 1}");
    mesh.axes.push_back(
        {axis["name"].get<std::string>(), axis["size"].get<int64_t>()});
  }
  if (j.contains("device_ids") &&
      !detail::readIntegerArray(j["device_ids"], mesh.device_ids))
    return makeError("device_ids: expected an array of device ids");
  return mesh;
}

Result<MeshRef> readMeshRef(const json &j) {
  MeshRef ref;
  if (j.is_object() && j.value("symbol", json()).is_string() &&
      !j["symbol"].get<std::string>().empty()) {
    ref.symbol = j["symbol"].get<std::string>();
    return ref;
  }
  if (!j.is_object() || !j.contains("inline"))
    return makeError("mesh: expected {\"symbol\": name} or {\"inline\": mesh}");
  Result<Mesh> mesh = readMesh(j["inline"]);
  if (!mesh)
    return mesh.error();
  ref.inline_mesh = std::move(*mesh);
  return ref;
}

Result<ReductionKind> readReductionKind(const json &j) {
  if (j.is_null())
    return ReductionKind::Sum;
  for (ReductionKind kind : kReductionKinds)
    if (j.is_string() && j.get<std::string>() == reductionKindName(kind))
      return kind;
  return makeError("unreduced_kind: expected \"sum\", \"max\" or \"min\"");
}

Result<DimSharding> readDim(const json &d) {
  if (!d.is_object())
    return makeError("a dim is {\"axes\", \"closed\", \"priority\"?}");
  Result<std::vector<AxisRef>> axes = readAxes(d.value("axes", json()));
  if (!axes)
    return axes.error();
  DimSharding dim;
  dim.axes = std::move(*axes);
  dim.closed = d.value("closed", true);
  if (d.contains("priority")) {
    if (!d["priority"].is_number_integer() || d["priority"].get<int64_t>() < 0)
      return makeError("priority: expected an integer >= 0");
    dim.priority = d["priority"].get<int64_t>();
  }
  return dim;
}

Result<TensorSharding> readSharding(const json &j) {
  if (!j.is_object())
    return makeError("a sharding is an object");
  TensorSharding sharding;
  Result<MeshRef> mesh = readMeshRef(j.value("mesh", json()));
  if (!mesh)
    return mesh.error();
  sharding.mesh = std::move(*mesh);
  const json dims = j.value("dims", json());
  if (!dims.is_array())
    return makeError("dims: expected an array");
  for (const json &d : dims) {
    Result<DimSharding> dim = readDim(d);
    if (!dim)
      return dim.error();
    sharding.dims.push_back(std::move(*dim));
  }
  Result<std::vector<AxisRef>> replicated =
      readAxes(j.value("replicated", json::array()));
  Result<std::vector<AxisRef>> unreduced =
      readAxes(j.value("unreduced", json::array()));
  Result<ReductionKind> kind =
      readReductionKind(j.value("unreduced_kind", json()));
  if (!replicated)
    return replicated.error();
  if (!unreduced)
    return unreduced.error();
  if (!kind)
    return kind.error();
  sharding.replicated = std::move(*replicated);
  sharding.unreduced = std::move(*unreduced);
  sharding.unreduced_kind = *kind;
  return sharding;
}

/// The request object with only `fields`, each an array.
Result<json> readRequest(std::string_view request_json,
                         std::span<const std::string_view> fields) {
  json request = detail::parseJson(request_json);
  detail::OptionReader reader(request);
  reader.rejectUnknown(fields);
  if (!reader.ok())
    return makeError(reader.error());
  for (const char *key : {"shardings", "meshes"})
    if (request.contains(key) && !request[key].is_array())
      return makeError(std::string("options.") + key + ": expected an array");
  return request;
}

std::string parseReply(std::string_view request_json) {
  Result<json> read =
      readRequest(request_json, detail::fields::kParseShardingsRequest);
  if (!read)
    return errorReply(read.error().message);
  const json &request = *read;
  json shardings = json::array(), meshes = json::array();
  for (const json &body : request.value("shardings", json::array()))
    shardings.push_back(parseOne(body, "#sdy.sharding", "sharding"));
  for (const json &body : request.value("meshes", json::array()))
    meshes.push_back(parseOne(body, "#sdy.mesh", "mesh"));
  return dumpReply(
      {{"ok", true}, {"shardings", shardings}, {"meshes", meshes}});
}

std::string printReply(std::string_view request_json) {
  Result<json> read =
      readRequest(request_json, detail::fields::kPrintShardingsRequest);
  if (!read)
    return errorReply(read.error().message);
  const json &request = *read;
  json shardings = json::array(), meshes = json::array();
  const json none = json::array();
  const json &sharding_values = request.value("shardings", none);
  for (size_t i = 0; i < sharding_values.size(); ++i) {
    Result<TensorSharding> sharding = readSharding(sharding_values[i]);
    if (!sharding)
      return errorReply("shardings[" + std::to_string(i) +
                        "]: " + sharding.error().message);
    shardings.push_back(shardingBodyToString(*sharding));
  }
  const json &mesh_values = request.value("meshes", none);
  for (size_t i = 0; i < mesh_values.size(); ++i) {
    Result<Mesh> mesh = readMesh(mesh_values[i]);
    if (!mesh)
      return errorReply("meshes[" + std::to_string(i) +
                        "]: " + mesh.error().message);
    meshes.push_back(meshBodyToString(*mesh));
  }
  return dumpReply(
      {{"ok", true}, {"shardings", shardings}, {"meshes", meshes}});
}

} // namespace

std::string parseShardingsJson(std::string_view request_json) {
  return guarded([&] { return parseReply(request_json); });
}

std::string printShardingsJson(std::string_view request_json) {
  return guarded([&] { return printReply(request_json); });
}

} // namespace shardlab::api
