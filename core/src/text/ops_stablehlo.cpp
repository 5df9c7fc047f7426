// Custom ("pretty") syntax of the StableHLO ops, as StableHLO's printers
// produce it. Ops without a pretty form here use the generic form.
#include "ir/op_properties.h"
#include "ops_common.h"

#include <cstdio>

namespace shardlab {

using namespace syntax;

namespace {

Type i64Type(Parser &parser) { return parser.ctx().types.element("i64"); }

bool parseDenseArrayKey(Parser &parser, Operation &op, std::string_view attr) {
  auto values = parser.intList();
  if (!parseIntList(parser, *values))
    return false;
  setAttr(parser, op, attr,
          parser.ctx().attrs.denseArray(i64Type(parser), *values));
  return true;
}

const std::vector<int64_t> &ints(Operation &op, std::string_view attr) {
  static const std::vector<int64_t> kEmpty;
  const Attr *value = op.attrs.get(attr);
  return value && value->kind == AttrKind::DenseArray ? value->ints() : kEmpty;
}

// ---------------------------------------------------------- elementwise

bool parseElementwise(Parser &parser, Operation &op, size_t num_results) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseSameOperandsAndResultType(parser, op, operands,
                                        num_results ? num_results : 1);
}

void printElementwise(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printOperands(op);
  printer.printAttrDict(op.attrs);
  printSameOperandsAndResultType(printer, op);
}

// `%pred, %on_true, %on_false : pred_type, result_type`, or a functional
// type when the branches' types differ from the result's (StableHLO's
// SelectOpType).
bool parseSelect(Parser &parser, Operation &op, size_t) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  if (!parser.parseOptionalAttrDict(op.attrs))
    return false;
  if (!parser.expectChar(':'))
    return false;
  if (parser.peek() == '(') {
    std::vector<Type> inputs, results;
    if (!parser.parseFunctionType(inputs, results))
      return false;
    op.setResultTypes(results);
    return true;
  }
  auto types_lease = parser.typeList();
  std::vector<Type> &types = *types_lease;
  if (!parser.parseTypeList(types))
    return false;
  if (types.size() != 2)
    return parser.error("expected the predicate type and the result type");
  op.setResultTypes({types[1]});
  return true;
}

void printSelect(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printOperands(op);
  printer.printAttrDict(op.attrs);
  printer << " : ";
  Type result = op.numResults() == 1 ? op.result(0)->type : nullptr;
  if (op.numOperands() != 3 || !result || op.operand(1)->type != result ||
      op.operand(2)->type != result) {
    printer.printFunctionalType(op);
    return;
  }
  printer.printType(op.operand(0)->type);
  printer << ", ";
  printer.printType(result);
}

// `%a, %b, key = [..], ... : (ins) -> out`, for ops whose pretty form is
// operands, then `key = int-list` entries, then a functional type.
struct KeyedSpec {
  std::string_view op;
  std::string_view keyword;
  std::string_view attr;
  bool same_type; ///< `: t` when operand and result types agree
};

const KeyedSpec kKeyed[] = {
    {"stablehlo.transpose", "dims", "permutation", false},
    {"stablehlo.broadcast_in_dim", "dims", "broadcast_dimensions", false},
    {"stablehlo.reverse", "dims", "dimensions", true},
    {"stablehlo.dynamic_slice", "sizes", "slice_sizes", false},
    {"stablehlo.broadcast", "sizes", "broadcast_sizes", false},
    {"stablehlo.dynamic_broadcast_in_dim", "dims", "broadcast_dimensions",
     false},
};

const KeyedSpec &keyedSpec(std::string_view name) {
  for (const KeyedSpec &spec : kKeyed)
    if (spec.op == name)
      return spec;
  return kKeyed[0];
}

bool parseKeyed(Parser &parser, Operation &op, size_t) {
  const KeyedSpec &spec = keyedSpec(op.name);
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  do {
    if (parser.peekKeyword(spec.keyword))
      break;
    Value *value = nullptr;
    if (!parser.parseOperand(value))
      return false;
    operands.push_back(value);
  } while (parser.tryChar(','));
  op.setOperands(operands);
  if (!parser.expectKeyword(spec.keyword) || !parser.expectChar('=') ||
      !parseDenseArrayKey(parser, op, spec.attr) ||
      !parser.parseOptionalAttrDict(op.attrs))
    return false;
  return spec.same_type ? parseSameOperandsAndResultType(parser, op, operands)
                        : parseFunctionalTypeFor(parser, op, operands);
}

