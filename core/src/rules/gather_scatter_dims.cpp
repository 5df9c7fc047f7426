#include "rules/gather_scatter_dims.h"

#include "rules/stablehlo_attrs.h"

namespace shardlab {

namespace {

// One list field: its gather and scatter spellings and where it is kept.
struct ListField {
  const char *gather;
  const char *scatter;
  std::vector<int64_t> GatherScatterDims::*member;
};

// In the order StableHLO declares (and prints) them.
const ListField kListFields[] = {
    {"offset_dims", "update_window_dims", &GatherScatterDims::offset_dims},
    {"collapsed_slice_dims", "inserted_window_dims",
     &GatherScatterDims::collapsed_dims},
    {"operand_batching_dims", "input_batching_dims",
     &GatherScatterDims::operand_batching_dims},
    {"start_indices_batching_dims", "scatter_indices_batching_dims",
     &GatherScatterDims::indices_batching_dims},
    {"start_index_map", "scatter_dims_to_operand_dims",
     &GatherScatterDims::index_map},
};

const char *kIndexVectorDim = "index_vector_dim";

std::string_view attrName(bool scatter) {
  return scatter ? "scatter_dimension_numbers" : "dimension_numbers";
}

void appendList(std::string &out, const std::vector<int64_t> &values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(values[i]);
  }
  out += ']';
}

// Moves the known fields of `fields` into `dims`; false if one is left.
bool takeFields(rules::DimNumberFields &fields, GatherScatterDims &dims) {
  for (const ListField &field : kListFields) {
    auto it = fields.find(dims.scatter ? field.scatter : field.gather);
    if (it == fields.end())
      continue;
    dims.*field.member = std::move(it->second);
    fields.erase(it);
  }
  auto it = fields.find(kIndexVectorDim);
  if (it != fields.end()) {
    if (it->second.size() != 1)
      return false;
    dims.index_vector_dim = it->second[0];
    fields.erase(it);
  }
  return fields.empty();
}

} // namespace

std::optional<GatherScatterDims> readGatherScatterDims(const Operation &op) {
  if (!op.is("stablehlo.gather") && !op.is("stablehlo.scatter"))
    return std::nullopt;
  GatherScatterDims dims;
  dims.scatter = op.is("stablehlo.scatter");
  const Attr *attr = rules::findAttr(op, attrName(dims.scatter));
  if (!attr || attr->kind != AttrKind::Opaque)
    return std::nullopt;
  std::optional<rules::DimNumberFields> fields =
      rules::parseDimNumberFields(attr->text);
  if (!fields || !takeFields(*fields, dims))
    return std::nullopt;
  return dims;
}

std::string formatGatherScatterDims(const GatherScatterDims &dims) {
  std::string out = dims.scatter ? "#stablehlo.scatter<" : "#stablehlo.gather<";
  const char *separator = "";
  for (const ListField &field : kListFields) {
    const std::vector<int64_t> &values = dims.*field.member;
    if (values.empty())
      continue;
    out += separator;
    out += dims.scatter ? field.scatter : field.gather;
    out += " = ";
    appendList(out, values);
    separator = ", ";
  }
  if (dims.index_vector_dim != 0) {
    out += separator;
    out += kIndexVectorDim;
    out += " = " + std::to_string(dims.index_vector_dim);
  }
  return out + '>';
}

void writeGatherScatterDims(Operation &op, const GatherScatterDims &dims,
                            Context &ctx) {
  std::string_view name = ctx.intern(attrName(dims.scatter));
  const Attr *attr = ctx.attrs.opaque(formatGatherScatterDims(dims));
  if (op.props().get(name))
    op.mutableProps().set(name, attr);
  else
    op.attrs.set(name, attr);
}

} // namespace shardlab
