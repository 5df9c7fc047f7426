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
  std::string error;
  // The attribute lives in the context: keep it alive while reading it.
  auto context = std::make_shared<Context>();
  const Attr *attr = parseAttributeText(
      std::string(mnemonic) + body.get<std::string>(), context, error);
  if (!attr)
    return {{"ok", false}, {"error", error}};
  if (attr->kind == AttrKind::Sharding && std::string_view(key) == "sharding")
    return {{"ok", true}, {key, shardingJson(attr->sharding())}};
  if (attr->kind == AttrKind::Mesh && std::string_view(key) == "mesh")
    return {{"ok", true}, {key, meshJson(attr->mesh())}};
  return {{"ok", false}, {"error", std::string("expected a ") + key}};
}

// ---- JSON -> values (false with `error` naming the field)

bool readAxis(const json &j, AxisRef &axis, std::string &error) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() ||
      j["name"].get<std::string>().empty()) {
    error = "an axis is {\"name\": non-empty text, \"sub\"?: {...}}";
    return false;
  }
  axis.name = j["name"].get<std::string>();
  if (!j.contains("sub"))
    return true;
  const json &sub = j["sub"];
  if (!sub.is_object() || !sub.value("pre_size", json()).is_number_integer() ||
      !sub.value("size", json()).is_number_integer() ||
      sub["pre_size"].get<int64_t>() < 1 || sub["size"].get<int64_t>() < 1) {
    error = "a sub-axis is {\"pre_size\": >= 1, \"size\": >= 1}";
    return false;
  }
  axis.sub =
      SubAxisInfo{sub["pre_size"].get<int64_t>(), sub["size"].get<int64_t>()};
  return true;
}

bool readAxes(const json &j, std::vector<AxisRef> &axes, std::string &error) {
  if (!j.is_array()) {
    error = "expected an array of axes";
    return false;
  }
  for (const json &one : j) {
    axes.emplace_back();
    if (!readAxis(one, axes.back(), error))
      return false;
  }
  return true;
}

bool readMesh(const json &j, Mesh &mesh, std::string &error) {
  if (!j.is_object() || !j.value("axes", json()).is_array()) {
    error = "a mesh is {\"axes\": [{\"name\", \"size\"}], \"device_ids\"}";
    return false;
  }
  for (const json &axis : j["axes"]) {
    if (!axis.is_object() || !axis.value("name", json()).is_string() ||
        !axis.value("size", json()).is_number_integer() ||
        axis["size"].get<int64_t>() < 1) {
      error = "a mesh axis is {\"name\": text, \"size\": >= 1}";
      return false;
    }
    mesh.axes.push_back(
        {axis["name"].get<std::string>(), axis["size"].get<int64_t>()});
  }
  if (j.contains("device_ids") &&
      !detail::readIntegerArray(j["device_ids"], mesh.device_ids)) {
    error = "device_ids: expected an array of device ids";
    return false;
  }
  return true;
}

bool readMeshRef(const json &j, MeshRef &ref, std::string &error) {
  if (j.is_object() && j.value("symbol", json()).is_string() &&
      !j["symbol"].get<std::string>().empty()) {
    ref.symbol = j["symbol"].get<std::string>();
    return true;
  }
  if (j.is_object() && j.contains("inline")) {
    ref.inline_mesh.emplace();
    return readMesh(j["inline"], *ref.inline_mesh, error);
  }
  error = "mesh: expected {\"symbol\": name} or {\"inline\": mesh}";
  return false;
}

bool readReductionKind(const json &j, ReductionKind &kind, std::string &error) {
  if (j.is_null())
    return true;
  for (ReductionKind k : kReductionKinds)
    if (j.is_string() && j.get<std::string>() == reductionKindName(k)) {
      kind = k;
      return true;
    }
  error = "unreduced_kind: expected \"sum\", \"max\" or \"min\"";
  return false;
}

bool readDims(const json &j, std::vector<DimSharding> &dims,
              std::string &error) {
  if (!j.is_array()) {
    error = "dims: expected an array";
    return false;
  }
  for (const json &d : j) {
    DimSharding dim;
    if (!d.is_object()) {
      error = "a dim is {\"axes\", \"closed\", \"priority\"?}";
      return false;
    }
    if (!readAxes(d.value("axes", json()), dim.axes, error))
      return false;
    dim.closed = d.value("closed", true);
    if (d.contains("priority")) {
      if (!d["priority"].is_number_integer() ||
          d["priority"].get<int64_t>() < 0) {
        error = "priority: expected an integer >= 0";
        return false;
      }
      dim.priority = d["priority"].get<int64_t>();
    }
    dims.push_back(std::move(dim));
  }
  return true;
}

bool readSharding(const json &j, TensorSharding &sharding, std::string &error) {
  if (!j.is_object()) {
    error = "a sharding is an object";
    return false;
  }
  return readMeshRef(j.value("mesh", json()), sharding.mesh, error) &&
         readDims(j.value("dims", json()), sharding.dims, error) &&
         readAxes(j.value("replicated", json::array()), sharding.replicated,
                  error) &&
         readAxes(j.value("unreduced", json::array()), sharding.unreduced,
                  error) &&
         readReductionKind(j.value("unreduced_kind", json()),
                           sharding.unreduced_kind, error);
}

/// The request object, or an error reply in `reply`.
bool readRequest(std::string_view request_json,
                 std::span<const std::string_view> fields, json &request,
                 std::string &reply) {
  request = detail::parseJson(request_json);
  detail::OptionReader reader(request);
  reader.rejectUnknown(fields);
  if (!reader.ok()) {
    reply = errorReply(reader.error());
    return false;
  }
  for (const char *key : {"shardings", "meshes"})
    if (request.contains(key) && !request[key].is_array()) {
      reply = errorReply(std::string("options.") + key + ": expected an array");
      return false;
    }
  return true;
}

std::string parseReply(std::string_view request_json) {
  json request;
  std::string reply;
  if (!readRequest(request_json, detail::fields::kParseShardingsRequest,
                   request, reply))
    return reply;
  json shardings = json::array(), meshes = json::array();
  for (const json &body : request.value("shardings", json::array()))
    shardings.push_back(parseOne(body, "#sdy.sharding", "sharding"));
  for (const json &body : request.value("meshes", json::array()))
    meshes.push_back(parseOne(body, "#sdy.mesh", "mesh"));
  return dumpReply(
      {{"ok", true}, {"shardings", shardings}, {"meshes", meshes}});
}

std::string printReply(std::string_view request_json) {
  json request;
  std::string reply;
  if (!readRequest(request_json, detail::fields::kPrintShardingsRequest,
                   request, reply))
    return reply;
  json shardings = json::array(), meshes = json::array();
  std::string error;
  const json none = json::array();
  const json &sharding_values = request.value("shardings", none);
  for (size_t i = 0; i < sharding_values.size(); ++i) {
    TensorSharding sharding;
    if (!readSharding(sharding_values[i], sharding, error))
      return errorReply("shardings[" + std::to_string(i) + "]: " + error);
    shardings.push_back(shardingBodyToString(sharding));
  }
  const json &mesh_values = request.value("meshes", none);
  for (size_t i = 0; i < mesh_values.size(); ++i) {
    Mesh mesh;
    if (!readMesh(mesh_values[i], mesh, error))
      return errorReply("meshes[" + std::to_string(i) + "]: " + error);
    meshes.push_back(meshBodyToString(mesh));
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