void printKeyed(Printer &printer, Operation &op) {
  const KeyedSpec &spec = keyedSpec(op.name);
  printer << ' ';
  printer.printOperands(op);
  printer << ", " << spec.keyword << " = ";
  printer.printIntList(ints(op, spec.attr));
  printer.printAttrDict(op.attrs, {spec.attr});
  if (spec.same_type) {
    printSameOperandsAndResultType(printer, op);
  } else {
    printer << " : ";
    printer.printFunctionalType(op);
  }
}

// `%a : (t) -> t2` (reshape, bitcast_convert, ...).
bool parseUnaryFunctional(Parser &parser, Operation &op, size_t) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, operands);
}

void printUnaryFunctional(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printOperands(op);
  printer.printAttrDict(op.attrs);
  printer << " : ";
  printer.printFunctionalType(op);
}

// `%re, %im : complex-type`: the operand types are the result's shape with
// its complex element's component type (StableHLO's ComplexOpType), or a
// functional type when they are not.
bool isComplexOfParts(Type result, Type part) {
  if (!result || !part || !result->isRankedTensor() ||
      !part->isRankedTensor() || !result->element || !part->element ||
      result->shape != part->shape || result->encoding != part->encoding)
    return false;
  std::string_view elem = result->element->text;
  return elem.size() > 9 && elem.substr(0, 8) == "complex<" &&
         elem.back() == '>' &&
         elem.substr(8, elem.size() - 9) == part->element->text;
}

bool parseComplex(Parser &parser, Operation &op, size_t) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseSameOperandsAndResultType(parser, op, operands);
}

bool canPrintComplex(Operation &op) {
  return op.numOperands() == 2 && op.numResults() == 1 &&
         op.operand(0)->type == op.operand(1)->type;
}

void printComplex(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printOperands(op);
  printer.printAttrDict(op.attrs);
  printer << " : ";
  if (isComplexOfParts(op.result(0)->type, op.operand(0)->type))
    printer.printType(op.result(0)->type);
  else
    printer.printFunctionalType(op);
}

// `%x, format = e5m10 : t`: exponent and mantissa bits as one keyword.
bool parseReducePrecision(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  if (!parser.parseOperand(input) || !parser.expectChar(',') ||
      !parser.expectKeyword("format") || !parser.expectChar('='))
    return false;
  op.setOperands({input});
  Location where = parser.loc();
  std::string_view format = parser.parseBareId();
  int exponent = 0, mantissa = 0;
  char tail = 0;
  if (format.empty() ||
      std::sscanf(std::string(format).c_str(), "e%dm%d%c", &exponent, &mantissa,
                  &tail) != 2 ||
      exponent < 1 || mantissa < 0)
    return parser.errorAt(where, "expected a format 'e<exponent bits>m<"
                                 "mantissa bits>', such as e5m10");
  Context &ctx = parser.ctx();
  Type i32 = ctx.types.element("i32");
  setAttr(parser, op, "exponent_bits", ctx.attrs.integer(exponent, i32));
  setAttr(parser, op, "mantissa_bits", ctx.attrs.integer(mantissa, i32));
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseSameOperandsAndResultType(parser, op, {input});
}

bool canPrintReducePrecision(Operation &op) {
  const Attr *e = op.attrs.get("exponent_bits");
  const Attr *m = op.attrs.get("mantissa_bits");
  return op.numOperands() == 1 && e && m && e->kind == AttrKind::Integer &&
         m->kind == AttrKind::Integer;
}

void printReducePrecision(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printValue(op.operand(0));
  printer << ", format = e" << op.attrs.get("exponent_bits")->intValue() << 'm'
          << op.attrs.get("mantissa_bits")->intValue();
  printer.printAttrDict(op.attrs, {"exponent_bits", "mantissa_bits"});
  printSameOperandsAndResultType(printer, op);
}

// `%a, %b : tuple<ta, tb>`.
bool parseTuple(Parser &parser, Operation &op, size_t) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  Type type = nullptr;
  if (!parser.parseOptionalAttrDict(op.attrs) || !parser.expectChar(':') ||
      !(type = parser.parseType()))
    return false;
  op.setResultTypes({type});
  return true;
}

