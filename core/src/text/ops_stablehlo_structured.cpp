// Custom syntax of the StableHLO ops with structure: reduce (compact
// `applies` and full `reducer` forms), while (`cond {} do {}`), compare,
// dot_general and dot.
#include "ir/op_properties.h"
#include "ops_common.h"

namespace shardlab {

using namespace syntax;

namespace {

const Attr *denseI64(Parser &parser, std::span<const int64_t> values) {
  return parser.ctx().attrs.denseArray(parser.ctx().types.element("i64"),
                                       values);
}

// ------------------------------------------------------------- reduce

bool parseReduceInputs(Parser &parser, std::vector<Value *> &inputs,
                       std::vector<Value *> &inits) {
  do {
    Value *input = nullptr, *init = nullptr;
    if (!parser.expectChar('(') || !parser.parseOperand(input) ||
        !parser.expectKeyword("init") || !parser.expectChar(':') ||
        !parser.parseOperand(init) || !parser.expectChar(')'))
      return false;
    inputs.push_back(input);
    inits.push_back(init);
  } while (parser.tryChar(','));
  return true;
}

Type scalarOf(Parser &parser, Type type) {
  Type elem = type->element ? type->element : type;
  return parser.ctx().types.rankedTensor({}, elem);
}

// `applies stablehlo.add`: builds the two-argument body.
bool buildCompactBody(Parser &parser, Operation &op, std::string_view body_op,
                      const std::vector<Value *> &inits) {
  const OpInfo *info = lookupOp(body_op);
  if (!info)
    return parser.error("unknown reduction op '" + std::string(body_op) + "'");
  Block &block = op.addRegion().addBlock();
  block.reserveArguments(2 * inits.size());
  auto args_lease = parser.valueList();
  std::vector<Value *> &args = *args_lease;
  for (int side = 0; side < 2; ++side)
    for (Value *init : inits)
      args.push_back(block.addArgument(scalarOf(parser, init->type), op.loc));
  auto combine = Operation::create(op.pool(), info->name, info, op.loc);
  combine->setOperands(args);
  combine->setResultTypes({args[0]->type});
  Value *result = combine->result(0);
  block.push_back(std::move(combine));
  const OpInfo *ret = lookupOp("stablehlo.return");
  auto terminator = Operation::create(op.pool(), ret->name, ret, op.loc);
  terminator->setOperands({result});
  terminator->setResultTypes({});
  block.push_back(std::move(terminator));
  return true;
}

bool parseReducerArgs(Parser &parser, std::vector<ArgDecl> &args, size_t n) {
  std::vector<ArgDecl> lhs, rhs;
  for (size_t i = 0; i < n; ++i) {
    std::vector<ArgDecl> pair;
    if (!parser.parseArgDeclList(pair, false))
      return false;
    if (pair.size() != 2)
      return parser.error("expected two block arguments per reducer input");
    lhs.push_back(pair[0]);
    rhs.push_back(pair[1]);
  }
  args = lhs;
  args.insert(args.end(), rhs.begin(), rhs.end());
  return true;
}

bool parseReduce(Parser &parser, Operation &op, size_t) {
  // StableHLO's reduce parser takes its location after the op's name (at
  // the `(`), where MLIR places the op: its diagnostics and its
  // -mlir-print-debuginfo location say so.
  op.loc = parser.loc();
  auto inputs_lease = parser.valueList(), inits_lease = parser.valueList(),
       operands_lease = parser.valueList();
  std::vector<Value *> &inputs = *inputs_lease, &inits = *inits_lease,
                       &operands = *operands_lease;
  if (!parseReduceInputs(parser, inputs, inits))
    return false;
  operands.assign(inputs.begin(), inputs.end());
  operands.insert(operands.end(), inits.begin(), inits.end());
  op.setOperands(operands);
  std::string_view body_op;
  if (parser.tryKeyword("applies")) {
    body_op = parser.parseBareId();
    if (body_op.empty())
      return parser.error("expected op name after 'applies'");
  }
  auto dims_lease = parser.intList();
  std::vector<int64_t> &dims = *dims_lease;
  if (!parser.expectKeyword("across") || !parser.expectKeyword("dimensions") ||
      !parser.expectChar('=') || !parseIntList(parser, dims))
    return false;
  setAttr(parser, op, "dimensions", denseI64(parser, dims));
  if (!parser.parseOptionalAttrDict(op.attrs) ||
      !parseFunctionalTypeFor(parser, op, operands))
    return false;
  if (!body_op.empty())
    return buildCompactBody(parser, op, body_op, inits);
  std::vector<ArgDecl> args;
  if (!parser.expectKeyword("reducer") ||
      !parseReducerArgs(parser, args, inputs.size()))
    return false;
  return parser.parseRegion(op.addRegion(), args);
}

// The compact form applies when the body is `op(arg0, arg1)` + return.
const Operation *compactBodyOp(Operation &op) {
  if (op.numOperands() != 2 || op.numRegions() != 1)
    return nullptr;
  Block &block = op.region(0).front();
  Operation *first = block.front();
  if (block.size() != 2 || block.numArguments() != 2 || !first->info ||
      first->numOperands() != 2 || first->numResults() != 1 ||
      !first->attrs.empty() || first->operand(0) != block.argument(0) ||
      first->operand(1) != block.argument(1) ||
      first->result(0)->type != block.argument(0)->type ||
      first->dialect() != "stablehlo")
    return nullptr;
  Operation *ret = block.back();
  if (ret->numOperands() != 1 || ret->operand(0) != first->result(0))
    return nullptr;
  return first;
}

void printReduce(Printer &printer, Operation &op) {
  size_t n = op.numOperands() / 2;
  for (size_t i = 0; i < n; ++i) {
    printer << (i ? ", (" : "(");
    printer.printValue(op.operand(i));
    printer << " init: ";
    printer.printValue(op.operand(n + i));
    printer << ')';
  }
  const Operation *body = compactBodyOp(op);
  if (body)
    printer << " applies " << body->name;
  printer << " across dimensions = ";
  printer.printIntList(op.attrs.get("dimensions")->ints());
  printer.printAttrDict(op.attrs, {"dimensions"});
  printer << " : ";
  printer.printFunctionalType(op);
  if (body)
    return;
  printer.newline();
  printer << " reducer";
  Block &block = op.region(0).front();
  for (size_t i = 0; i < n; ++i) {
    printer << '(';
    printer.printArgDecl(block.argument(i), true);
    printer << ", ";
    printer.printArgDecl(block.argument(n + i), true);
    printer << ") ";
  }
  printer << ' '; // StableHLO writes two blanks before the region
  printer.printRegion(op.region(0), false);
}

// -------------------------------------------------------------- while

bool parseWhile(Parser &parser, Operation &op, size_t) {
  std::vector<ArgDecl> args;
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.expectChar('('))
    return false;
  if (!parser.tryChar(')')) {
    do {
      ArgDecl arg;
      arg.loc = parser.loc();
      arg.name = parser.parseValueName();
      Value *init = nullptr;
      if (arg.name.empty() || !parser.expectChar('=') ||
          !parser.parseOperand(init))
        return parser.error("expected '%name = %value'");
      operands.push_back(init);
      args.push_back(arg);
    } while (parser.tryChar(','));
    if (!parser.expectChar(')'))
      return false;
  }
  op.setOperands(operands);
  auto types_lease = parser.typeList();
  std::vector<Type> &types = *types_lease;
  if (!operands.empty() &&
      (!parser.expectChar(':') || !parser.parseTypeList(types)))
    return false;
  if (types.size() != operands.size())
    return parser.error("expected one type per while operand");
  for (size_t i = 0; i < args.size(); ++i)
    args[i].type = types[i];
  op.setResultTypes(types);
  if (!parser.parseOptionalAttrDictWithKeyword(op.attrs) ||
      !parser.expectKeyword("cond") ||
      !parser.parseRegion(op.addRegion(), args) || !parser.expectKeyword("do"))
    return false;
  return parser.parseRegion(op.addRegion(), args);
}

void printWhile(Printer &printer, Operation &op) {
  printer << '(';
  Block &cond = op.region(0).front();
  for (size_t i = 0; i < op.numOperands(); ++i) {
    if (i)
      printer << ", ";
    printer.printValue(cond.argument(i));
    printer << " = ";
    printer.printValue(op.operand(i));
  }
  printer << ')';
  if (op.numOperands()) {
    printer << " : ";
    printer.printOperandTypes(op);
  }
  printer.printAttrDictWithKeyword(op.attrs, {});
  printer.newline();
  printer << "cond ";
  printer.printRegion(op.region(0), false);
  printer << " do ";
  printer.printRegion(op.region(1), false);
}

// ------------------------------------------------------------- compare

bool parseCompare(Parser &parser, Operation &op, size_t) {
  std::string_view direction = parser.parseBareId();
  if (direction.empty() || !parser.expectChar(','))
    return parser.error("expected comparison direction");
  AttrArena &arena = parser.ctx().attrs;
  setAttr(parser, op, "comparison_direction",
          makeStablehloEnum(arena, "comparison_direction", direction));
  std::vector<Value *> operands(2);
  if (!parser.parseOperand(operands[0]) || !parser.expectChar(',') ||
      !parser.parseOperand(operands[1]))
    return false;
  op.setOperands(operands);
  if (parser.tryChar(',')) {
    std::string_view type = parser.parseBareId();
    if (type.empty())
      return parser.error("expected comparison type");
    setAttr(parser, op, "compare_type",
            makeStablehloEnum(arena, "comparison_type", type));
  }
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseSameOperandsAndResultType(parser, op, operands);
}

bool canPrintCompare(Operation &op) {
  const Attr *type = op.attrs.get("compare_type");
  return op.numOperands() == 2 &&
         stablehloEnum(op.attrs.get("comparison_direction"),
                       "comparison_direction") &&
         (!type || stablehloEnum(type, "comparison_type"));
}

void printCompare(Printer &printer, Operation &op) {
  printer << "  "
          << *stablehloEnum(op.attrs.get("comparison_direction"),
                            "comparison_direction")
          << ", ";
  printer.printOperands(op);
  if (const Attr *type = op.attrs.get("compare_type"))
    printer << ",  " << *stablehloEnum(type, "comparison_type");
  printer.printAttrDict(op.attrs, {"comparison_direction", "compare_type"});
  // Always the function type: the result (i1) is not the operands' type,
  // and StableHLO prints it so even when the operands are i1 too.
  printer << " : ";
  printer.printFunctionalType(op);
}

// --------------------------------------------------------- dot_general

constexpr std::string_view kDotKeys[] = {
    "lhs_batching_dimensions", "rhs_batching_dimensions",
    "lhs_contracting_dimensions", "rhs_contracting_dimensions"};

bool parseDimPair(Parser &parser, std::vector<int64_t> &lhs,
                  std::vector<int64_t> &rhs) {
  return parser.expectChar('=') && parseIntList(parser, lhs) &&
         parser.expectKeyword("x") && parseIntList(parser, rhs);
}

// `, precision = [DEFAULT, HIGH]` and `, algorithm = <...>`, stored as
// StableHLO's generic form has them: an array of `#stablehlo<precision X>`
// and a `#stablehlo.dot_algorithm<...>`.
bool parseDotTail(Parser &parser, Operation &op) {
  while (parser.tryChar(',')) {
    std::string_view key = parser.parseBareId();
    if ((key != "precision" && key != "algorithm") || !parser.expectChar('='))
      return parser.error("expected 'precision' or 'algorithm'");
    AttrArena &arena = parser.ctx().attrs;
    if (key == "precision") {
      std::vector<const Attr *> values;
      if (!parser.expectChar('['))
        return false;
      if (!parser.tryChar(']')) {
        do {
          std::string_view value = parser.parseBareId();
          if (value.empty())
            return parser.error("expected a precision (DEFAULT, HIGH, "
                                "HIGHEST)");
          values.push_back(makeStablehloEnum(arena, "precision", value));
        } while (parser.tryChar(','));
        if (!parser.expectChar(']'))
          return false;
      }
      setAttr(parser, op, "precision_config", arena.array(std::move(values)));
      continue;
    }
    parser.skipSpace();
    size_t start = parser.pos();
    if (parser.peek() != '<' || !parser.skipBalancedAt('<', '>'))
      return parser.error("expected '<'");
    setAttr(parser, op, "algorithm",
            arena.opaque("#stablehlo.dot_algorithm" +
                         std::string(parser.textFrom(start))));
  }
  return true;
}

bool parseDotGeneral(Parser &parser, Operation &op, size_t) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  operands.resize(2);
  if (!parser.parseOperand(operands[0]) || !parser.expectChar(',') ||
      !parser.parseOperand(operands[1]) || !parser.expectChar(','))
    return false;
  op.setOperands(operands);
  ScratchPool<int64_t>::Lease leases[4] = {parser.intList(), parser.intList(),
                                           parser.intList(), parser.intList()};
  std::vector<int64_t> *dims[4] = {&*leases[0], &*leases[1], &*leases[2],
                                   &*leases[3]};
  if (parser.tryKeyword("batching_dims")) {
    if (!parseDimPair(parser, *dims[0], *dims[1]) || !parser.expectChar(','))
      return false;
  }
  if (!parser.expectKeyword("contracting_dims") ||
      !parseDimPair(parser, *dims[2], *dims[3]) || !parseDotTail(parser, op))
    return false;
  std::vector<NamedAttr> entries;
  entries.reserve(4);
  for (int i = 0; i < 4; ++i)
    entries.push_back({kDotKeys[i], denseI64(parser, *dims[i])}); // static
  Attr attr{AttrKind::Dict, std::move(entries), nullptr, "#stablehlo.dot"};
  setAttr(parser, op, "dot_dimension_numbers",
          parser.ctx().attrs.make(std::move(attr)));
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, operands);
}

