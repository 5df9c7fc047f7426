#include "rules/gather_scatter_dims.h"

#include "rules/stablehlo_attrs.h"

namespace shardlab {

namespace {

std::string_view attrName(bool scatter) {
  return scatter ? "scatter_dimension_numbers" : "dimension_numbers";
}

} // namespace

std::optional<GatherScatterDims> readGatherScatterDims(const Operation &op) {
  if (!op.is("stablehlo.gather") && !op.is("stablehlo.scatter"))
    return std::nullopt;
  const bool scatter = op.is("stablehlo.scatter");
  const Attr *attr = rules::findAttr(op, attrName(scatter));
  if (!attr || attr->kind != AttrKind::Opaque)
    return std::nullopt;
  std::optional<GatherScatterDims> dims = parseGatherScatterDims(attr->text);
  if (!dims || dims->scatter != scatter)
    return std::nullopt;
  return dims;
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