void printTuple(Printer &printer, Operation &op) {
  if (op.numOperands())
    printer << ' ';
  printer.printOperands(op);
  printer.printAttrDict(op.attrs);
  printer << " : ";
  printer.printType(op.result(0)->type);
}

// `%t[1] : (tuple<...>) -> t1`.
bool parseGetTupleElement(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  int64_t index = 0;
  if (!parser.parseOperand(input) || !parser.expectChar('[') ||
      !parser.parseInt(index) || !parser.expectChar(']'))
    return false;
  op.setOperands({input});
  Context &ctx = parser.ctx();
  setAttr(parser, op, "index",
          ctx.attrs.integer(index, ctx.types.element("i32")));
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, {input});
}

bool canPrintGetTupleElement(Operation &op) {
  const Attr *index = op.attrs.get("index");
  return op.numOperands() == 1 && index && index->kind == AttrKind::Integer;
}

void printGetTupleElement(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printValue(op.operand(0));
  printer << '[' << op.attrs.get("index")->intValue() << ']';
  printer.printAttrDict(op.attrs, {"index"});
  printer << " : ";
  printer.printFunctionalType(op);
}

// `"name" %a, %b {composite_attributes = {...}, decomposition = @f} :
// (ins) -> outs`.
bool parseComposite(Parser &parser, Operation &op, size_t) {
  std::string name;
  if (!parser.parseString(name))
    return false;
  setAttr(parser, op, "name", parser.ctx().attrs.string(std::move(name)));
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, operands);
}

bool canPrintComposite(Operation &op) {
  const Attr *name = op.attrs.get("name");
  return name && name->kind == AttrKind::String;
}

void printComposite(Printer &printer, Operation &op) {
  printer << ' ';
  appendEscapedString(printer.out(), op.attrs.get("name")->str());
  if (op.numOperands())
    printer << ' ';
  printer.printOperands(op);
  printer.printAttrDict(op.attrs, {"name"});
  printer << " : ";
  printer.printFunctionalType(op);
}

// ------------------------------------------------------------- misc ops

std::string_view constantName(Operation &op, std::string &) {
  Type type = op.numResults() ? op.result(0)->type : nullptr;
  Type elem = type && type->element ? type->element : type;
  return elem && elem->isIntegerElement() ? "c" : "cst";
}

// arith.constant's names, as MLIR's arith dialect gives them: `%true` and
// `%false` for i1, `%c3_i32` for an integer (`%c3` for an index), `%cst`
// for anything else (a tensor, a float).
std::string_view arithConstantName(Operation &op, std::string &scratch) {
  const Attr *value = op.attrs.get("value");
  if (!value || value->kind != AttrKind::Integer || !value->text.empty() ||
      !value->type)
    return "cst";
  const std::string &type = value->type->text;
  if (type == "i1")
    return value->intValue() ? "true" : "false";
  scratch = "c" + std::to_string(value->intValue());
  if (type != "index")
    scratch += "_" + type;
  return scratch; // `c-1_i32`: a '-' is allowed in an SSA name
}

bool parseCustomCall(Parser &parser, Operation &op, size_t) {
  std::string target;
  if (parser.peek() == '@') {
    if (!parser.parseSymbolName(target))
      return false;
  } else if (!parser.parseString(target)) {
    return false;
  }
  setAttr(parser, op, "call_target_name",
          parser.ctx().attrs.string(std::move(target)));
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.expectChar('(') || !parser.parseOperandList(operands) ||
      !parser.expectChar(')'))
    return false;
  op.setOperands(operands);
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, operands);
}

void printCustomCall(Printer &printer, Operation &op) {
  printer << ' ';
  appendSymbolName(printer.out(), op.attrs.get("call_target_name")->str());
  printer << '(';
  printer.printOperands(op);
  printer << ')';
  printer.printAttrDict(op.attrs, {"call_target_name"});
  printer << " : ";
  printer.printFunctionalType(op);
}