void printDotTail(Printer &printer, Operation &op) {
  if (const Attr *precision = op.attrs.get("precision_config")) {
    printer << ", precision = [";
    for (size_t i = 0; i < precision->elements().size(); ++i)
      printer << (i ? ", " : "")
              << *stablehloEnum(precision->elements()[i], "precision");
    printer << ']';
  }
  if (const Attr *algorithm = op.attrs.get("algorithm"))
    printer << ", algorithm = "
            << std::string_view(algorithm->text)
                   .substr(std::string_view("#stablehlo.dot_algorithm").size());
}

// Generic-form input may carry attributes the pretty form cannot show.
bool canPrintDot(Operation &op) {
  const Attr *precision = op.attrs.get("precision_config");
  const Attr *algorithm = op.attrs.get("algorithm");
  if (precision) {
    if (precision->kind != AttrKind::Array)
      return false;
    for (const Attr *value : precision->elements())
      if (!stablehloEnum(value, "precision"))
        return false;
  }
  return !algorithm ||
         (algorithm->kind == AttrKind::Opaque &&
          algorithm->text.rfind("#stablehlo.dot_algorithm<", 0) == 0);
}

bool canPrintDotGeneral(Operation &op) {
  const Attr *dims = op.attrs.get("dot_dimension_numbers");
  if (!dims || dims->kind != AttrKind::Dict || !canPrintDot(op))
    return false;
  for (std::string_view key : kDotKeys) {
    const Attr *entry = dims->get(key);
    if (!entry || entry->kind != AttrKind::DenseArray)
      return false;
  }
  return true;
}

