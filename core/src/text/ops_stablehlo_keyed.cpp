// StableHLO ops whose pretty form is `operands, key = value, ... {attrs} :
// functional-type` with a fixed list of keys (pad, fft, cholesky,
// rng_bit_generator), plus token ops and convolution (whose dimension
// numbers and window are kept as text).
#include "ir/op_properties.h"
#include "ir/stablehlo_dim_numbers.h"
#include "ops_common.h"

namespace shardlab {

using namespace syntax;

namespace {

enum class KeyKind { IntList, Enum, Bool, Int, String };

struct Key {
  std::string_view keyword;
  std::string_view attr;
  KeyKind kind;
  std::string_view enum_kind = {}; ///< `#stablehlo<enum_kind X>`
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
       {{"type", "fft_type", KeyKind::Enum, "fft_type"},
        {"length", "fft_length", KeyKind::IntList}}},
      {"stablehlo.cholesky", {{"lower", "lower", KeyKind::Bool}}, true},
      {"stablehlo.rng_bit_generator",
       {{"algorithm", "rng_algorithm", KeyKind::Enum, "rng_algorithm"}}},
      {"stablehlo.rng",
       {{"distribution", "rng_distribution", KeyKind::Enum,
         "rng_distribution"}}},
      {"stablehlo.get_dimension_size", {{"dim", "dimension", KeyKind::Int}}},
      {"stablehlo.set_dimension_size", {{"dim", "dimension", KeyKind::Int}}},
      {"stablehlo.dynamic_iota", {{"dim", "iota_dimension", KeyKind::Int}}},
      {"stablehlo.einsum", {{"config", "einsum_config", KeyKind::String}}},
      {"stablehlo.unary_einsum",
       {{"config", "einsum_config", KeyKind::String}}},
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
    auto values = parser.intList();
    if (!parseIntList(parser, *values))
      return false;
    value = ctx.attrs.denseArray(ctx.types.element("i64"), *values);
  } else if (key.kind == KeyKind::Bool) {
    if (!parser.peekKeyword("true") && !parser.peekKeyword("false"))
      return parser.error("expected 'true' or 'false'");
    value = ctx.attrs.boolean(parser.tryKeyword("true") ||
                              !parser.tryKeyword("false"));
  } else if (key.kind == KeyKind::Int) {
    int64_t n = 0;
    if (!parser.parseInt(n))
      return false;
    value = ctx.attrs.integer(n, ctx.types.element("i64"));
  } else if (key.kind == KeyKind::String) {
    std::string text;
    if (!parser.parseString(text))
      return false;
    value = ctx.attrs.string(std::move(text));
  } else {
    std::string_view id = parser.parseBareId();
    if (id.empty())
      return parser.error("expected keyword for '" + std::string(key.keyword) +
                          "'");
    value = makeStablehloEnum(ctx.attrs, key.enum_kind, id);
  }
  setAttr(parser, op, key.attr, value);
  return true;
}