// optimization_barrier: `{attrs} %a, %b : t1, t2` or `()`.
bool parseVariadicSameTypes(Parser &parser, Operation &op, size_t) {
  if (!parser.parseOptionalAttrDict(op.attrs))
    return false;
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (parser.tryChar('(')) {
    if (!parser.expectChar(')'))
      return false;
  } else if (!parser.parseOperandList(operands)) {
    return false;
  }
  op.setOperands(operands);
  if (operands.empty()) {
    op.setResultTypes({});
    return true;
  }
  auto types_lease = parser.typeList();
  std::vector<Type> &types = *types_lease;
  if (!parser.expectChar(':') || !parser.parseTypeList(types))
    return false;
  op.setResultTypes(types);
  return true;
}

void printVariadicSameTypes(Printer &printer, Operation &op) {
  printer.printAttrDict(op.attrs);
  if (!op.numOperands()) {
    printer << "()";
    return;
  }
  printer << ' ';
  printer.printOperands(op);
  printer << " : ";
  printer.printOperandTypes(op);
}

bool parseIota(Parser &parser, Operation &op, size_t) {
  int64_t dim = 0;
  Type type = nullptr;
  if (!parser.expectKeyword("dim") || !parser.expectChar('=') ||
      !parser.parseInt(dim))
    return false;
  setAttr(parser, op, "iota_dimension",
          parser.ctx().attrs.integer(dim, i64Type(parser)));
  if (!parser.parseOptionalAttrDict(op.attrs) || !parser.expectChar(':') ||
      !(type = parser.parseType()))
    return false;
  op.setOperands({});
  op.setResultTypes({type});
  return true;
}

void printIota(Printer &printer, Operation &op) {
  printer << " dim = " << op.attrs.get("iota_dimension")->intValue();
  printer.printAttrDict(op.attrs, {"iota_dimension"});
  printer << " : ";
  printer.printType(op.result(0)->type);
}

bool parseConcatenate(Parser &parser, Operation &op, size_t) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  do {
    if (parser.peekKeyword("dim"))
      break;
    Value *value = nullptr;
    if (!parser.parseOperand(value))
      return false;
    operands.push_back(value);
  } while (parser.tryChar(','));
  op.setOperands(operands);
  int64_t dim = 0;
  if (!parser.expectKeyword("dim") || !parser.expectChar('=') ||
      !parser.parseInt(dim))
    return false;
  setAttr(parser, op, "dimension",
          parser.ctx().attrs.integer(dim, i64Type(parser)));
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, operands);
}

void printConcatenate(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printOperands(op);
  printer << ", dim = " << op.attrs.get("dimension")->intValue();
  printer.printAttrDict(op.attrs, {"dimension"});
  printer << " : ";
  printer.printFunctionalType(op);
}

// iota and concatenate print their integer attribute in the custom form.
bool hasIntegerAttr(Operation &op, std::string_view name) {
  const Attr *attr = op.attrs.get(name);
  return attr && attr->kind == AttrKind::Integer;
}
bool canPrintIota(Operation &op) {
  return op.numResults() == 1 && hasIntegerAttr(op, "iota_dimension");
}
bool canPrintConcatenate(Operation &op) {
  return hasIntegerAttr(op, "dimension");
}

// The custom form needs three dense arrays of one length (a generic form
// may hold anything).
bool canPrintSlice(Operation &op) {
  const Attr *starts = op.attrs.get("start_indices");
  const Attr *limits = op.attrs.get("limit_indices");
  const Attr *strides = op.attrs.get("strides");
  for (const Attr *a : {starts, limits, strides})
    if (!a || a->kind != AttrKind::DenseArray)
      return false;
  return op.numOperands() == 1 &&
         starts->ints().size() == limits->ints().size() &&
         strides->ints().size() == starts->ints().size();
}

// `%a [0:32, 1:2, 4:8:2]`
bool parseSlice(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  if (!parser.parseOperand(input) || !parser.expectChar('['))
    return false;
  op.setOperands({input});
  std::vector<int64_t> starts, limits, strides;
  if (!parser.tryChar(']')) {
    do {
      int64_t start = 0, limit = 0, stride = 1;
      if (!parser.parseInt(start) || !parser.expectChar(':') ||
          !parser.parseInt(limit))
        return false;
      if (parser.tryChar(':') && !parser.parseInt(stride))
        return false;
      starts.push_back(start);
      limits.push_back(limit);
      strides.push_back(stride);
    } while (parser.tryChar(','));
    if (!parser.expectChar(']'))
      return false;
  }
  AttrArena &arena = parser.ctx().attrs;
  setAttr(parser, op, "start_indices",
          arena.denseArray(i64Type(parser), starts));
  setAttr(parser, op, "limit_indices",
          arena.denseArray(i64Type(parser), limits));
  setAttr(parser, op, "strides", arena.denseArray(i64Type(parser), strides));
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, {input});
}

