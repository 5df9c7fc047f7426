// Custom syntax of the sdy collectives: `<axes> %tensor out_sharding=<...>
// {attrs} : type`, where <axes> is `[{...}, ...]` (per dim), `{...}`, or the
// all_to_all parameter list `[{"x"}: 0->1, ...]`.
#include "ops_common.h"

namespace shardlab {

using namespace syntax;

namespace {

enum class AxesForm { PerDim, Flat, AllToAll, None };

struct CollectiveSpec {
  std::string_view name;
  std::string_view axes_attr;
  AxesForm form;
  bool has_kind;
};

const CollectiveSpec kCollectives[] = {
    {"sdy.all_gather", "gathering_axes", AxesForm::PerDim, false},
    {"sdy.all_slice", "slicing_axes", AxesForm::PerDim, false},
    {"sdy.all_reduce", "reduction_axes", AxesForm::Flat, true},
    {"sdy.reduce_scatter", "reduce_scatter_axes", AxesForm::PerDim, true},
    {"sdy.all_to_all", "params", AxesForm::AllToAll, false},
    {"sdy.collective_permute", "", AxesForm::None, false},
    {"sdy.sharded_to_unreduced", "axes", AxesForm::PerDim, false},
    {"sdy.replicated_to_unreduced", "axes", AxesForm::Flat, false},
};

// Shardy's reduction_op: a sum unless the custom form names max or min.
constexpr std::string_view kReductions[] = {"sum", "max", "min"};
constexpr EnumProperty kReductionOp{"reduction_kind", "reduction_op",
                                    kReductions, 0};

const CollectiveSpec &specOf(std::string_view name) {
  for (const CollectiveSpec &spec : kCollectives)
    if (spec.name == name)
      return spec;
  return kCollectives[0];
}

bool parseAxes(Parser &parser, Operation &op, const CollectiveSpec &spec) {
  Attr attr;
  if (spec.form == AxesForm::PerDim) {
    std::vector<std::vector<AxisRef>> dims;
    if (!parser.parseDimShardingListList(dims))
      return false;
    attr = Attr{AttrKind::AxisRefListList, std::move(dims), nullptr, {}};
  } else if (spec.form == AxesForm::Flat) {
    std::vector<AxisRef> axes;
    if (!parser.parseAxisRefList(axes))
      return false;
    attr = Attr{AttrKind::AxisRefList, std::move(axes), nullptr, {}};
  } else if (spec.form == AxesForm::AllToAll) {
    std::vector<AllToAllParam> params;
    if (!parser.parseAllToAllParamList(params))
      return false;
    attr = Attr{AttrKind::AllToAllParams, std::move(params), nullptr, {}};
  } else {
    return true;
  }
  setAttr(parser, op, spec.axes_attr, parser.ctx().attrs.make(std::move(attr)));
  return true;
}

bool parseCollective(Parser &parser, Operation &op, size_t) {
  const CollectiveSpec &spec = specOf(op.name);
  if (spec.has_kind)
    for (std::string_view kind : kReductions)
      if (parser.tryKeyword(kind))
        setAttr(parser, op, "reduction_kind",
                parser.ctx().attrs.string(std::string(kind)));
  Value *input = nullptr;
  if (!parseAxes(parser, op, spec) || !parser.parseOperand(input))
    return false;
  op.setOperands({input});
  Type type = nullptr;
  if (!parser.expectKeyword("out_sharding") || !parser.expectChar('=') ||
      !parseShardingAttr(parser, op, "out_sharding") ||
      !parser.parseOptionalAttrDict(op.attrs) || !parser.expectChar(':') ||
      !(type = parser.parseType()))
    return false;
  op.setResultTypes({type});
  return true;
}

void printAxes(Printer &printer, const Attr *attr, AxesForm form) {
  if (form == AxesForm::None)
    return;
  printer.printSdyListBody(*attr);
  printer << ' ';
}

void printCollective(Printer &printer, Operation &op) {
  const CollectiveSpec &spec = specOf(op.name);
  printer << ' ';
  const Attr *kind = op.attrs.get("reduction_kind");
  if (kind && kind->str() != "sum")
    printer << kind->str() << ' ';
  if (spec.form != AxesForm::None)
    printAxes(printer, op.attrs.get(spec.axes_attr), spec.form);
  printer.printValue(op.operand(0));
  printer << " out_sharding=";
  printer.printTensorSharding(op.attrs.get("out_sharding")->sharding());
  printer.printAttrDict(op.attrs,
                        {spec.axes_attr, "out_sharding", "reduction_kind"});
  printer << " : ";
  printer.printType(op.result(0)->type);
}

} // namespace

std::vector<OpInfo> sdyCollectiveOpInfos() {
  std::vector<OpInfo> infos;
  for (const CollectiveSpec &spec : kCollectives) {
    OpInfo info{spec.name, parseCollective, printCollective};
    info.inherent = {"out_sharding", "reduction_kind"};
    if (spec.has_kind)
      info.enum_property = &kReductionOp;
    if (!spec.axes_attr.empty())
      info.inherent.push_back(spec.axes_attr);
    infos.push_back(info);
  }
  return infos;
}

} // namespace shardlab
