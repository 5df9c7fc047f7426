// GSPMD sharding strings: XLA's HloSharding text (`{devices=[2,2]<=[4]}`,
// explicit device lists, subgroups, tuples) read and converted to shardings
// over one mesh, and a sharding written back as the canonical text (which
// reuses the reader's iota expansion to check a device list). The
// mesh-and-axes form (HloShardingV3) is in hlo_sharding_v3.cpp.
#include "sharding/hlo_sharding.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace shardlab {

size_t HloSharding::numTensorDims() const {
  size_t subgroups = subgroup_kinds.size() + (last_tile_dim_replicate ? 1 : 0);
  return tile_dims.size() >= subgroups ? tile_dims.size() - subgroups : 0;
}

bool HloSharding::isManualSubgroup(size_t dim) const {
  size_t first = numTensorDims();
  return dim >= first && dim - first < subgroup_kinds.size() &&
         subgroup_kinds[dim - first] == "manual";
}

namespace {

// A cursor over the sharding text; every method reports what it expected.
class Reader {
public:
  Reader(std::string_view text, std::string &error)
      : text_(text), error_(error) {}

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(uchar(text_[pos_])))
      ++pos_;
  }
  bool atEnd() {
    skipSpace();
    return pos_ >= text_.size();
  }
  bool tryChar(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool expectChar(char c) {
    return tryChar(c) || fail(std::string("expected '") + c + "'");
  }
  bool tryWord(std::string_view word) {
    skipSpace();
    if (text_.substr(pos_, word.size()) != word)
      return false;
    size_t end = pos_ + word.size();
    if (end < text_.size() &&
        (std::isalnum(uchar(text_[end])) || text_[end] == '_'))
      return false;
    pos_ = end;
    return true;
  }
  std::string_view word() {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(uchar(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }
  bool integer(int64_t &value) {
    skipSpace();
    size_t start = pos_;
    value = 0;
    while (pos_ < text_.size() && std::isdigit(uchar(text_[pos_]))) {
      if (value > (int64_t{1} << 40))
        return fail("number too large");
      value = value * 10 + (text_[pos_++] - '0');
    }
    return pos_ > start || fail("expected a number");
  }
  /// `[a, b, c]` or, with `close` = ')', `(a, b)`.
  bool list(std::vector<int64_t> &values, char open, char close) {
    if (!expectChar(open))
      return false;
    if (tryChar(close))
      return true;
    do {
      int64_t v = 0;
      if (!integer(v))
        return false;
      values.push_back(v);
    } while (tryChar(','));
    return expectChar(close);
  }
  /// Skips a balanced `{...}` (metadata).
  bool skipBraces() {
    if (!expectChar('{'))
      return false;
    int depth = 1;
    bool quoted = false;
    while (pos_ < text_.size() && depth > 0) {
      char c = text_[pos_++];
      if (quoted) {
        if (c == '\\')
          ++pos_;
        else if (c == '"')
          quoted = false;
      } else if (c == '"') {
        quoted = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      }
    }
    return depth == 0 || fail("unterminated '{'");
  }
  char peek() {
    skipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool fail(std::string message) {
    if (error_.empty())
      error_ = message + " at offset " + std::to_string(pos_);
    return false;
  }

private:
  static unsigned char uchar(char c) { return static_cast<unsigned char>(c); }
  std::string_view text_;
  std::string &error_;
  size_t pos_ = 0;
};

int64_t product(const std::vector<int64_t> &values) {
  int64_t p = 1;
  for (int64_t v : values)
    p *= v;
  return p;
}

// The devices of `<=[reshape]T(perm)` in the order of the tile grid.
bool iotaDevices(const std::vector<int64_t> &reshape,
                 const std::vector<int64_t> &perm, std::vector<int64_t> &out,
                 Reader &reader) {
  const size_t rank = reshape.size();
  if (perm.size() != rank)
    return reader.fail("the transpose has " + std::to_string(perm.size()) +
                       " dims, the reshape " + std::to_string(rank));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < rank; ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      return reader.fail("the transpose is not a permutation");
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank; i-- > 1;)
    stride[i - 1] = stride[i] * reshape[i];
  const int64_t n = product(reshape);
  out.assign(static_cast<size_t>(n), 0);
  std::vector<int64_t> index(rank, 0);
  for (int64_t cell = 0; cell < n; ++cell) {
    int64_t device = 0;
    for (size_t k = 0; k < rank; ++k)
      device += index[k] * stride[static_cast<size_t>(perm[k])];
    out[static_cast<size_t>(cell)] = device;
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < reshape[static_cast<size_t>(perm[k])])
        break;
      index[k] = 0;
    }
  }
  return true;
}