void printSlice(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printValue(op.operand(0));
  printer << " [";
  const auto &starts = ints(op, "start_indices");
  const auto &limits = ints(op, "limit_indices");
  const auto &strides = ints(op, "strides");
  for (size_t i = 0; i < starts.size(); ++i) {
    if (i)
      printer << ", ";
    printer << starts[i] << ':' << limits[i];
    if (i < strides.size() && strides[i] != 1)
      printer << ':' << strides[i];
  }
  printer << ']';
  printer.printAttrDict(op.attrs,
                        {"start_indices", "limit_indices", "strides"});
  printer << " : ";
  printer.printFunctionalType(op);
}

} // namespace

bool parseConstantLike(Parser &parser, Operation &op, size_t num_results);
void printConstantLike(Printer &printer, Operation &op);
void registerReturnLike(std::vector<OpInfo> &infos, std::string_view name);

// StableHLO ops that MLIR prints in the generic form, with their inherent
// attributes (printed as `<{...}>` properties, apart from the discardable
// `{sdy.sharding = ...}`), as StableHLO's op definitions declare them.
void addGenericOnlyOps(std::vector<OpInfo> &infos) {
  struct GenericOp {
    std::string_view name;
    std::vector<std::string_view> inherent;
  };
  static const GenericOp kOps[] = {
      {"stablehlo.all_gather",
       {"all_gather_dim", "replica_groups", "channel_handle",
        "use_global_device_ids"}},
      {"stablehlo.all_reduce",
       {"replica_groups", "channel_handle", "use_global_device_ids"}},
      {"stablehlo.reduce_scatter",
       {"scatter_dimension", "replica_groups", "channel_handle",
        "use_global_device_ids"}},
      {"stablehlo.all_to_all",
       {"split_dimension", "concat_dimension", "split_count", "replica_groups",
        "channel_handle"}},
      {"stablehlo.collective_permute",
       {"source_target_pairs", "channel_handle"}},
      {"stablehlo.collective_broadcast", {"replica_groups", "channel_handle"}},
      {"stablehlo.sort", {"dimension", "is_stable"}},
      {"stablehlo.gather",
       {"dimension_numbers", "slice_sizes", "indices_are_sorted"}},
      {"stablehlo.scatter",
       {"scatter_dimension_numbers", "indices_are_sorted", "unique_indices"}},
      {"stablehlo.select_and_scatter",
       {"window_dimensions", "window_strides", "padding"}},
      {"stablehlo.reduce_window",
       {"window_dimensions", "window_strides", "base_dilations",
        "window_dilations", "padding"}},
      {"stablehlo.triangular_solve",
       {"left_side", "lower", "unit_diagonal", "transpose_a"}},
      {"stablehlo.batch_norm_inference", {"epsilon", "feature_index"}},
      {"stablehlo.batch_norm_training", {"epsilon", "feature_index"}},
      {"stablehlo.batch_norm_grad", {"epsilon", "feature_index"}},
      {"stablehlo.send", {"channel_handle", "is_host_transfer"}},
      {"stablehlo.recv", {"channel_handle", "is_host_transfer"}},
      {"stablehlo.case", {}},
      {"stablehlo.if", {}},
      {"stablehlo.map", {"dimensions"}},
      {"stablehlo.dynamic_gather", {"dimension_numbers", "indices_are_sorted"}},
      {"stablehlo.dynamic_conv",
       {"window_strides", "padding", "lhs_dilation", "rhs_dilation",
        "window_reversal", "dimension_numbers", "feature_group_count",
        "batch_group_count", "precision_config"}},
      {"stablehlo.infeed", {"infeed_config", "layout"}},
      {"stablehlo.outfeed", {"outfeed_config"}},
      {"stablehlo.torch_index_select", {"dim", "batch_dims"}},
  };
  for (const GenericOp &op : kOps) {
    OpInfo info{op.name, nullptr, nullptr, op.inherent};
    infos.push_back(info);
  }
}

