// Custom syntax of the CHLO ops JAX leaves in exported modules (`chlo.tan`,
// `chlo.top_k`, `chlo.erf_inv`, ...), as CHLO's assembly formats print them:
//   unary     %r = chlo.tan %x : tensor<4xf32> -> tensor<4xf32>
//   binary    %r = chlo.next_after %a, %b : tensor<4xf32>, tensor<4xf32>
//                  -> tensor<4xf32>
//   top_k     %v, %i = chlo.top_k(%x, k = 2) : tensor<5x3xf32>
//                  -> (tensor<5x2xf32>, tensor<5x2xi32>)
// Which of them propagation treats as elementwise is op_properties' list.
#include "ops_common.h"

namespace shardlab {

using namespace syntax;

namespace {

const std::string_view kUnaryOps[] = {
    "chlo.acos",   "chlo.acosh",   "chlo.asin",       "chlo.asinh",
    "chlo.atan",   "chlo.atanh",   "chlo.bessel_i1e", "chlo.conj",
    "chlo.cosh",   "chlo.digamma", "chlo.erf",        "chlo.erf_inv",
    "chlo.erfc",   "chlo.is_inf",  "chlo.is_neg_inf", "chlo.is_pos_inf",
    "chlo.lgamma", "chlo.sinh",    "chlo.square",     "chlo.tan",
};

const std::string_view kBinaryOps[] = {
    "chlo.next_after",
    "chlo.polygamma",
    "chlo.zeta",
    "chlo.broadcast_add",
    "chlo.broadcast_and",
    "chlo.broadcast_atan2",
    "chlo.broadcast_compare",
    "chlo.broadcast_complex",
    "chlo.broadcast_divide",
    "chlo.broadcast_maximum",
    "chlo.broadcast_minimum",
    "chlo.broadcast_multiply",
    "chlo.broadcast_next_after",
    "chlo.broadcast_or",
    "chlo.broadcast_polygamma",
    "chlo.broadcast_power",
    "chlo.broadcast_remainder",
    "chlo.broadcast_shift_left",
    "chlo.broadcast_shift_right_arithmetic",
    "chlo.broadcast_shift_right_logical",
    "chlo.broadcast_subtract",
    "chlo.broadcast_xor",
    "chlo.broadcast_zeta",
};

// `%a[, %b] {attrs} : ta[, tb] -> tr`, the operand count fixed by the op.
bool parseOperandsArrowResult(Parser &parser, Operation &op, size_t count) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.parseOperandList(operands))
    return false;
  if (operands.size() != count)
    return parser.error("expected " + std::to_string(count) + " operand(s)");
  op.setOperands(operands);
  auto types_lease = parser.typeList();
  std::vector<Type> &types = *types_lease;
  Type result = nullptr;
  if (!parser.parseOptionalAttrDict(op.attrs) || !parser.expectChar(':') ||
      !parser.parseTypeList(types) || !parser.expectPunct("->") ||
      !(result = parser.parseType()))
    return false;
  if (types.size() != count)
    return parser.error("expected " + std::to_string(count) +
                        " operand type(s)");
  op.setResultTypes({result});
  return true;
}

bool parseUnary(Parser &parser, Operation &op, size_t) {
  return parseOperandsArrowResult(parser, op, 1);
}

bool parseBinary(Parser &parser, Operation &op, size_t) {
  return parseOperandsArrowResult(parser, op, 2);
}

bool canPrintOneResult(Operation &op) { return op.numResults() == 1; }

void printOperandsArrowResult(Printer &printer, Operation &op) {
  printer << ' ';
  printer.printOperands(op);
  printer.printAttrDict(op.attrs);
  printer << " : ";
  printer.printOperandTypes(op);
  printer << " -> ";
  printer.printType(op.result(0)->type);
}

bool parseTopK(Parser &parser, Operation &op, size_t) {
  Value *input = nullptr;
  int64_t k = 0;
  if (!parser.expectChar('(') || !parser.parseOperand(input) ||
      !parser.expectChar(',') || !parser.expectKeyword("k") ||
      !parser.expectChar('=') || !parser.parseInt(k) || !parser.expectChar(')'))
    return false;
  op.setOperands({input});
  Context &ctx = parser.ctx();
  setAttr(parser, op, "k", ctx.attrs.integer(k, ctx.types.element("i64")));
  std::vector<Type> results;
  if (!parser.parseOptionalAttrDict(op.attrs) || !parser.expectChar(':') ||
      !parser.parseType() || !parser.expectPunct("->") ||
      !parser.expectChar('(') || !parser.parseTypeList(results) ||
      !parser.expectChar(')'))
    return false;
  if (results.size() != 2)
    return parser.error("expected the values type and the indices type");
  op.setResultTypes(results);
  return true;
}

bool canPrintTopK(Operation &op) {
  const Attr *k = op.attrs.get("k");
  return op.numOperands() == 1 && op.numResults() == 2 && k &&
         k->kind == AttrKind::Integer;
}

void printTopK(Printer &printer, Operation &op) {
  printer << "(";
  printer.printValue(op.operand(0));
  printer << ", k = " << op.attrs.get("k")->intValue() << ')';
  printer.printAttrDict(op.attrs, {"k"});
  printer << " : ";
  printer.printType(op.operand(0)->type);
  printer << " -> (";
  printer.printResultTypes(op);
  printer << ')';
}

std::vector<std::string_view> topKResultNames(Operation &) {
  return {"values", "indices"};
}

} // namespace

std::vector<OpInfo> chloOpInfos() {
  std::vector<OpInfo> infos;
  for (std::string_view name : kUnaryOps) {
    OpInfo info{name, parseUnary, printOperandsArrowResult};
    info.can_print = canPrintOneResult;
    infos.push_back(info);
  }
  for (std::string_view name : kBinaryOps) {
    OpInfo info{name, parseBinary, printOperandsArrowResult};
    info.can_print = canPrintOneResult;
    infos.push_back(info);
  }
  OpInfo top_k{"chlo.top_k", parseTopK, printTopK, {"k"}};
  top_k.can_print = canPrintTopK;
  top_k.result_names = topKResultNames;
  infos.push_back(top_k);
  return infos;
}

} // namespace shardlab
