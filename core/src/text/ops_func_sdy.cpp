// Custom syntax of the func dialect (func.func, return, call), the shared
// helpers of ops_common.h, and every sdy op.
#include "ops_common.h"

namespace shardlab {
namespace syntax {

bool parseSameOperandsAndResultType(Parser &parser, Operation &op,
                                    const std::vector<Value *> &operands,
                                    size_t num_results) {
  if (!parser.expectChar(':'))
    return false;
  if (parser.peek() == '(') {
    std::vector<Type> inputs, results;
    if (!parser.parseFunctionType(inputs, results))
      return false;
    if (inputs.size() != operands.size())
      return parser.error("expected " + std::to_string(operands.size()) +
                          " operand types");
    op.setResultTypes(results);
    return true;
  }
  Type type = parser.parseType();
  if (!type)
    return false;
  if (num_results == 1)
    op.setResultTypes({type});
  else
    op.setResultTypes(std::vector<Type>(num_results, type));
  return true;
}

void printSameOperandsAndResultType(Printer &printer, Operation &op) {
  Type common = op.numResults() ? op.result(0)->type : nullptr;
  bool same = common != nullptr;
  for (size_t i = 0; i < op.numOperands(); ++i)
    same = same && op.operand(i)->type == common;
  for (size_t i = 0; i < op.numResults(); ++i)
    same = same && op.result(i)->type == common;
  printer << " : ";
  if (same)
    printer.printType(common);
  else
    printer.printFunctionalType(op);
}

bool parseShardingAttr(Parser &parser, Operation &op, std::string_view name) {
  TensorSharding sharding;
  if (!parser.parseTensorShardingBody(sharding))
    return false;
  setAttr(parser, op, name, parser.ctx().attrs.sharding(std::move(sharding)));
  return true;
}

// Out of line and cold: the check runs for most ops.
[[gnu::cold, gnu::noinline]] static bool operandCountMismatch(Parser &parser,
                                                              size_t where,
                                                              size_t present,
                                                              size_t expected) {
  return parser.errorAt(where, std::to_string(present) +
                                   " operands present, but expected " +
                                   std::to_string(expected));
}

bool parseFunctionalTypeFor(Parser &parser, Operation &op,
                            const std::vector<Value *> &operands) {
  auto inputs_lease = parser.typeList(), results_lease = parser.typeList();
  std::vector<Type> &inputs = *inputs_lease, &results = *results_lease;
  size_t where = parser.mark();
  if (!parser.expectChar(':') || !parser.parseFunctionType(inputs, results))
    return false;
  if (inputs.size() != operands.size())
    return operandCountMismatch(parser, where, operands.size(), inputs.size());
  op.setResultTypes(results);
  return true;
}

bool parseIntList(Parser &parser, std::vector<int64_t> &values) {
  if (!parser.expectChar('['))
    return false;
  if (parser.tryChar(']'))
    return true;
  do {
    int64_t value = 0;
    if (!parser.parseInt(value))
      return false;
    values.push_back(value);
  } while (parser.tryChar(','));
  return parser.expectChar(']');
}

bool parseOperandsInto(Parser &parser, Operation &op) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  return true;
}

const Attr *denseIntMatrix(Context &ctx, const std::vector<int64_t> &flat,
                           int64_t cols) {
  const int64_t rows = cols > 0 ? static_cast<int64_t>(flat.size()) / cols : 0;
  Type type =
      ctx.types.rankedTensor({rows, cols}, ctx.types.element("i64"), "");
  return ctx.attrs.make(
      Attr{AttrKind::DenseElements, denseOfInts(type, flat), type, {}});
}

std::optional<std::vector<int64_t>> denseIntMatrixValues(const Attr *attr,
                                                         int64_t cols) {
  if (!attr || !attr->type || attr->type->shape.size() != 2 ||
      attr->type->shape[1] != cols)
    return std::nullopt;
  const DenseReader reader = attr->denseReader();
  if (!reader.valid() || reader.layout().kind != ElementLayout::Kind::Integer)
    return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < reader.size(); ++i)
    out.push_back(reader.intAt(i));
  return out;
}

bool parseRegionWithArgs(Parser &parser, Operation &op,
                         const std::vector<ArgDecl> &args) {
  return parser.parseRegion(op.addRegion(), args);
}

} // namespace syntax

using namespace syntax;