std::vector<OpInfo> stablehloOpInfos() {
  std::vector<OpInfo> infos;
  addGenericOnlyOps(infos);
  // compare, complex, select and reduce_precision have syntaxes of their own;
  // dynamic_update_slice is not elementwise but prints like one.
  for (std::string_view name : elementwiseOps())
    if (name.substr(0, 10) == "stablehlo." && name != "stablehlo.compare" &&
        name != "stablehlo.complex" && name != "stablehlo.select" &&
        name != "stablehlo.reduce_precision")
      infos.push_back({name, parseElementwise, printElementwise});
  infos.push_back(
      {"stablehlo.dynamic_update_slice", parseElementwise, printElementwise});
  // XLA's export writes reshards as mhlo.copy (`%x {attrs} : type`).
  infos.push_back({"mhlo.copy", parseElementwise, printElementwise});
  for (const KeyedSpec &spec : kKeyed) {
    OpInfo info{spec.op, parseKeyed, printKeyed, {spec.attr}};
    infos.push_back(info);
  }
  for (std::string_view name :
       {"stablehlo.reshape", "stablehlo.bitcast_convert",
        "stablehlo.dynamic_reshape", "stablehlo.real_dynamic_slice",
        "stablehlo.dynamic_pad"})
    infos.push_back({name, parseUnaryFunctional, printUnaryFunctional});
  OpInfo complex{"stablehlo.complex", parseComplex, printComplex};
  complex.can_print = canPrintComplex;
  infos.push_back(complex);
  OpInfo reduce_precision{"stablehlo.reduce_precision",
                          parseReducePrecision,
                          printReducePrecision,
                          {"exponent_bits", "mantissa_bits"}};
  reduce_precision.can_print = canPrintReducePrecision;
  infos.push_back(reduce_precision);
  infos.push_back({"stablehlo.tuple", parseTuple, printTuple});
  OpInfo get_tuple_element{"stablehlo.get_tuple_element",
                           parseGetTupleElement,
                           printGetTupleElement,
                           {"index"}};
  get_tuple_element.can_print = canPrintGetTupleElement;
  infos.push_back(get_tuple_element);
  OpInfo composite{
      "stablehlo.composite",
      parseComposite,
      printComposite,
      {"name", "composite_attributes", "decomposition", "version"}};
  composite.can_print = canPrintComposite;
  infos.push_back(composite);
  infos.push_back({"stablehlo.select", parseSelect, printSelect});
  OpInfo constant{
      "stablehlo.constant", parseConstantLike, printConstantLike, {"value"}};
  constant.result_name = constantName;
  infos.push_back(constant);
  OpInfo arith_constant = constant;
  arith_constant.name = "arith.constant";
  arith_constant.result_name = arithConstantName;
  infos.push_back(arith_constant);
  // StableHLO's CustomCallOp arguments: the generic form prints them as
  // properties, the custom form in its attribute dictionary.
  const std::vector<std::string_view> custom_call_properties = {
      "api_version",
      "backend_config",
      "call_target_name",
      "called_computations",
      "has_side_effect",
      "operand_layouts",
      "output_operand_aliases",
      "result_layouts"};
  infos.push_back({"stablehlo.custom_call", parseCustomCall, printCustomCall,
                   custom_call_properties});
  // MHLO's custom_call (older XLA modules) has the same syntax.
  infos.push_back({"mhlo.custom_call", parseCustomCall, printCustomCall,
                   custom_call_properties});
  infos.push_back({"stablehlo.optimization_barrier", parseVariadicSameTypes,
                   printVariadicSameTypes});
  OpInfo iota{"stablehlo.iota", parseIota, printIota, {"iota_dimension"}};
  iota.can_print = canPrintIota;
  infos.push_back(iota);
  OpInfo concatenate{"stablehlo.concatenate",
                     parseConcatenate,
                     printConcatenate,
                     {"dimension"}};
  concatenate.can_print = canPrintConcatenate;
  infos.push_back(concatenate);
  OpInfo slice{"stablehlo.slice",
               parseSlice,
               printSlice,
               {"start_indices", "limit_indices", "strides"}};
  slice.can_print = canPrintSlice;
  infos.push_back(slice);
  registerReturnLike(infos, "stablehlo.return");
  for (OpInfo &info : stablehloStructuredOpInfos())
    infos.push_back(info);
  return infos;
}

} // namespace shardlab