void printDotGeneral(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printOperands(op);
  const Attr *dims = op.attrs.get("dot_dimension_numbers");
  auto pair = [&](const char *key, int i) {
    printer << key;
    printer.printIntList(dims->get(kDotKeys[i])->ints());
    printer << " x ";
    printer.printIntList(dims->get(kDotKeys[i + 1])->ints());
  };
  if (!dims->get(kDotKeys[0])->ints().empty())
    pair(", batching_dims = ", 0);
  pair(", contracting_dims = ", 2);
  printDotTail(printer, op);
  printer.printAttrDict(
      op.attrs, {"dot_dimension_numbers", "precision_config", "algorithm"});
  printer << " : ";
  printer.printFunctionalType(op);
}

bool parseDot(Parser &parser, Operation &op, size_t) {
  std::vector<Value *> operands(2);
  if (!parser.parseOperand(operands[0]) || !parser.expectChar(',') ||
      !parser.parseOperand(operands[1]))
    return false;
  op.setOperands(operands);
  return parseDotTail(parser, op) && parser.parseOptionalAttrDict(op.attrs) &&
         parseSameOperandsAndResultType(parser, op, operands);
}

void printDot(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printOperands(op);
  printDotTail(printer, op);
  printer.printAttrDict(op.attrs, {"precision_config", "algorithm"});
  printer << " : ";
  printer.printFunctionalType(op);
}