bool parseTiled(Reader &reader, HloSharding &s) {
  s.kind = HloSharding::Kind::Tiled;
  if (!reader.expectChar('=') || !reader.list(s.tile_dims, '[', ']'))
    return false;
  for (int64_t d : s.tile_dims)
    if (d < 1)
      return reader.fail("tile dims must be positive");
  const int64_t n = product(s.tile_dims);
  if (n > (int64_t{1} << 20))
    return reader.fail("more than 2^20 devices");
  if (reader.tryChar('<')) {
    std::vector<int64_t> reshape, perm;
    if (!reader.expectChar('=') || !reader.list(reshape, '[', ']'))
      return false;
    if (reader.peek() == 'T') {
      reader.tryWord("T");
      if (!reader.list(perm, '(', ')'))
        return false;
    } else {
      for (size_t i = 0; i < reshape.size(); ++i)
        perm.push_back(static_cast<int64_t>(i));
    }
    for (int64_t d : reshape)
      if (d < 1)
        return reader.fail("reshape dims must be positive");
    if (product(reshape) != n)
      return reader.fail("the iota has " + std::to_string(product(reshape)) +
                         " devices, the tile dims " + std::to_string(n));
    return iotaDevices(reshape, perm, s.devices, reader);
  }
  do {
    int64_t device = 0;
    if (!reader.integer(device))
      return false;
    s.devices.push_back(device);
  } while (reader.tryChar(','));
  if (static_cast<int64_t>(s.devices.size()) != n)
    return reader.fail("expected " + std::to_string(n) + " devices, got " +
                       std::to_string(s.devices.size()));
  return true;
}

bool parseOne(Reader &reader, HloSharding &s, int depth);

bool parseTuple(Reader &reader, HloSharding &s, int depth) {
  s.kind = HloSharding::Kind::Tuple;
  if (reader.peek() == '}')
    return reader.expectChar('}');
  do {
    HloSharding element;
    if (!parseOne(reader, element, depth + 1))
      return false;
    s.tuple.push_back(std::move(element));
  } while (reader.tryChar(','));
  return reader.expectChar('}');
}

bool parseOne(Reader &reader, HloSharding &s, int depth) {
  if (depth > 8)
    return reader.fail("tuples nested too deeply");
  if (!reader.expectChar('{'))
    return false;
  if (reader.peek() == '{' || reader.peek() == '}')
    return parseTuple(reader, s, depth);
  std::string_view kind = reader.word();
  if (kind == "replicated") {
    s.kind = HloSharding::Kind::Replicated;
  } else if (kind == "unknown") {
    s.kind = HloSharding::Kind::Unknown;
  } else if (kind == "manual") {
    s.kind = HloSharding::Kind::Manual;
  } else if (kind == "maximal") {
    s.kind = HloSharding::Kind::Maximal;
    if (!reader.tryWord("device") || !reader.expectChar('=') ||
        !reader.integer(s.device))
      return reader.fail("expected 'device=N' after 'maximal'");
  } else if (kind == "devices") {
    if (!parseTiled(reader, s))
      return false;
  } else {
    return reader.fail("expected replicated, unknown, manual, maximal or "
                       "devices=[...]");
  }
  while (!reader.tryChar('}')) {
    std::string_view option = reader.word();
    if (option == "last_tile_dim_replicate") {
      s.last_tile_dim_replicate = true;
    } else if (option == "last_tile_dims") {
      if (!reader.expectChar('=') || !reader.expectChar('{'))
        return false;
      do {
        std::string_view sub = reader.word();
        if (sub != "manual" && sub != "replicated")
          return reader.fail("expected manual or replicated");
        s.subgroup_kinds.emplace_back(sub);
      } while (reader.tryChar(','));
      if (!reader.expectChar('}'))
        return false;
    } else if (option == "metadata") {
      if (!reader.expectChar('=') || !reader.skipBraces())
        return false;
    } else {
      return reader.fail(option.empty() ? "expected '}'"
                                        : "unknown sharding option '" +
                                              std::string(option) + "'");
    }
  }
  if (s.kind == HloSharding::Kind::Tiled &&
      s.subgroup_kinds.size() + (s.last_tile_dim_replicate ? 1 : 0) >
          s.tile_dims.size())
    return reader.fail("more subgroup dims than tile dims");
  return true;
}

} // namespace