bool parseKeyedOp(Parser &parser, Operation &op, size_t) {
  const KeyedOp &spec = keyedOp(op.name);
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
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

/// Every key's attribute is there, of the kind the pretty form prints.
bool canPrintKeyedOp(Operation &op) {
  for (const Key &key : keyedOp(op.name).keys) {
    const Attr *value = op.attrs.get(key.attr);
    if (!value)
      return false;
    bool ok = false;
    switch (key.kind) {
    case KeyKind::IntList:
      ok = value->kind == AttrKind::DenseArray;
      break;
    case KeyKind::Bool:
      ok = value->kind == AttrKind::Bool;
      break;
    case KeyKind::Int:
      ok = value->kind == AttrKind::Integer;
      break;
    case KeyKind::String:
      ok = value->kind == AttrKind::String;
      break;
    case KeyKind::Enum:
      ok = stablehloEnum(value, key.enum_kind).has_value();
      break;
    }
    if (!ok)
      return false;
  }
  return true;
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
      printer.printIntList(value->ints());
    } else if (key.kind == KeyKind::Bool) {
      printer << (value->intValue() ? "true" : "false");
    } else if (key.kind == KeyKind::Int) {
      printer << value->intValue();
    } else if (key.kind == KeyKind::String) {
      appendEscapedString(printer.out(), value->str());
    } else { // enums print with a leading space
      printer << ' ' << *stablehloEnum(value, key.enum_kind);
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

void printTokenOp(Printer &printer, Operation &op) {
  // after_all's format puts a blank before its operand list, even an empty
  // one (`after_all  : !stablehlo.token`); create_token has no list.
  if (op.numOperands() || op.is("stablehlo.after_all")) {
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

// The window of a convolution's pretty form, `{stride = [..], pad =
// [[lo, hi], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]}`,
// into the attributes its generic form has (window_strides, padding as a
// dense Nx2 tensor, lhs_dilation, rhs_dilation, window_reversal).
bool parseConvWindow(Parser &parser, Operation &op) {
  Context &ctx = parser.ctx();
  Type i64 = ctx.types.element("i64");
  if (!parser.expectChar('{'))
    return false;
  if (parser.tryChar('}'))
    return true;
  do {
    std::string_view key = parser.parseBareId();
    if (!parser.expectChar('='))
      return false;
    if (key == "pad") {
      std::vector<int64_t> flat;
      if (!parser.expectChar('['))
        return false;
      do {
        std::vector<int64_t> pair;
        if (!parseIntList(parser, pair))
          return false;
        if (pair.size() != 2)
          return parser.error("expected [low, high] padding");
        flat.insert(flat.end(), pair.begin(), pair.end());
      } while (parser.tryChar(','));
      if (!parser.expectChar(']'))
        return false;
      setAttr(parser, op, "padding", denseIntMatrix(ctx, flat, 2));
    } else if (key == "reverse") {
      std::vector<int64_t> flags;
      if (!parser.expectChar('['))
        return false;
      if (!parser.tryChar(']')) {
        do {
          int64_t v = 0;
          if (parser.tryKeyword("true"))
            v = 1;
          else if (!parser.tryKeyword("false") && !parser.parseInt(v))
            return false;
          flags.push_back(v != 0);
        } while (parser.tryChar(','));
        if (!parser.expectChar(']'))
          return false;
      }
      setAttr(parser, op, "window_reversal",
              ctx.attrs.denseArray(ctx.types.element("i1"), flags));
    } else {
      const char *attr = key == "stride"       ? "window_strides"
                         : key == "lhs_dilate" ? "lhs_dilation"
                         : key == "rhs_dilate" ? "rhs_dilation"
                                               : nullptr;
      std::vector<int64_t> values;
      if (!attr)
        return parser.error("expected stride, pad, lhs_dilate, rhs_dilate or "
                            "reverse");
      if (!parseIntList(parser, values))
        return false;
      setAttr(parser, op, attr, ctx.attrs.denseArray(i64, values));
    }
  } while (parser.tryChar(','));
  return parser.expectChar('}');
}

constexpr std::string_view kConvPrefix = "#stablehlo.conv<";

bool parseConvolution(Parser &parser, Operation &op, size_t) {
  auto operands_lease = parser.valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!parser.expectChar('(') || !parser.parseOperandList(operands) ||
      !parser.expectChar(')'))
    return false;
  op.setOperands(operands);
  if (!parser.expectKeyword("dim_numbers") || !parser.expectChar('='))
    return false;
  const std::string raw = rawUntilSeparator(parser);
  const std::optional<std::string> dims = canonicalConvDims(raw);
  setAttr(parser, op, "dimension_numbers",
          parser.ctx().attrs.opaque(std::string(kConvPrefix) +
                                    (dims ? *dims : raw) + ">"));
  if (parser.tryChar(',')) {
    if (!parser.expectKeyword("window") || !parser.expectChar('=') ||
        !parseConvWindow(parser, op))
      return false;
  }
  return parser.parseOptionalAttrDict(op.attrs) &&
         parseFunctionalTypeFor(parser, op, operands);
}

/// The window attributes and the compact dimension numbers are what the
/// pretty form can show.
bool canPrintConvolution(Operation &op) {
  const Attr *dims = op.attrs.get("dimension_numbers");
  if (!dims || dims->kind != AttrKind::Opaque ||
      dims->text.rfind(kConvPrefix, 0) != 0 ||
      dims->text.find('[') == std::string::npos)
    return false;
  for (const char *name :
       {"window_strides", "lhs_dilation", "rhs_dilation", "window_reversal"})
    if (const Attr *a = op.attrs.get(name);
        a && a->kind != AttrKind::DenseArray)
      return false;
  const Attr *padding = op.attrs.get("padding");
  return !padding || denseIntMatrixValues(padding, 2).has_value();
}

void printConvolution(Printer &printer, Operation &op) {
  printer << '(';
  printer.printOperands(op);
  std::string_view dims = op.attrs.get("dimension_numbers")->text;
  dims = dims.substr(kConvPrefix.size(), dims.size() - kConvPrefix.size() - 1);
  printer << ") dim_numbers = " << dims << ", window = {";
  const char *sep = "";
  auto list = [&](const char *attr, const char *key) {
    if (const Attr *a = op.attrs.get(attr)) {
      printer << sep << key << " = ";
      printer.printIntList(a->ints());
      sep = ", ";
    }
  };
  list("window_strides", "stride");
  if (const Attr *padding = op.attrs.get("padding")) {
    std::vector<int64_t> flat = *denseIntMatrixValues(padding, 2);
    printer << sep << "pad = [";
    for (size_t i = 0; i + 1 < flat.size(); i += 2)
      printer << (i ? ", [" : "[") << flat[i] << ", " << flat[i + 1] << ']';
    printer << ']';
    sep = ", ";
  }
  list("lhs_dilation", "lhs_dilate");
  list("rhs_dilation", "rhs_dilate");
  if (const Attr *reverse = op.attrs.get("window_reversal")) {
    printer << sep << "reverse = [";
    for (size_t i = 0; i < reverse->ints().size(); ++i)
      printer << (i ? ", " : "") << (reverse->ints()[i] ? "true" : "false");
    printer << ']';
  }
  printer << '}';
  printer.printAttrDict(op.attrs,
                        {"dimension_numbers", "window_strides", "padding",
                         "lhs_dilation", "rhs_dilation", "window_reversal"});
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
    info.can_print = canPrintKeyedOp;
    if (spec.name == "stablehlo.rng_bit_generator")
      info.result_names = rngResultNames;
    infos.push_back(info);
  }
  infos.push_back({"stablehlo.after_all", parseTokenOp, printTokenOp});
  infos.push_back({"stablehlo.create_token", parseTokenOp, printTokenOp});
  infos.push_back(
      {"stablehlo.convolution",
       parseConvolution,
       printConvolution,
       {"batch_group_count", "dimension_numbers", "feature_group_count",
        "lhs_dilation", "padding", "precision_config", "rhs_dilation",
        "window_reversal", "window_strides"}});
  infos.back().can_print = canPrintConvolution;
  infos.push_back({"stablehlo.partition_id", parseTokenOp, printTokenOp});
  infos.push_back({"stablehlo.replica_id", parseTokenOp, printTokenOp});
  return infos;
}

} // namespace shardlab
