// XLA's mesh-and-axes sharding strings (HloShardingV3): written from a
// sharding and its mesh (hloShardingV3Text), and read back into shardings
// over inline meshes (parseHloShardingV3).
#include "sharding/hlo_sharding.h"

#include <cctype>

namespace shardlab {

namespace {

class V3Reader {
public:
  explicit V3Reader(std::string_view text) : text_(text) {}

  std::optional<std::vector<TensorSharding>> read(std::string &error) {
    std::vector<TensorSharding> out;
    skip();
    if (peek(1) == '{') { // a tuple: {{...}, {...}}
      expect('{');
      do {
        std::optional<TensorSharding> one = sharding();
        if (!one)
          break;
        out.push_back(std::move(*one));
      } while (accept(','));
      if (error_.empty())
        expect('}');
    } else if (std::optional<TensorSharding> one = sharding()) {
      out.push_back(std::move(*one));
    }
    skip();
    if (error_.empty() && pos_ != text_.size())
      fail("unexpected text after the sharding");
    if (!error_.empty()) {
      error = "HloShardingV3 string, column " + std::to_string(pos_ + 1) +
              ": " + error_;
      return std::nullopt;
    }
    return out;
  }

private:
  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;

  void fail(std::string message) {
    if (error_.empty())
      error_ = std::move(message);
  }
  void skip() {
    while (pos_ < text_.size() && std::isspace((unsigned char)text_[pos_]))
      ++pos_;
  }
  // The character `ahead` places on, after spaces (0 at the end).
  char peek(size_t ahead = 0) {
    skip();
    size_t at = pos_;
    for (size_t i = 0; i < ahead && at < text_.size(); ++i) {
      ++at;
      while (at < text_.size() && std::isspace((unsigned char)text_[at]))
        ++at;
    }
    return at < text_.size() ? text_[at] : 0;
  }
  bool accept(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  bool expect(char c) {
    if (accept(c))
      return true;
    fail(std::string("expected '") + c + "'");
    return false;
  }
  std::string word() {
    skip();
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum((unsigned char)text_[pos_]) ||
                                   text_[pos_] == '_' || text_[pos_] == '.'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  std::string name() {
    if (!accept('\''))
      return word();
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '\'')
      ++pos_;
    std::string out(text_.substr(start, pos_ - start));
    expect('\'');
    return out;
  }
  std::optional<int64_t> number() {
    std::string digits = word();
    if (digits.empty() ||
        digits.find_first_not_of("0123456789") != std::string::npos ||
        digits.size() > 18) {
      fail("expected a number");
      return std::nullopt;
    }
    return std::stoll(digits);
  }

  // `{'x', 'y':(2)2, ?}`; `open` tells whether a `?` closed it.
  std::vector<AxisRef> axisList(bool &open) {
    std::vector<AxisRef> axes;
    open = false;
    if (!expect('{'))
      return axes;
    if (accept('}'))
      return axes;
    do {
      if (accept('?')) {
        open = true;
        continue;
      }
      AxisRef axis{name(), std::nullopt};
      if (axis.name.empty()) {
        fail("expected an axis name");
        return axes;
      }
      if (accept(':')) {
        expect('(');
        std::optional<int64_t> pre = number();
        expect(')');
        std::optional<int64_t> size = number();
        if (pre && size)
          axis.sub = SubAxisInfo{*pre, *size};
      }
      axes.push_back(std::move(axis));
    } while (error_.empty() && accept(','));
    expect('}');
    return axes;
  }

  std::optional<TensorSharding> sharding() {
    TensorSharding out;
    out.mesh.inline_mesh = Mesh{};
    if (!expect('{'))
      return std::nullopt;
    const std::string kind = word();
    if (kind == "maximal_mesh" || kind == "single_device") {
      expect('[');
      if (word() != "device_id")
        fail("expected device_id");
      expect('=');
      if (std::optional<int64_t> id = number())
        out.mesh.inline_mesh->device_ids = {*id};
      expect(']');
      expect('}');
      return error_.empty() ? std::optional(out) : std::nullopt;
    }
    if (kind != "mesh") {
      fail("expected mesh, maximal_mesh or single_device");
      return std::nullopt;
    }
    meshAxes(*out.mesh.inline_mesh);
    while (error_.empty() && accept(',')) {
      if (peek() == '[') {
        dims(out);
        continue;
      }
      const std::string key = word();
      if (key == "replicated" && peek() != '=')
        continue; // `{mesh[], replicated}`: every dim replicated
      if (!expect('='))
        break;
      bool open = false;
      if (key == "replicated")
        out.replicated = axisList(open);
      else if (key == "unreduced")
        out.unreduced = axisList(open);
      else
        fail("unknown field '" + key + "'");
    }
    expect('}');
    return error_.empty() ? std::optional(out) : std::nullopt;
  }

  void meshAxes(Mesh &mesh) {
    expect('[');
    if (accept(']'))
      return;
    do {
      MeshAxis axis{name(), 1};
      expect('=');
      if (std::optional<int64_t> size = number())
        axis.size = *size;
      mesh.axes.push_back(std::move(axis));
    } while (error_.empty() && accept(','));
    expect(']');
  }

  void dims(TensorSharding &out) {
    expect('[');
    if (accept(']'))
      return;
    do {
      DimSharding dim;
      bool open = false;
      dim.axes = axisList(open);
      dim.closed = !open;
      out.dims.push_back(std::move(dim));
    } while (error_.empty() && accept(','));
    expect(']');
  }
};

} // namespace

Result<std::vector<TensorSharding>> parseHloShardingV3(std::string_view text) {
  std::string error;
  std::optional<std::vector<TensorSharding>> shardings =
      V3Reader(text).read(error);
  if (!shardings)
    return makeError(error);
  return std::move(*shardings);
}

namespace {

std::string v3Axis(const AxisRef &axis) {
  std::string out = "'" + axis.name + "'";
  if (axis.sub)
    out += ":(" + std::to_string(axis.sub->pre_size) + ")" +
           std::to_string(axis.sub->size);
  return out;
}

std::string v3AxisList(const std::vector<AxisRef> &axes, bool open) {
  std::string out = "{";
  for (size_t i = 0; i < axes.size(); ++i)
    out += (i ? ", " : "") + v3Axis(axes[i]);
  if (open)
    out += axes.empty() ? "?" : ", ?";
  return out + "}";
}

} // namespace

std::string hloShardingV3Text(const TensorSharding &sharding, const Mesh &mesh,
                              bool simplify_replicated) {
  if (mesh.isMaximal())
    return "{single_device[device_id=" + std::to_string(mesh.device_ids[0]) +
           "]}";
  bool trivial = sharding.unreduced.empty();
  for (const DimSharding &dim : sharding.dims)
    trivial = trivial && dim.axes.empty() && dim.closed;
  if (simplify_replicated && trivial)
    return "{mesh[], replicated}";
  std::string out = "{mesh[";
  for (size_t i = 0; i < mesh.axes.size(); ++i)
    out += (i ? "," : "") + std::string("'") + mesh.axes[i].name +
           "'=" + std::to_string(mesh.axes[i].size);
  out += "], [";
  for (size_t d = 0; d < sharding.dims.size(); ++d)
    out += (d ? ", " : "") +
           v3AxisList(sharding.dims[d].axes, !sharding.dims[d].closed);
  out += "]";
  if (!sharding.replicated.empty())
    out += ", replicated=" + v3AxisList(sharding.replicated, false);
  if (!sharding.unreduced.empty())
    out += ", unreduced=" + v3AxisList(sharding.unreduced, false);
  return out + "}";
}

} // namespace shardlab