Result<HloSharding> parseHloSharding(std::string_view text) {
  std::string error;
  Reader reader(text, error);
  HloSharding sharding;
  if (!parseOne(reader, sharding, 0))
    return makeError(error);
  if (!reader.atEnd()) {
    reader.fail("unexpected text after the sharding");
    return makeError(error);
  }
  return sharding;
}

std::optional<std::vector<std::vector<TilePiece>>>
tilePieces(const HloSharding &s) {
  const std::vector<int64_t> &devices = s.devices;
  const int64_t n = static_cast<int64_t>(devices.size());
  std::vector<bool> seen(devices.size(), false);
  for (int64_t d : devices) {
    if (d < 0 || d >= n || seen[static_cast<size_t>(d)])
      return std::nullopt;
    seen[static_cast<size_t>(d)] = true;
  }
  const size_t rank = s.tile_dims.size();
  std::vector<int64_t> cell_stride(rank, 1);
  for (size_t i = rank; i-- > 1;)
    cell_stride[i - 1] = cell_stride[i] * s.tile_dims[i];
  std::vector<std::vector<TilePiece>> pieces(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t size = s.tile_dims[d];
    auto delta = [&](int64_t i) {
      return devices[static_cast<size_t>(i * cell_stride[d])] - devices[0];
    };
    // Runs of one stride, minor first; each run as long as it stays linear
    // and divides what is left of the dim.
    int64_t pos = 1;
    while (pos < size) {
      const int64_t stride = delta(pos);
      const int64_t left = size / pos;
      int64_t run = 1;
      while (run < left && delta(pos * run) == run * stride)
        ++run;
      while (left % run != 0)
        --run;
      if (run < 2 || stride <= 0)
        return std::nullopt;
      pieces[d].push_back({run, stride});
      pos *= run;
    }
    std::reverse(pieces[d].begin(), pieces[d].end());
  }
  // The pieces must give every cell's device.
  std::vector<int64_t> index(rank, 0);
  for (int64_t cell = 0; cell < n; ++cell) {
    int64_t device = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t rest = index[d];
      for (size_t p = pieces[d].size(); p-- > 0;) {
        device += (rest % pieces[d][p].size) * pieces[d][p].stride;
        rest /= pieces[d][p].size;
      }
    }
    if (device != devices[static_cast<size_t>(cell)])
      return std::nullopt;
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < s.tile_dims[d])
        break;
      index[d] = 0;
    }
  }
  return pieces;
}

Result<Mesh> commonMesh(const std::vector<const HloSharding *> &tiled,
                        std::string_view prefix) {
  Mesh mesh;
  if (tiled.empty())
    return mesh;
  const int64_t n = static_cast<int64_t>(tiled.front()->devices.size());
  std::vector<int64_t> cuts = {1, n};
  for (const HloSharding *s : tiled) {
    if (static_cast<int64_t>(s->devices.size()) != n) {
      return makeError("shardings over " + std::to_string(n) + " and " +
                       std::to_string(s->devices.size()) +
                       " devices cannot share one mesh");
    }
    auto pieces = tilePieces(*s);
    if (!pieces) {
      return makeError(
          "a tile assignment is not a mixed-radix numbering of the "
          "devices, so no mesh axes express it");
    }
    for (const auto &dim : *pieces)
      for (const TilePiece &piece : dim) {
        cuts.push_back(piece.stride);
        cuts.push_back(piece.stride * piece.size);
      }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t i = 1; i < cuts.size(); ++i)
    if (cuts[i] % cuts[i - 1] != 0) {
      return makeError("the tile assignments split the devices at strides " +
                       std::to_string(cuts[i - 1]) + " and " +
                       std::to_string(cuts[i]) + ", which no one mesh has");
    }
  for (size_t i = cuts.size() - 1; i > 0; --i)
    mesh.axes.push_back(
        {std::string(prefix) + std::to_string(cuts.size() - 1 - i),
         cuts[i] / cuts[i - 1]});
  return mesh;
}

