#include "rules/stablehlo_attrs.h"

#include <cctype>
#include <cstdlib>

namespace shardlab::rules {

const Attr *findAttr(const Operation &op, std::string_view name) {
  if (const Attr *attr = op.attrs.get(name))
    return attr;
  return op.props().get(name);
}

std::optional<int64_t> intAttr(const Operation &op, std::string_view name) {
  const Attr *attr = findAttr(op, name);
  if (!attr || attr->kind != AttrKind::Integer)
    return std::nullopt;
  return attr->intValue();
}

bool boolAttr(const Operation &op, std::string_view name, bool fallback) {
  const Attr *attr = findAttr(op, name);
  if (!attr || attr->kind != AttrKind::Bool)
    return fallback;
  return attr->intValue() != 0;
}

std::string_view stringAttr(const Operation &op, std::string_view name) {
  const Attr *attr = findAttr(op, name);
  if (!attr || attr->kind != AttrKind::String)
    return {};
  return attr->str();
}

std::optional<std::vector<int64_t>> denseInts(const Attr &attr, size_t count) {
  const DenseReader reader = attr.denseReader();
  if (!reader.valid() || reader.size() == 0)
    return std::nullopt;
  std::vector<int64_t> values;
  const int64_t n =
      reader.isSplat() ? static_cast<int64_t>(count) : reader.size();
  for (int64_t i = 0; i < n; ++i)
    values.push_back(reader.intAt(reader.isSplat() ? 0 : i));
  return values;
}

std::vector<std::vector<int64_t>> denseIntRows(const Attr &attr) {
  std::vector<std::vector<int64_t>> rows;
  const DenseReader reader = attr.denseReader();
  if (!reader.valid() || !attr.type || attr.type->shape.size() != 2)
    return rows;
  const int64_t width = attr.type->shape[1];
  for (int64_t r = 0; r < attr.type->shape[0]; ++r) {
    std::vector<int64_t> row;
    for (int64_t c = 0; c < width; ++c) {
      const int64_t v = reader.intAt(reader.isSplat() ? 0 : r * width + c);
      if (v >= 0)
        row.push_back(v);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<std::vector<int64_t>> intsAttr(const Operation &op,
                                             std::string_view name) {
  const Attr *attr = findAttr(op, name);
  if (!attr)
    return std::nullopt;
  if (attr->kind == AttrKind::DenseArray)
    return attr->ints();
  if (attr->kind == AttrKind::DenseElements)
    return denseInts(*attr, 1);
  if (attr->kind != AttrKind::Array)
    return std::nullopt;
  std::vector<int64_t> values;
  for (const Attr *element : attr->elements()) {
    if (element->kind != AttrKind::Integer)
      return std::nullopt;
    values.push_back(element->intValue());
  }
  return values;
}

namespace {

// A tiny cursor over attribute text.
struct Cursor {
  std::string_view text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool tryChar(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool atEnd() {
    skipSpace();
    return pos >= text.size();
  }
  std::optional<int64_t> integer() {
    skipSpace();
    size_t start = pos;
    if (pos < text.size() && (text[pos] == '-' || text[pos] == '+'))
      ++pos;
    size_t digits = pos;
    while (pos < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[pos])))
      ++pos;
    if (pos == digits)
      return std::nullopt;
    return std::strtoll(std::string(text.substr(start, pos - start)).c_str(),
                        nullptr, 10);
  }
  std::string_view identifier() {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_'))
      ++pos;
    return text.substr(start, pos - start);
  }
  // `[1, 2]` or `[]`.
  std::optional<std::vector<int64_t>> intList() {
    std::vector<int64_t> values;
    if (!tryChar('['))
      return std::nullopt;
    if (tryChar(']'))
      return values;
    do {
      std::optional<int64_t> value = integer();
      if (!value)
        return std::nullopt;
      values.push_back(*value);
    } while (tryChar(','));
    if (!tryChar(']'))
      return std::nullopt;
    return values;
  }
};

// The text between the first '<' and the last '>' (the whole text when it
// has no angle brackets).
std::string_view angleBody(std::string_view text) {
  size_t open = text.find('<');
  size_t close = text.rfind('>');
  if (open == std::string_view::npos || close == std::string_view::npos ||
      close < open)
    return text;
  return text.substr(open + 1, close - open - 1);
}

} // namespace

std::optional<DimNumberFields> parseDimNumberFields(std::string_view text) {
  Cursor cursor{angleBody(text)};
  DimNumberFields fields;
  if (cursor.atEnd())
    return fields;
  do {
    std::string_view key = cursor.identifier();
    if (key.empty() || !cursor.tryChar('='))
      return std::nullopt;
    cursor.skipSpace();
    std::optional<std::vector<int64_t>> values;
    if (cursor.pos < cursor.text.size() && cursor.text[cursor.pos] == '[') {
      values = cursor.intList();
    } else if (std::optional<int64_t> value = cursor.integer()) {
      values = std::vector<int64_t>{*value};
    }
    if (!values)
      return std::nullopt;
    fields[std::string(key)] = std::move(*values);
  } while (cursor.tryChar(','));
  if (!cursor.atEnd())
    return std::nullopt;
  return fields;
}

std::optional<DotDims> dotDims(const Attr &attr) {
  DimNumberFields fields;
  if (attr.kind == AttrKind::Dict) {
    // The structured form: read the four lists straight from the entries.
    DotDims dims;
    for (const NamedAttr &entry : attr.entries()) {
      if (entry.value->kind != AttrKind::DenseArray)
        continue;
      if (entry.name == "lhs_batching_dimensions")
        dims.lhs_batching = entry.value->ints();
      else if (entry.name == "rhs_batching_dimensions")
        dims.rhs_batching = entry.value->ints();
      else if (entry.name == "lhs_contracting_dimensions")
        dims.lhs_contracting = entry.value->ints();
      else if (entry.name == "rhs_contracting_dimensions")
        dims.rhs_contracting = entry.value->ints();
    }
    if (dims.lhs_batching.size() != dims.rhs_batching.size() ||
        dims.lhs_contracting.size() != dims.rhs_contracting.size())
      return std::nullopt;
    return dims;
  }
  if (attr.kind == AttrKind::Opaque) {
    std::optional<DimNumberFields> parsed = parseDimNumberFields(attr.text);
    if (!parsed)
      return std::nullopt;
    fields = std::move(*parsed);
  } else {
    return std::nullopt;
  }
  auto get = [&](const char *key) {
    auto it = fields.find(key);
    return it == fields.end() ? std::vector<int64_t>() : it->second;
  };
  DotDims dims{get("lhs_batching_dimensions"), get("rhs_batching_dimensions"),
               get("lhs_contracting_dimensions"),
               get("rhs_contracting_dimensions")};
  if (dims.lhs_batching.size() != dims.rhs_batching.size() ||
      dims.lhs_contracting.size() != dims.rhs_contracting.size())
    return std::nullopt;
  return dims;
}

namespace {

// One `[b, 0, 1, f]` layout: letters name the batch/feature dimensions,
// numbers the spatial ones.
std::optional<std::vector<std::string_view>> layoutTokens(Cursor &cursor) {
  std::vector<std::string_view> tokens;
  if (!cursor.tryChar('['))
    return std::nullopt;
  do {
    std::string_view token = cursor.identifier();
    if (token.empty())
      return std::nullopt;
    tokens.push_back(token);
  } while (cursor.tryChar(','));
  if (!cursor.tryChar(']'))
    return std::nullopt;
  return tokens;
}

// Fills `spatial` and the two letter-named dimensions from `tokens`.
bool assignLayout(const std::vector<std::string_view> &tokens, char first,
                  char second, int64_t &first_dim, int64_t &second_dim,
                  std::vector<int64_t> &spatial) {
  if (tokens.size() < 2)
    return false;
  spatial.assign(tokens.size() - 2, -1);
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    std::string_view token = tokens[pos];
    int64_t dim = static_cast<int64_t>(pos);
    if (token.size() == 1 && token[0] == first) {
      first_dim = dim;
    } else if (token.size() == 1 && token[0] == second) {
      second_dim = dim;
    } else {
      int64_t index = std::strtoll(std::string(token).c_str(), nullptr, 10);
      if (!std::isdigit(static_cast<unsigned char>(token[0])) || index < 0 ||
          index >= static_cast<int64_t>(spatial.size()) || spatial[index] >= 0)
        return false;
      spatial[index] = dim;
    }
  }
  return first_dim >= 0 && second_dim >= 0;
}

std::optional<ConvDims> parseRawConvDims(std::string_view text) {
  Cursor cursor{text};
  auto lhs = layoutTokens(cursor);
  if (!lhs || cursor.identifier() != "x")
    return std::nullopt;
  auto rhs = layoutTokens(cursor);
  if (!rhs || !cursor.tryChar('-') || !cursor.tryChar('>'))
    return std::nullopt;
  auto out = layoutTokens(cursor);
  ConvDims dims;
  if (!out ||
      !assignLayout(*lhs, 'b', 'f', dims.input_batch, dims.input_feature,
                    dims.input_spatial) ||
      !assignLayout(*rhs, 'i', 'o', dims.kernel_input_feature,
                    dims.kernel_output_feature, dims.kernel_spatial) ||
      !assignLayout(*out, 'b', 'f', dims.output_batch, dims.output_feature,
                    dims.output_spatial))
    return std::nullopt;
  return dims;
}

std::optional<ConvDims> keyedConvDims(const DimNumberFields &fields) {
  auto one = [&](const char *key) -> int64_t {
    auto it = fields.find(key);
    return it == fields.end() || it->second.size() != 1 ? -1 : it->second[0];
  };
  auto list = [&](const char *key) {
    auto it = fields.find(key);
    return it == fields.end() ? std::vector<int64_t>() : it->second;
  };
  ConvDims dims{one("input_batch_dimension"),
                one("input_feature_dimension"),
                one("kernel_input_feature_dimension"),
                one("kernel_output_feature_dimension"),
                one("output_batch_dimension"),
                one("output_feature_dimension"),
                list("input_spatial_dimensions"),
                list("kernel_spatial_dimensions"),
                list("output_spatial_dimensions")};
  if (dims.input_batch < 0 || dims.input_feature < 0 ||
      dims.kernel_input_feature < 0 || dims.kernel_output_feature < 0 ||
      dims.output_batch < 0 || dims.output_feature < 0)
    return std::nullopt;
  return dims;
}

} // namespace

std::optional<ConvDims> parseConvDims(std::string_view text) {
  size_t bracket = text.find('[');
  size_t equals = text.find('=');
  if (bracket != std::string_view::npos &&
      (equals == std::string_view::npos || bracket < equals)) {
    std::optional<ConvDims> dims = parseRawConvDims(text.substr(bracket));
    if (dims && dims->input_spatial.size() == dims->kernel_spatial.size() &&
        dims->input_spatial.size() == dims->output_spatial.size())
      return dims;
    return std::nullopt;
  }
  // The keyed form is spelled `#stablehlo.conv<raw key = value, ...>`.
  std::string_view body = angleBody(text);
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body[0])))
    body.remove_prefix(1);
  if (body.rfind("raw", 0) == 0 && body.size() > 3 &&
      std::isspace(static_cast<unsigned char>(body[3])))
    body.remove_prefix(3);
  std::optional<DimNumberFields> fields = parseDimNumberFields(body);
  if (!fields)
    return std::nullopt;
  std::optional<ConvDims> dims = keyedConvDims(*fields);
  if (dims && dims->input_spatial.size() == dims->kernel_spatial.size() &&
      dims->input_spatial.size() == dims->output_spatial.size())
    return dims;
  return std::nullopt;
}

} // namespace shardlab::rules