namespace {

// ------------------------------------------------------------------ func

bool parseFuncResults(Parser &parser, std::vector<Type> &types,
                      std::vector<const Attr *> &attrs,
                      std::vector<SourceRange> &ranges) {
  auto one = [&](bool with_attrs) {
    Location start = parser.loc();
    Type type = parser.parseType();
    if (!type)
      return false;
    types.push_back(type);
    AttrDict dict;
    if (with_attrs && !parser.parseOptionalAttrDict(dict))
      return false;
    ranges.push_back({start, parser.locHere()});
    Attr attr{AttrKind::Dict, dict.toVector(), nullptr, {}};
    attrs.push_back(parser.ctx().attrs.make(std::move(attr)));
    return true;
  };
  if (parser.peek() != '(')
    return one(false);
  parser.expectChar('(');
  if (parser.tryChar(')'))
    return true;
  do {
    if (!one(true))
      return false;
  } while (parser.tryChar(','));
  return parser.expectChar(')');
}

const Attr *dictArray(Parser &parser, const std::vector<const Attr *> &dicts) {
  for (const Attr *dict : dicts)
    if (!dict->entries().empty())
      return parser.ctx().attrs.array(dicts);
  return nullptr;
}

bool parseFuncArgs(Parser &parser, std::vector<ArgDecl> &args,
                   std::vector<Type> &types, bool &has_names,
                   std::vector<SourceRange> &ranges) {
  if (!parser.expectChar('('))
    return false;
  has_names = parser.peek() == '%';
  if (parser.tryChar(')'))
    return true;
  do {
    ArgDecl arg;
    arg.loc = parser.loc();
    if (has_names) {
      arg.name = parser.parseValueName();
      if (arg.name.empty() || !parser.expectChar(':'))
        return parser.error("expected SSA identifier");
    }
    if (!(arg.type = parser.parseType()))
      return false;
    AttrDict dict;
    if (!parser.parseOptionalAttrDict(dict))
      return false;
    ranges.push_back({arg.loc, parser.locHere()});
    if (!parser.parseTrailingLocation(arg.loc))
      return false;
    arg.attrs = dict.toVector();
    types.push_back(arg.type);
    args.push_back(std::move(arg));
  } while (parser.tryChar(','));
  return parser.expectChar(')');
}

bool parseFunc(Parser &parser, Operation &op, size_t) {
  Context &ctx = parser.ctx();
  for (std::string_view vis : {"private", "public", "nested"})
    if (parser.tryKeyword(vis))
      setAttr(parser, op, "sym_visibility", ctx.attrs.string(std::string(vis)));
  std::string name;
  if (!parser.parseSymbolName(name))
    return false;
  setAttr(parser, op, "sym_name", ctx.attrs.string(name));
  std::vector<ArgDecl> args;
  std::vector<Type> inputs, results;
  std::vector<const Attr *> arg_dicts, res_dicts;
  bool has_names = false;
  FuncSignatureRanges ranges;
  if (!parseFuncArgs(parser, args, inputs, has_names, ranges.args))
    return false;
  arg_dicts.reserve(args.size());
  for (ArgDecl &arg : args) { // the body's arguments don't keep attributes
    Attr dict{AttrKind::Dict, std::move(arg.attrs), nullptr, {}};
    arg_dicts.push_back(ctx.attrs.make(std::move(dict)));
  }
  if (parser.tryPunct("->") &&
      !parseFuncResults(parser, results, res_dicts, ranges.results))
    return false;
  parser.recordSignature(name, std::move(ranges));
  Attr type{
      AttrKind::TypeAttr, ctx.types.function(inputs, results), nullptr, {}};
  setAttr(parser, op, "function_type", ctx.attrs.make(std::move(type)));
  if (const Attr *array = dictArray(parser, arg_dicts))
    setAttr(parser, op, "arg_attrs", array);
  if (const Attr *array = dictArray(parser, res_dicts))
    setAttr(parser, op, "res_attrs", array);
  if (!parser.parseOptionalAttrDictWithKeyword(op.attrs))
    return false;
  op.setResultTypes({});
  if (parser.peek() != '{')
    return true; // a declaration
  if (!has_names && !args.empty())
    return parser.error("expected SSA identifier");
  return parser.parseRegion(op.addRegion(), args, /*isolated=*/true);
}

const Attr *dictAt(const Attr *array, size_t i) {
  if (!array || array->kind != AttrKind::Array || i >= array->elements().size())
    return nullptr;
  return array->elements()[i];
}

void printDictOf(Printer &printer, const Attr *dict) {
  if (!dict || dict->kind != AttrKind::Dict || dict->entries().empty())
    return;
  printer << " {";
  printer.printNamedAttrs(dict->entries());
  printer << '}';
}

void printFunc(Printer &printer, Operation &op) {
  if (const Attr *vis = op.attrs.get("sym_visibility"))
    printer << ' ' << vis->str();
  printer << ' ';
  appendSymbolName(printer.out(), op.attrs.get("sym_name")->str());
  printer << '(';
  Type type = std::get<Type>(op.attrs.get("function_type")->payload);
  const Attr *arg_attrs = op.attrs.get("arg_attrs");
  const Attr *res_attrs = op.attrs.get("res_attrs");
  bool has_body = op.numRegions() && !op.region(0).empty();
  for (size_t i = 0; i < type->members.size(); ++i) {
    if (i)
      printer << ", ";
    if (has_body)
      printer.printArgDecl(op.region(0).front().argument(i));
    else
      printer.printType(type->members[i]);
    printDictOf(printer, dictAt(arg_attrs, i));
    if (has_body)
      printer.printArgumentLocation(op.region(0).front().argument(i)->loc);
  }
  printer << ')';
  const auto &results = type->results;
  bool plain = results.size() == 1 && !dictAt(res_attrs, 0) &&
               results[0]->kind != TypeKind::Function;
  if (plain || (results.size() == 1 && dictAt(res_attrs, 0) &&
                dictAt(res_attrs, 0)->entries().empty())) {
    printer << " -> ";
    printer.printType(results[0]);
  } else if (!results.empty()) {
    printer << " -> (";
    for (size_t i = 0; i < results.size(); ++i) {
      if (i)
        printer << ", ";
      printer.printType(results[i]);
      printDictOf(printer, dictAt(res_attrs, i));
    }
    printer << ')';
  }
  printer.printAttrDictWithKeyword(op.attrs, {"sym_name", "function_type",
                                              "sym_visibility", "arg_attrs",
                                              "res_attrs"});
  if (has_body) {
    printer << ' ';
    printer.printRegion(op.region(0), false);
  }
}

// `return {attrs} %a, %b : t1, t2`.
bool parseReturnLike(Parser &parser, Operation &op, size_t) {
  if (!parser.parseOptionalAttrDict(op.attrs))
    return false;
  std::vector<Value *> operands;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  op.setResultTypes({});
  if (operands.empty())
    return true;
  std::vector<Type> types;
  if (!parser.expectChar(':') || !parser.parseTypeList(types))
    return false;
  if (types.size() != operands.size())
    return parser.error("mismatch between number of operands and types");
  return true;
}

void printReturnLike(Printer &printer, Operation &op) {
  printer.printAttrDict(op.attrs);
  if (!op.numOperands())
    return;
  printer << ' ';
  printer.printOperands(op);
  printer << " : ";
  printer.printOperandTypes(op);
}

bool parseCall(Parser &parser, Operation &op, size_t) {
  std::string callee;
  if (!parser.parseSymbolName(callee))
    return false;
  setAttr(parser, op, "callee", parser.ctx().attrs.symbol(callee));
  std::vector<Value *> operands;
  if (!parser.expectChar('(') || !parser.parseOperandList(operands) ||
      !parser.expectChar(')'))
    return false;
  op.setOperands(operands);
  if (!parser.parseOptionalAttrDict(op.attrs))
    return false;
  return parseFunctionalTypeFor(parser, op, operands);
}

void printCall(Printer &printer, Operation &op) {
  printer << ' ';
  appendSymbolName(printer.out(), op.attrs.get("callee")->str());
  printer << '(';
  printer.printOperands(op);
  printer << ')';
  printer.printAttrDict(op.attrs, {"callee"});
  printer << " : ";
  printer.printFunctionalType(op);
}

} // namespace

std::vector<OpInfo> funcOpInfos() {
  std::vector<OpInfo> infos;
  OpInfo func{"func.func", parseFunc, printFunc, {}, nullptr, {}, "func", true};
  func.inherent = {"sym_name", "function_type", "sym_visibility", "arg_attrs",
                   "res_attrs"};
  infos.push_back(func);
  infos.push_back({"func.return", parseReturnLike, printReturnLike});
  OpInfo call{"func.call", parseCall, printCall};
  call.inherent = {"callee", "arg_attrs", "res_attrs"};
  infos.push_back(call);
  return infos;
}

void registerReturnLike(std::vector<OpInfo> &infos, std::string_view name) {
  infos.push_back({name, parseReturnLike, printReturnLike});
}

} // namespace shardlab