Result<TensorSharding> toTensorSharding(const HloSharding &s, const Mesh &mesh,
                                        const std::string &mesh_name,
                                        int64_t rank,
                                        std::vector<std::string> *manual_axes) {
  TensorSharding out;
  out.mesh.symbol = mesh_name;
  if (s.kind == HloSharding::Kind::Replicated ||
      s.kind == HloSharding::Kind::Unknown ||
      s.kind == HloSharding::Kind::Manual) {
    out.dims.resize(static_cast<size_t>(std::max<int64_t>(rank, 0)));
    for (DimSharding &dim : out.dims)
      dim.closed = s.kind != HloSharding::Kind::Unknown;
    if (s.kind == HloSharding::Kind::Manual && manual_axes)
      for (const MeshAxis &axis : mesh.axes)
        manual_axes->push_back(axis.name.str());
    return out;
  }
  if (s.kind != HloSharding::Kind::Tiled) {
    return makeError("expected a tiled, replicated or unknown sharding");
  }
  if (static_cast<int64_t>(s.numTensorDims()) != rank) {
    return makeError("the sharding tiles " + std::to_string(s.numTensorDims()) +
                     " dims but the value has rank " + std::to_string(rank));
  }
  auto pieces = tilePieces(s);
  if (!pieces) {
    return makeError(
        "the tile assignment is not a mixed-radix numbering of the devices");
  }
  // Mesh axis k covers device strides [low[k], low[k] * size[k]).
  std::vector<int64_t> low(mesh.axes.size(), 1);
  for (size_t k = mesh.axes.size(); k-- > 1;)
    low[k - 1] = low[k] * mesh.axes[k].size;
  auto axes_of = [&](const TilePiece &piece) {
    std::vector<std::string> names;
    for (size_t k = 0; k < mesh.axes.size(); ++k)
      if (low[k] >= piece.stride &&
          low[k] * mesh.axes[k].size <= piece.stride * piece.size)
        names.push_back(mesh.axes[k].name.str());
    return names;
  };
  for (size_t d = 0; d < pieces->size(); ++d) {
    std::vector<std::string> names;
    for (const TilePiece &piece : (*pieces)[d])
      for (std::string &name : axes_of(piece))
        names.push_back(std::move(name));
    if (d < s.numTensorDims()) {
      DimSharding dim;
      for (std::string &name : names)
        dim.axes.push_back({std::move(name), std::nullopt});
      out.dims.push_back(std::move(dim));
    } else if (s.isManualSubgroup(d) && manual_axes) {
      for (std::string &name : names)
        manual_axes->push_back(std::move(name));
    }
  }
  return out;
}

namespace {

// One piece of a mesh axis: `[pre, pre * size)` of axis `axis`.
struct AxisPiece {
  size_t axis;
  int64_t pre, size;
};

// The mesh's axes cut at every sub-axis boundary `sharding` uses, in mesh
// order (major to minor within an axis).
std::vector<AxisPiece> meshPieces(const TensorSharding &sharding,
                                  const Mesh &mesh) {
  std::vector<std::vector<int64_t>> cuts(mesh.axes.size());
  auto note = [&](const AxisRef &ref) {
    int index = mesh.axisIndex(ref.name);
    if (index < 0 || !ref.sub)
      return;
    cuts[size_t(index)].push_back(ref.sub->pre_size);
    cuts[size_t(index)].push_back(ref.sub->pre_size * ref.sub->size);
  };
  for (const DimSharding &dim : sharding.dims)
    for (const AxisRef &ref : dim.axes)
      note(ref);
  for (const AxisRef &ref : sharding.replicated)
    note(ref);
  std::vector<AxisPiece> pieces;
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    std::vector<int64_t> &c = cuts[a];
    c.push_back(1);
    c.push_back(mesh.axes[a].size);
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    // Major pieces first: "x":(1)2 is the most major part of "x".
    for (size_t i = 1; i < c.size(); ++i)
      pieces.push_back({a, c[i - 1], c[i] / c[i - 1]});
  }
  return pieces;
}

// The pieces `ref` covers, in major-to-minor order.
std::vector<size_t> piecesOf(const AxisRef &ref, const Mesh &mesh,
                             const std::vector<AxisPiece> &pieces) {
  std::vector<size_t> out;
  int index = mesh.axisIndex(ref.name);
  if (index < 0)
    return out;
  const int64_t lo = ref.sub ? ref.sub->pre_size : 1;
  const int64_t hi =
      ref.sub ? lo * ref.sub->size : mesh.axes[size_t(index)].size;
  for (size_t p = 0; p < pieces.size(); ++p)
    if (pieces[p].axis == size_t(index) && pieces[p].pre >= lo &&
        pieces[p].pre * pieces[p].size <= hi)
      out.push_back(p);
  return out;
}