std::string_view iterArgName(Operation &) { return "iterArg"; }

} // namespace

std::vector<OpInfo> stablehloStructuredOpInfos() {
  std::vector<OpInfo> infos;
  infos.push_back(
      {"stablehlo.reduce", parseReduce, printReduce, {"dimensions"}});
  OpInfo loop{"stablehlo.while", parseWhile, printWhile};
  loop.block_arg_name = "iterArg";
  (void)iterArgName;
  infos.push_back(loop);
  infos.push_back({"stablehlo.compare",
                   parseCompare,
                   printCompare,
                   {"comparison_direction", "compare_type"}});
  infos.back().can_print = canPrintCompare;
  infos.push_back({"stablehlo.dot_general",
                   parseDotGeneral,
                   printDotGeneral,
                   {"dot_dimension_numbers", "precision_config", "algorithm"}});
  infos.push_back(
      {"stablehlo.dot", parseDot, printDot, {"precision_config", "algorithm"}});
  infos.back().can_print = canPrintDot;
  for (OpInfo &info : infos)
    if (info.name == "stablehlo.dot_general")
      info.can_print = canPrintDotGeneral;
  for (OpInfo &info : stablehloKeyedOpInfos())
    infos.push_back(info);
  return infos;
}

} // namespace shardlab
