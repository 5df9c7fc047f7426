// Splitting and rewriting the opaque text of StableHLO's
// replica_group_mesh_axes and mesh attributes (see replica_group_mesh.h).
#include "passes/replica_group_mesh.h"
#include "passes/pass_utils.h"

#include <cctype>
#include <charconv>

namespace shardlab {

namespace {

constexpr std::string_view kReplicaGroupPrefix =
    "#stablehlo.replica_group_mesh_axes<";
constexpr std::string_view kStablehloMeshPrefix = "#stablehlo.mesh<";

// Index of the first top-level ',' or closing '>' at or after `pos`, outside
// quotes and nested brackets; npos when the text ends first.
size_t findTopLevelEnd(std::string_view text, size_t pos) {
  int depth = 0;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '"') {
      for (++pos; pos < text.size() && text[pos] != '"'; ++pos)
        if (text[pos] == '\\')
          ++pos;
      continue;
    }
    if (c == '<' || c == '[' || c == '(' || c == '{')
      ++depth;
    else if ((c == ',' || c == '>') && depth == 0)
      return pos;
    else if (c == '>' || c == ']' || c == ')' || c == '}')
      --depth;
  }
  return std::string_view::npos;
}

size_t skipSpaces(std::string_view text, size_t pos) {
  while (pos < text.size() &&
         std::isspace(static_cast<unsigned char>(text[pos])))
    ++pos;
  return pos;
}

// After `key` and `=` (spaces allowed) at `pos`; npos when absent.
size_t afterKeyEquals(std::string_view text, size_t pos, std::string_view key) {
  pos = skipSpaces(text, pos);
  if (text.substr(pos, key.size()) != key)
    return std::string_view::npos;
  pos = skipSpaces(text, pos + key.size());
  if (pos >= text.size() || text[pos] != '=')
    return std::string_view::npos;
  return skipSpaces(text, pos + 1);
}

std::optional<int64_t> readInt(std::string_view text, size_t &pos) {
  int64_t value = 0;
  auto [end, error] =
      std::from_chars(text.data() + pos, text.data() + text.size(), value);
  if (error != std::errc())
    return std::nullopt;
  pos = static_cast<size_t>(end - text.data());
  return value;
}

// The axes in `[...]`: every `name = "x"` followed by `size = N`.
std::optional<std::vector<MeshAxis>> parseAxes(std::string_view list) {
  std::vector<MeshAxis> axes;
  size_t pos = 0;
  while ((pos = list.find("name", pos)) != std::string_view::npos) {
    size_t quote = afterKeyEquals(list, pos, "name");
    if (quote == std::string_view::npos || list[quote] != '"')
      return std::nullopt;
    size_t close = list.find('"', quote + 1);
    size_t size_pos =
        close == std::string_view::npos ? close : list.find("size", close);
    if (size_pos == std::string_view::npos)
      return std::nullopt;
    size_t value_pos = afterKeyEquals(list, size_pos, "size");
    if (value_pos == std::string_view::npos)
      return std::nullopt;
    std::optional<int64_t> size = readInt(list, value_pos);
    if (!size)
      return std::nullopt;
    axes.push_back(
        {std::string(list.substr(quote + 1, close - quote - 1)), *size});
    pos = value_pos;
  }
  return axes;
}

// `dense<[1, 0]> : tensor<2xi64>` or the splat `dense<7> : tensor<1xi64>`.
std::optional<std::vector<int64_t>> parseDeviceIds(std::string_view text) {
  size_t open = text.find("dense<");
  size_t close = text.find('>', open);
  if (open == std::string_view::npos || close == std::string_view::npos)
    return std::nullopt;
  std::string_view body = text.substr(open + 6, close - open - 6);
  std::vector<int64_t> ids;
  for (size_t pos = 0; pos < body.size();) {
    if (std::isdigit(static_cast<unsigned char>(body[pos])) ||
        body[pos] == '-') {
      std::optional<int64_t> id = readInt(body, pos);
      if (!id)
        return std::nullopt;
      ids.push_back(*id);
    } else {
      ++pos;
    }
  }
  return ids;
}

} // namespace

std::optional<std::string> ReplicaGroupMeshAxesText::symbol() const {
  if (mesh.size() < 2 || mesh[0] != '@')
    return std::nullopt;
  return mesh.substr(1);
}

bool isReplicaGroupMeshCollective(const Operation &op) {
  for (std::string_view kind : kReplicaGroupMeshCollectives)
    if (op.is(kind))
      return true;
  return false;
}

bool mayHoldReplicaGroupMeshes(const Module &module) {
  for (std::string_view kind : kReplicaGroupMeshCollectives)
    if (mayContain(module, {kind}))
      return true;
  return false;
}

std::optional<ReplicaGroupMeshAxesText>
splitReplicaGroupMeshAxes(std::string_view text) {
  if (text.substr(0, kReplicaGroupPrefix.size()) != kReplicaGroupPrefix)
    return std::nullopt;
  size_t start = afterKeyEquals(text, kReplicaGroupPrefix.size(), "mesh");
  if (start == std::string_view::npos)
    return std::nullopt;
  size_t end = findTopLevelEnd(text, start);
  if (end == std::string_view::npos)
    return std::nullopt;
  return ReplicaGroupMeshAxesText{std::string(text.substr(0, start)),
                                  std::string(text.substr(start, end - start)),
                                  std::string(text.substr(end))};
}

std::optional<Mesh> parseStablehloMesh(std::string_view text) {
  if (text.substr(0, kStablehloMeshPrefix.size()) != kStablehloMeshPrefix)
    return std::nullopt;
  size_t list = afterKeyEquals(text, kStablehloMeshPrefix.size(), "axes");
  if (list == std::string_view::npos || text[list] != '[')
    return std::nullopt;
  size_t list_end = findTopLevelEnd(text, list);
  if (list_end == std::string_view::npos)
    return std::nullopt;
  std::optional<std::vector<MeshAxis>> axes =
      parseAxes(text.substr(list, list_end - list));
  if (!axes)
    return std::nullopt;
  Mesh mesh;
  mesh.axes = std::move(*axes);
  if (text[list_end] == ',') {
    std::optional<std::vector<int64_t>> ids =
        parseDeviceIds(text.substr(list_end));
    if (!ids)
      return std::nullopt;
    mesh.device_ids = std::move(*ids);
  }
  return mesh;
}

std::string printStablehloMesh(const Mesh &mesh) {
  std::string out(kStablehloMeshPrefix);
  out += "axes=[";
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    out += i ? ", <name = \"" : "<name = \"";
    out += mesh.axes[i].name +
           "\", size = " + std::to_string(mesh.axes[i].size) + ">";
  }
  out += "]";
  if (!mesh.device_ids.empty()) {
    out += ", device_ids=dense<";
    bool splat = mesh.device_ids.size() == 1;
    out += splat ? "" : "[";
    for (size_t i = 0; i < mesh.device_ids.size(); ++i)
      out += (i ? ", " : "") + std::to_string(mesh.device_ids[i]);
    out += splat ? "" : "]";
    out += "> : tensor<" + std::to_string(mesh.device_ids.size()) + "xi64>";
  }
  return out + ">";
}

} // namespace shardlab
