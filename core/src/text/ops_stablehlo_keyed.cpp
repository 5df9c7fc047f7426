// StableHLO ops whose pretty form is `operands, key = value, ... {attrs} :
// functional-type` with a fixed list of keys (pad, fft, cholesky,
// rng_bit_generator), plus token ops and convolution (whose dimension
// numbers and window are kept as text).
#include "ops_common.h"

namespace shardlab {

using namespace syntax;

namespace {

enum class KeyKind { IntList, Enum, Bool };

struct Key {
  std::string_view keyword;
  std::string_view attr;
  KeyKind kind;
};

struct KeyedOp {
  std::string_view name;
  std::vector<Key> keys;
  bool same_type = false; ///< `: t` when operand and result types agree
};

const std::vector<KeyedOp> &keyedOps() {
  static const std::vector<KeyedOp> ops = {
      {"stablehlo.pad",
       {{"low", "edge_padding_low", KeyKind::IntList},
        {"high", "edge_padding_high", KeyKind::IntList},
        {"interior", "interior_padding", KeyKind::IntList}}},
      {"stablehlo.fft",
       {{"type", "fft_type", KeyKind::Enum},
        {"length", "fft_length", KeyKind::IntList}}},
      {"stablehlo.cholesky", {{"lower", "lower", KeyKind::Bool}}, true},
      {"stablehlo.rng_bit_generator",
       {{"algorithm", "rng_algorithm", KeyKind::Enum}}},
  };
  return ops;
}

const KeyedOp &keyedOp(std::string_view name) {
  for (const KeyedOp &op : keyedOps())
    if (op.name == name)
      return op;
  return keyedOps().front();
}

bool parseKeyValue(Parser &parser, Operation &op, const Key &key) {
  if (!parser.expectKeyword(key.keyword) || !parser.expectChar('='))
    return false;
  Context &ctx = parser.ctx();
  const Attr *value = nullptr;
  if (key.kind == KeyKind::IntList) {
    std::vector<int64_t> values;
    if (!parseIntList(parser, values))
      return false;
    value = ctx.attrs.denseArray(ctx.types.element("i64"), std::move(values));
  } else if (key.kind == KeyKind::Bool) {
    if (!parser.peekKeyword("true") && !parser.peekKeyword("false"))
      return parser.error("expected 'true' or 'false'");
    value = ctx.attrs.boolean(parser.tryKeyword("true") ||
                              !parser.tryKeyword("false"));
  } else {
    std::string_view id = parser.parseBareId();
    if (id.empty())
      return parser.error("expected keyword for '" + std::string(key.keyword) +
                          "'");
    value = ctx.attrs.string(std::string(id));
  }
  setAttr(parser, op, key.attr, value);
  return true;
}

bool parseKeyedOp(Parser &parser, Operation &op, size_t) {
  const KeyedOp &spec = keyedOp(op.name);
  std::vector<Value *> operands;
  if (!parser.parseOperandList(operands))
    return false;
  op.setOperands(operands);
  for (const Key &key : spec.keys)
    if (!parser.expectChar(',') || !parseKeyValue(parser, op, key))
      return false;
  if (!parser.parseOptionalAttrDict(op.attrs))
    return false;
  return spec.same_type ? parseSameOperandsAndResultType(parser, op, operands)
                        : parseFunctionalTypeFor(parser, op, operands);
}

void printKeyedOp(Printer &printer, Operation &op) {
  const KeyedOp &spec = keyedOp(op.name);
  printer << ' ';
  printer.printOperands(op);
  std::vector<std::string_view> elided;
  for (const Key &key : spec.keys) {
    const Attr *value = op.attrs.get(key.attr);
    elided.push_back(key.attr);
    printer << ", " << key.keyword << " = ";
    if (!value)
      continue;
    if (key.kind == KeyKind::IntList) {
      printer << intListText(value->ints());
    } else if (key.kind == KeyKind::Bool) {
      printer << (value->intValue() ? "true" : "false");
    } else {
      printer << ' ' << value->str(); // enums print with a leading space
    }
  }
  printer.printAttrDict(op.attrs, elided);
  if (spec.same_type) {
    printSameOperandsAndResultType(printer, op);
    return;
  }
  printer << " : ";
  printer.printFunctionalType(op);
}

// after_all / create_token: `%a, %b : !stablehlo.token`.
bool parseTokenOp(Parser &parser, Operation &op, size_t) {
  std::vector<Value *> operands;
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

void printTokenOp(Printer &printer, Operation &op) {
  if (op.numOperands()) {
    printer << ' ';
    printer.printOperands(op);
  }
  printer.printAttrDict(op.attrs);
  printer << " : ";
  printer.printType(op.result(0)->type);
}

// Reads raw text up to the next top-level ',' or '{' / ':' at depth 0.
std::string rawUntilSeparator(Parser &parser) {
  parser.skipSpace();
  size_t start = parser.pos();
  int depth = 0;
  while (!parser.atEnd()) {
    char c = parser.peekAt(0);
    if (depth == 0 &&
        (c == ',' || c == ':' || (c == '{' && parser.pos() > start)))
      break;
    if (c == '[' || c == '(' || c == '{')
      ++depth;
    if (c == ']' || c == ')' || c == '}')
      --depth;
    parser.advance(1);
    if (depth == 0 && c == '}')
      break;
  }
  std::string text(parser.textFrom(start));
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n'))
    text.pop_back();
  return text;
}

std::vector<std::string_view> rngResultNames(Operation &) {
  return {"output_state", "output"};
}

bool parseConvolution(Parser &parser, Operation &op, size_t) {
  std::vector<Value *> operands;
  if (!parser.expectChar('(') || !parser.parseOperandList(operands) ||
      !parser.expectChar(')'))
    return false;
  op.setOperands(operands);
  if (!parser.expectKeyword("dim_numbers") || !parser.expectChar('='))
    return false;
  setAttr(parser, op, "dimension_numbers",
          parser.ctx().attrs.opaque(rawUntilSeparator(parser)));
  if (parser.tryChar(',')) {
    if (!parser.expectKeyword("window") || !parser.expectChar('='))
      return false;
    setAttr(parser, op, "window",
            parser.ctx().attrs.opaque(rawUntilSeparator(parser)));
  }
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, operands);
}

void printConvolution(Printer &printer, Operation &op) {
  printer << '(';
  printer.printOperands(op);
  printer << ") dim_numbers = " << op.attrs.get("dimension_numbers")->text;
  if (const Attr *window = op.attrs.get("window"))
    printer << ", window = " << window->text;
  printer.printAttrDict(op.attrs, {"dimension_numbers", "window"});
  printer << " : ";
  printer.printFunctionalType(op);
}

} // namespace

std::vector<OpInfo> stablehloKeyedOpInfos() {
  std::vector<OpInfo> infos;
  for (const KeyedOp &spec : keyedOps()) {
    OpInfo info{spec.name, parseKeyedOp, printKeyedOp};
    for (const Key &key : spec.keys)
      info.inherent.push_back(key.attr);
    if (spec.name == "stablehlo.rng_bit_generator")
      info.result_names = rngResultNames;
    infos.push_back(info);
  }
  infos.push_back({"stablehlo.after_all", parseTokenOp, printTokenOp});
  infos.push_back({"stablehlo.create_token", parseTokenOp, printTokenOp});
  infos.push_back({"stablehlo.convolution",
                   parseConvolution,
                   printConvolution,
                   {"dimension_numbers", "window"}});
  return infos;
}

} // namespace shardlab