std::string joined(const std::vector<int64_t> &values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

// XLA's canonical iota: size-1 dims dropped, dims adjacent in both the
// reshape and the transpose merged; `<=[N]` when no transpose is left.
std::string iotaText(std::vector<int64_t> dims, std::vector<int64_t> perm) {
  for (size_t i = dims.size(); i-- > 0;)
    if (dims[i] == 1) {
      dims.erase(dims.begin() + long(i));
      perm.erase(std::find(perm.begin(), perm.end(), int64_t(i)));
      for (int64_t &p : perm)
        if (p > int64_t(i))
          --p;
    }
  for (size_t i = 0; i + 1 < perm.size();) {
    if (perm[i + 1] != perm[i] + 1) {
      ++i;
      continue;
    }
    const int64_t merged = perm[i + 1];
    dims[size_t(perm[i])] *= dims[size_t(merged)];
    dims.erase(dims.begin() + merged);
    perm.erase(perm.begin() + long(i) + 1);
    for (int64_t &p : perm)
      if (p > merged)
        --p;
  }
  int64_t total = 1;
  for (int64_t d : dims)
    total *= d;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == int64_t(i);
  if (identity)
    return "<=[" + std::to_string(total) + "]";
  return "<=[" + joined(dims) + "]T(" + joined(perm) + ")";
}

} // namespace

std::string hloShardingText(const TensorSharding &sharding, const Mesh &mesh,
                            const std::vector<std::string> &manual_axes) {
  if (mesh.isMaximal())
    return "{maximal device=" + std::to_string(mesh.device_ids[0]) + "}";
  const std::vector<AxisPiece> pieces = meshPieces(sharding, mesh);
  std::vector<bool> used(pieces.size(), false);
  std::vector<int64_t> tile_dims, perm;
  for (const DimSharding &dim : sharding.dims) {
    int64_t size = 1;
    for (const AxisRef &ref : dim.axes)
      for (size_t p : piecesOf(ref, mesh, pieces)) {
        size *= pieces[p].size;
        perm.push_back(int64_t(p));
        used[p] = true;
      }
    tile_dims.push_back(size);
  }
  const bool sharded = !perm.empty();
  auto is_manual = [&](size_t p) {
    return std::find(manual_axes.begin(), manual_axes.end(),
                     mesh.axes[pieces[p].axis].name) != manual_axes.end();
  };
  int64_t manual = 1, replicated = 1;
  for (size_t p = 0; p < pieces.size(); ++p)
    if (!used[p] && is_manual(p)) {
      manual *= pieces[p].size;
      perm.push_back(int64_t(p));
    }
  for (size_t p = 0; p < pieces.size(); ++p)
    if (!used[p] && !is_manual(p)) {
      replicated *= pieces[p].size;
      perm.push_back(int64_t(p));
    }
  if (!sharded && manual == 1)
    return "{replicated}";
  if (!sharded && replicated == 1)
    return "{manual}";
  std::vector<std::string> groups;
  if (manual > 1) {
    tile_dims.push_back(manual);
    groups.push_back("manual");
  }
  if (replicated > 1) {
    tile_dims.push_back(replicated);
    groups.push_back("replicated");
  }
  std::vector<int64_t> dims;
  for (const AxisPiece &piece : pieces)
    dims.push_back(piece.size);
  std::string devices;
  if (mesh.device_ids.empty()) {
    devices = iotaText(dims, perm);
  } else {
    // Explicit ids: the iota's devices mapped through them.
    HloSharding iota;
    std::string error;
    Reader reader(devices, error);
    iotaDevices(dims, perm, iota.devices, reader);
    for (int64_t &d : iota.devices)
      d = mesh.device_ids[size_t(d)];
    // XLA lists the devices of each replication group in order.
    if (replicated > 1)
      for (size_t at = 0; at < iota.devices.size(); at += size_t(replicated))
        std::sort(iota.devices.begin() + long(at),
                  iota.devices.begin() + long(at) + replicated);
    devices = joined(iota.devices);
  }
  std::string text = "{devices=[" + joined(tile_dims) + "]" + devices;
  if (groups.size() == 1 && groups[0] == "replicated")
    text += " last_tile_dim_replicate";
  else if (!groups.empty())
    text += groups.size() == 2 ? " last_tile_dims={manual, replicated}"
                               : " last_tile_dims={manual}";
  return text + "}";
}

} // namespace shardlab
