// Custom syntax of the sdy ops, as their assembly formats in Shardy's
// ops.td print them.
#include "ops_common.h"

#include "ir/propagation_direction.h"

namespace shardlab {

using namespace syntax;

namespace {

AttrArena &arena(Parser &parser) { return parser.ctx().attrs; }

// `%in` then `: type` shared by the operand and the single result.
bool parseTypedOperand(Parser &parser, Operation &op, Value *&input) {
  if (!parser.parseOperand(input))
    return false;
  op.setOperands({input});
  return true;
}

bool parseColonResultType(Parser &parser, Operation &op) {
  Type type = nullptr;
  if (!parser.expectChar(':') || !(type = parser.parseType()))
    return false;
  op.setResultTypes({type});
  return true;
}

void printColonResultType(Printer &printer, Operation &op) {
  printer << " : ";
  printer.printType(op.numResults() ? op.result(0)->type : op.operand(0)->type);
}

// sdy.mesh @name = <...>
bool parseMeshOp(Parser &parser, Operation &op, size_t) {
  std::string name;
  if (!parser.parseSymbolName(name) || !parser.expectChar('='))
    return false;
  setAttr(parser, op, "sym_name", arena(parser).string(name));
  parser.tryPunct("#sdy.mesh"); // the attribute may be spelled out
  parser.mesh_error_prefix_ = "custom op 'sdy.mesh' ";
  Mesh mesh;
  bool ok = parser.parseMesh(mesh);
  parser.mesh_error_prefix_ = {};
  if (!ok)
    return false;
  Attr attr{AttrKind::Mesh, std::move(mesh), nullptr, {}};
  setAttr(parser, op, "mesh", arena(parser).make(std::move(attr)));
  op.setResultTypes({});
  return parser.parseOptionalAttrDict(op.attrs);
}

void printMeshOp(Printer &printer, Operation &op) {
  printer << ' ';
  appendSymbolName(printer.out(), op.attrs.get("sym_name")->str());
  printer << " = ";
  printer.printMesh(op.attrs.get("mesh")->mesh());
  printer.printAttrDict(op.attrs, {"sym_name", "mesh"});
}

// sdy.sharding_constraint / sdy.reshard: `%in <sharding> {attrs} : type`.
bool parseShardingOnOperand(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  return parseTypedOperand(parser, op, input) &&
         parseShardingAttr(parser, op, "sharding") &&
         parser.parseOptionalAttrDict(op.attrs) &&
         parseColonResultType(parser, op);
}

void printShardingOnOperand(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printValue(op.operand(0));
  printer << ' ';
  printer.printTensorSharding(op.attrs.get("sharding")->sharding());
  printer.printAttrDict(op.attrs, {"sharding"});
  printColonResultType(printer, op);
}

// `[<@m, ...>, ...]` as a sharding-per-value attribute.
bool parseShardingList(Parser &parser, Operation &op, std::string_view name) {
  std::vector<TensorSharding> list;
  if (!parser.expectChar('['))
    return false;
  if (!parser.tryChar(']')) {
    do {
      TensorSharding sharding;
      if (!parser.parseTensorShardingBody(sharding))
        return false;
      list.push_back(std::move(sharding));
    } while (parser.tryChar(','));
    if (!parser.expectChar(']'))
      return false;
  }
  setAttr(parser, op, name, arena(parser).shardingPerValue(std::move(list)));
  return true;
}

void printShardingList(Printer &printer, const Attr *attr) {
  printer << '[';
  const auto &list = attr->shardings();
  for (size_t i = 0; i < list.size(); ++i) {
    if (i)
      printer << ", ";
    printer.printTensorSharding(list[i]);
  }
  printer << ']';
}

bool parseParenOperands(Parser &parser, Operation &op) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.expectChar('(') || !parser.parseOperandList(operands) ||
      !parser.expectChar(')'))
    return false;
  op.setOperands(operands);
  return true;
}

bool parseBodyAndType(Parser &parser, Operation &op) {
  std::vector<ArgDecl> args;
  if (!parser.parseArgDeclList(args, false) ||
      !parser.parseRegion(op.addRegion(), args) ||
      !parser.parseOptionalAttrDict(op.attrs))
    return false;
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  for (size_t i = 0; i < op.numOperands(); ++i)
    operands.push_back(op.operand(i));
  return parseFunctionalTypeFor(parser, op, operands);
}

void printBodyAndType(Printer &printer, Operation &op,
                      const std::vector<std::string_view> &elided) {
  printer << " (";
  Block &body = op.region(0).front();
  for (size_t i = 0; i < body.numArguments(); ++i) {
    if (i)
      printer << ", ";
    printer.printArgDecl(body.argument(i), true);
  }
  printer << ") ";
  printer.printRegion(op.region(0), false);
  printer.printAttrDict(op.attrs, elided);
  printer << " : ";
  printer.printFunctionalType(op);
}

bool parseManualComputation(Parser &parser, Operation &op, size_t) {
  if (!parseParenOperands(parser, op) ||
      !parser.expectKeyword("in_shardings") || !parser.expectChar('=') ||
      !parseShardingList(parser, op, "in_shardings") ||
      !parser.expectKeyword("out_shardings") || !parser.expectChar('=') ||
      !parseShardingList(parser, op, "out_shardings") ||
      !parser.expectKeyword("manual_axes") || !parser.expectChar('='))
    return false;
  std::vector<std::string> axes;
  if (!parser.parseStringSet(axes))
    return false;
  Attr attr{AttrKind::ManualAxes, std::move(axes), nullptr, {}};
  setAttr(parser, op, "manual_axes", arena(parser).make(std::move(attr)));
  return parseBodyAndType(parser, op);
}

void printManualComputation(Printer &printer, Operation &op) {
  printer << '(';
  printer.printOperands(op);
  printer << ") in_shardings=";
  printShardingList(printer, op.attrs.get("in_shardings"));
  printer << " out_shardings=";
  printShardingList(printer, op.attrs.get("out_shardings"));
  printer << " manual_axes=";
  printer.printSdyListBody(*op.attrs.get("manual_axes"));
  printBodyAndType(printer, op,
                   {"in_shardings", "out_shardings", "manual_axes"});
}

bool parseNamedComputation(Parser &parser, Operation &op, size_t) {
  std::string name;
  if (!parser.expectChar('<') || !parser.parseString(name) ||
      !parser.expectChar('>'))
    return false;
  setAttr(parser, op, "name", arena(parser).string(name));
  if (!parseParenOperands(parser, op))
    return false;
  for (std::string_view key : {"in_shardings", "out_shardings"})
    if (parser.tryKeyword(key) &&
        (!parser.expectChar('=') || !parseShardingList(parser, op, key)))
      return false;
  return parseBodyAndType(parser, op);
}

void printNamedComputation(Printer &printer, Operation &op) {
  printer << '<';
  appendEscapedString(printer.out(), op.attrs.get("name")->str());
  printer << ">(";
  printer.printOperands(op);
  printer << ')';
  for (std::string_view key : {"in_shardings", "out_shardings"})
    if (const Attr *list = op.attrs.get(key)) {
      printer << ' ' << key << '=';
      printShardingList(printer, list);
    }
  printBodyAndType(printer, op, {"name", "in_shardings", "out_shardings"});
}

bool parseDataFlowEdge(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  if (!parseTypedOperand(parser, op, input))
    return false;
  if (parser.tryKeyword("sharding") &&
      (!parser.expectChar('=') || !parseShardingAttr(parser, op, "sharding")))
    return false;
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseColonResultType(parser, op);
}

void printDataFlowEdge(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printValue(op.operand(0));
  if (const Attr *sharding = op.attrs.get("sharding")) {
    printer << " sharding=";
    printer.printTensorSharding(sharding->sharding());
  }
  printer.printAttrDict(op.attrs, {"sharding"});
  printColonResultType(printer, op);
}

bool parseOperandAttrsType(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  return parseTypedOperand(parser, op, input) &&
         parser.parseOptionalAttrDict(op.attrs) &&
         parseColonResultType(parser, op);
}

void printOperandAttrsType(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printValue(op.operand(0));
  printer.printAttrDict(op.attrs);
  printColonResultType(printer, op);
}

bool parseShardingGroup(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  int64_t id = 0;
  if (!parseTypedOperand(parser, op, input) ||
      !parser.expectKeyword("group_id") || !parser.expectChar('=') ||
      !parser.parseInt(id))
    return false;
  setAttr(parser, op, "group_id",
          arena(parser).integer(id, parser.ctx().types.element("i64")));
  Type type = nullptr;
  if (!parser.parseOptionalAttrDict(op.attrs) || !parser.expectChar(':') ||
      !(type = parser.parseType()))
    return false;
  op.setResultTypes({});
  return true;
}

void printShardingGroup(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printValue(op.operand(0));
  printer << " group_id=" << op.attrs.get("group_id")->intValue();
  printer.printAttrDict(op.attrs, {"group_id"});
  printColonResultType(printer, op);
}

bool parseBarrier(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  if (!parseTypedOperand(parser, op, input) ||
      !parser.expectKeyword("allowed_direction") || !parser.expectChar('='))
    return false;
  std::string_view direction = parser.parseBareId();
  if (direction != "FORWARD" && direction != "BACKWARD" &&
      direction != "NONE" && direction != "BOTH")
    return parser.error("expected one of [FORWARD, BACKWARD, NONE, BOTH]");
  setAttr(parser, op, "allowed_direction",
          arena(parser).string(std::string(direction)));
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseColonResultType(parser, op);
}

void printBarrier(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printValue(op.operand(0));
  printer << " allowed_direction=" << op.attrs.get("allowed_direction")->str();
  printer.printAttrDict(op.attrs, {"allowed_direction"});
  printColonResultType(printer, op);
}

} // namespace

// Constants (sdy.constant, stablehlo.constant): `{attrs} dense<...> : t`.
bool parseConstantLike(Parser &parser, Operation &op, size_t) {
  op.setOperands({});
  if (!parser.parseOptionalAttrDict(op.attrs))
    return false;
  if (parser.peek() == '(') { // the generic-looking `() {value = ...} : ...`
    if (!parser.expectChar('(') || !parser.expectChar(')'))
      return false;
    // Properties `<{value = ...}>` as printed for mismatched types.
    if (parser.tryPunct("<{") && !parser.parsePropertiesRest(op.attrs))
      return false;
    if (!parser.parseOptionalAttrDict(op.attrs))
      return false;
    std::vector<Value *> none;
    return parseFunctionalTypeFor(parser, op, none);
  }
  Location where = parser.loc();
  const Attr *value = parser.parseAttribute();
  if (!value)
    return false;
  // The result type is the attribute's: it must have one.
  if (!value->type)
    return parser.errorAt(where, "expected a typed constant value, such as "
                                 "dense<0.000000e+00> : tensor<4xf32>");
  setAttr(parser, op, "value", value);
  op.setResultTypes({value->type});
  return true;
}

void printConstantLike(Printer &printer, Operation &op) {
  const Attr *value = op.attrs.get("value");
  if (!value || !op.numResults() || value->type != op.result(0)->type) {
    // Types differ (e.g. quantized results): MLIR prints the generic form.
    printer << "() <{value = ";
    printer.printAttr(value);
    printer << "}>";
    printer.printAttrDict(op.attrs, {"value"});
    printer << " : ";
    printer.printFunctionalType(op);
    return;
  }
  printer.printAttrDict(op.attrs, {"value"});
  printer << ' ';
  printer.printAttr(value);
}

std::vector<OpInfo> sdyCollectiveOpInfos();

namespace {
constexpr EnumProperty kAllowedDirection{
    "allowed_direction", "allowed_direction", kPropagationDirections};
} // namespace

std::vector<OpInfo> sdyOpInfos() {
  std::vector<OpInfo> infos;
  infos.push_back({"sdy.mesh", parseMeshOp, printMeshOp, {"sym_name", "mesh"}});
  infos.push_back({"sdy.sharding_constraint",
                   parseShardingOnOperand,
                   printShardingOnOperand,
                   {"sharding"}});
  infos.push_back({"sdy.reshard",
                   parseShardingOnOperand,
                   printShardingOnOperand,
                   {"sharding"}});
  infos.push_back({"sdy.manual_computation",
                   parseManualComputation,
                   printManualComputation,
                   {"in_shardings", "out_shardings", "manual_axes"}});
  infos.push_back({"sdy.named_computation",
                   parseNamedComputation,
                   printNamedComputation,
                   {"name", "in_shardings", "out_shardings"}});
  infos.push_back({"sdy.data_flow_edge",
                   parseDataFlowEdge,
                   printDataFlowEdge,
                   {"sharding"}});
  infos.push_back({"sdy.func_data_flow_edge", parseOperandAttrsType,
                   printOperandAttrsType});
  infos.push_back({"sdy.sharding_group",
                   parseShardingGroup,
                   printShardingGroup,
                   {"group_id"}});
  OpInfo barrier{"sdy.propagation_barrier",
                 parseBarrier,
                 printBarrier,
                 {"allowed_direction"}};
  barrier.enum_property = &kAllowedDirection;
  infos.push_back(barrier);
  infos.push_back(
      {"sdy.constant", parseConstantLike, printConstantLike, {"value"}});
  void registerReturnLike(std::vector<OpInfo> &, std::string_view);
  registerReturnLike(infos, "sdy.return");
  for (OpInfo &info : sdyCollectiveOpInfos())
    infos.push_back(info);
  return infos;
}

} // namespace shardlab
