// Parsing of literal values: numbers with a type (`3 : i64`, `1.5 : f32`),
// dense literals (`dense<[1, 2]> : tensor<2xi64>`, hex blobs) and dense
// arrays (`array<i64: 1, 2>`). A number is read as a token first and turned
// into the bits of its type once the type is known, with MLIR's rules and
// messages: integers exactly and range-checked (255 is a valid i8, -1, and
// so is 0xFF; -0 is not; ui8 takes no negative value), floats as the
// nearest f64 rounded to the type (see text/float_text.h), `0x...` floats as
// their bits.
#include "parser.h"
#include "text/float_text.h"

namespace shardlab {

namespace {

bool isHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

unsigned hexValue(char c) {
  if (c >= '0' && c <= '9')
    return static_cast<unsigned>(c - '0');
  return static_cast<unsigned>((c | 0x20) - 'a' + 10);
}

uint64_t widthMask(unsigned bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

// The magnitude of a decimal or `0x` integer spelling; false when it does
// not fit in 64 bits.
bool integerMagnitude(std::string_view digits, bool hex, uint64_t &value) {
  value = 0;
  for (char c : digits) {
    const uint64_t digit = hex ? hexValue(c) : static_cast<uint64_t>(c - '0');
    const uint64_t base = hex ? 16 : 10;
    if (value > (UINT64_MAX - digit) / base)
      return false;
    value = value * base + digit;
  }
  return true;
}

// Whether the magnitude `m` (negated when `negative`) is a value of
// `layout`'s integer type, by MLIR's rule: it fits the width, a negative
// value has the sign bit set once negated (so -0 does not), and a positive
// value of a signed type (or index) leaves the sign bit clear. Signless
// types take both readings: 255 and -1 are the same i8.
bool integerFits(uint64_t m, bool negative, const ElementLayout &layout) {
  const unsigned width = layout.part_bits;
  if (width < 64 && (m >> width) != 0)
    return false;
  const uint64_t sign = uint64_t{1} << (width - 1);
  if (negative)
    return m != 0 && m <= sign;
  return !layout.is_signed || m < sign;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace

// A number, `0x...` or true/false at the cursor; false (and the cursor
// where it was) when there is none.
bool Parser::lexLiteralToken(LiteralToken &token) {
  const size_t start = mark();
  token = LiteralToken{};
  if (peekKeyword("true") || peekKeyword("false")) {
    token.kind = LiteralToken::Kind::Bool;
    token.at = pos_;
    token.truth = tryKeyword("true");
    if (!token.truth)
      tryKeyword("false");
    token.length = pos_ - token.at;
    return true;
  }
  if (peek() == '-') {
    token.negative = true;
    ++pos_;
    skipSpace();
  }
  token.at = pos_;
  auto at = [&](size_t offset) {
    return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
  };
  if (at(0) == '0' && at(1) == 'x' && isHexDigit(at(2))) {
    pos_ += 2;
    while (pos_ < text_.size() && isHexDigit(text_[pos_]))
      ++pos_;
    token.kind = LiteralToken::Kind::Hex;
  } else if (pos_ < text_.size() && isDigit(text_[pos_])) {
    while (pos_ < text_.size() && isDigit(text_[pos_]))
      ++pos_;
    token.kind = LiteralToken::Kind::Integer;
    if (at(0) == '.') { // MLIR's float: digits '.' digits* exponent?
      token.kind = LiteralToken::Kind::Float;
      ++pos_;
      while (pos_ < text_.size() && isDigit(text_[pos_]))
        ++pos_;
      const char e = at(0), sign = at(1);
      if ((e == 'e' || e == 'E') &&
          (isDigit(sign) || ((sign == '+' || sign == '-') && isDigit(at(2))))) {
        pos_ += isDigit(sign) ? 1 : 2;
        while (pos_ < text_.size() && isDigit(text_[pos_]))
          ++pos_;
      }
    }
  } else {
    pos_ = start;
    return false;
  }
  token.length = pos_ - token.at;
  return true;
}

bool Parser::integerLiteralBits(const LiteralToken &token,
                                const ElementLayout &layout, LiteralUse use,
                                uint64_t &bits) {
  const bool element = use == LiteralUse::Element;
  switch (token.kind) {
  case LiteralToken::Kind::Bool:
    if (!layout.is_bool)
      return errorAt(token.at, "expected i1 type for 'true' or 'false' values");
    bits = token.truth ? 1 : 0;
    return true;
  case LiteralToken::Kind::Float:
    return errorAt(token.at,
                   element ? "expected integer elements, but parsed "
                             "floating-point"
                           : "floating point value not valid for specified "
                             "type");
  case LiteralToken::Kind::Integer:
  case LiteralToken::Kind::Hex:
    break;
  }
  if (token.negative && layout.is_unsigned)
    return errorAt(token.at,
                   element ? "expected unsigned integer elements, but parsed "
                             "negative value"
                           : "negative integer literal not valid for unsigned "
                             "integer type");
  const bool hex = token.kind == LiteralToken::Kind::Hex;
  std::string_view digits =
      text_.substr(token.at + (hex ? 2 : 0), token.length - (hex ? 2 : 0));
  uint64_t magnitude = 0;
  if (!integerMagnitude(digits, hex, magnitude) ||
      !integerFits(magnitude, token.negative, layout))
    return errorAt(token.at, element ? "integer constant out of range for type"
                                     : "integer constant out of range for "
                                       "attribute");
  bits = (token.negative ? 0 - magnitude : magnitude) &
         widthMask(layout.part_bits);
  return true;
}

bool Parser::floatLiteralBits(const LiteralToken &token,
                              const ElementLayout &layout, LiteralUse use,
                              uint64_t &bits) {
  const FloatFormat &format = *layout.float_format;
  switch (token.kind) {
  case LiteralToken::Kind::Bool:
    return errorAt(token.at, "expected floating point literal");
  case LiteralToken::Kind::Integer:
    return errorAt(token.at, "unexpected decimal integer literal for a "
                             "floating point value (add a trailing dot to "
                             "make the literal a float)");
  case LiteralToken::Kind::Hex: {
    if (token.negative)
      return errorAt(token.at,
                     "hexadecimal float literal should not have a leading "
                     "minus");
    uint64_t value = 0;
    if (!integerMagnitude(text_.substr(token.at + 2, token.length - 2), true,
                          value) ||
        (value & ~widthMask(format.bits)) != 0)
      return errorAt(token.at, use == LiteralUse::Element
                                   ? "hexadecimal float constant out of range "
                                     "for type"
                                   : "hexadecimal float constant out of range "
                                     "for attribute");
    bits = value;
    return true;
  }
  case LiteralToken::Kind::Float:
    break;
  }
  std::string spelling = token.negative ? "-" : "";
  spelling += text_.substr(token.at, token.length);
  bits = floatBitsOfLiteral(spelling, format);
  return true;
}

bool Parser::literalBits(const LiteralToken &token, const ElementLayout &layout,
                         LiteralUse use, uint64_t &bits) {
  return layout.float_format ? floatLiteralBits(token, layout, use, bits)
                             : integerLiteralBits(token, layout, use, bits);
}

// `3 : i64`, `1.5 : f32`, `0x7FC00000 : f32`; without a type, `hint` or
// i64 / f64.
const Attr *Parser::parseNumberAttr(Type hint) {
  LiteralToken token;
  if (!lexLiteralToken(token))
    return error("expected attribute value"), nullptr;
  Type type = hint;
  if (tryChar(':') && !(type = parseType()))
    return nullptr;
  if (!type)
    type = ctx_.types.element(token.kind == LiteralToken::Kind::Float ? "f64"
                                                                      : "i64");
  const ElementLayout layout = elementLayout(type);
  uint64_t bits = 0;
  if (layout.kind == ElementLayout::Kind::Integer) {
    if (!integerLiteralBits(token, layout, LiteralUse::Attribute, bits))
      return nullptr;
    return ctx_.attrs.integer(integerOfBits(bits, layout), type);
  }
  if (layout.kind == ElementLayout::Kind::Float) {
    if (!floatLiteralBits(token, layout, LiteralUse::Attribute, bits))
      return nullptr;
    return ctx_.attrs.make(
        Attr{AttrKind::Float, FloatBits{bits}, type, std::string()});
  }
  // A type not modelled (an integer over 64 bits): kept as written.
  std::string spelling = token.negative ? "-" : "";
  spelling += text_.substr(token.at, token.length);
  AttrKind kind = token.kind == LiteralToken::Kind::Float ? AttrKind::Opaque
                                                          : AttrKind::Integer;
  if (kind == AttrKind::Opaque)
    return ctx_.attrs.opaque(spelling + " : " + type->text);
  return ctx_.attrs.make(
      Attr{AttrKind::Integer, int64_t{0}, type, std::move(spelling)});
}

// One element at the cursor: a number, true/false or `(re, im)`.
bool Parser::parseDenseElement(DenseTokens &tokens) {
  const bool complex = tryChar('(');
  if (!tokens.parts.empty() && complex != tokens.complex)
    return error("tensor literal mixes complex and real elements");
  tokens.complex = complex;
  for (int part = 0; part < (complex ? 2 : 1); ++part) {
    LiteralToken token;
    if ((part == 1 && !expectChar(',')) || !lexLiteralToken(token))
      return failed_ ? false
                     : error("expected element literal of primitive type");
    tokens.parts.push_back(token);
  }
  return !complex || expectChar(')');
}

// One `[...]` level of a dense literal; records its length in `shape`.
bool Parser::parseDenseList(DenseTokens &tokens, size_t depth) {
  if (!expectChar('[') || !enterNesting())
    return false;
  if (tokens.shape.size() == depth)
    tokens.shape.resize(depth + 1, -1); // length not known yet
  int64_t count = 0;
  if (peek() != ']') {
    do {
      bool nested = peek() == '[';
      // Every element sits at the same depth: the innermost list's.
      if (nested ? tokens.shape.size() == depth + 1 && !tokens.parts.empty()
                 : tokens.shape.size() != depth + 1)
        return error("tensor literal is invalid; ranks are not consistent "
                     "between elements");
      bool ok = nested ? parseDenseList(tokens, depth + 1)
                       : parseDenseElement(tokens);
      if (!ok)
        return false;
      ++count;
    } while (tryChar(','));
  }
  leaveNesting();
  if (tokens.shape[depth] == -1)
    tokens.shape[depth] = count;
  else if (tokens.shape[depth] != count)
    return error("tensor literal is invalid; ranks are not consistent "
                 "between elements");
  return expectChar(']');
}

bool Parser::denseFromTokens(const DenseTokens &tokens, Type type, size_t start,
                             DenseElements &dense) {
  const ElementLayout layout = elementLayout(type->element);
  const bool complex = layout.kind == ElementLayout::Kind::Complex;
  if (!tokens.parts.empty() && complex != tokens.complex)
    return errorAt(start, complex ? "expected complex elements '(re, im)' "
                                    "for type '" +
                                        type->element->text + "'"
                                  : "complex elements for type '" +
                                        type->element->text + "'");
  if (!tokens.splat && tokens.shape != type->shape) {
    if (tokens.parts.empty() && tokens.shape.empty() &&
        type->numElements() == 0)
      return true; // dense<> of an empty tensor
    return errorAt(start, "inferred shape of elements literal (" +
                              shapeText(tokens.shape) +
                              ") does not match type (" +
                              shapeText(type->shape) + ")");
  }
  dense.data.reserve(tokens.parts.size() * layout.part_bytes);
  for (const LiteralToken &token : tokens.parts) {
    uint64_t bits = 0;
    if (!literalBits(token, layout, LiteralUse::Element, bits))
      return false;
    dense.appendPart(layout, bits);
  }
  dense.splat = tokens.splat;
  dense.compactSplat(layout);
  return true;
}

// `"0x..."`: the elements' storage bytes in hex (i1 packed eight to a byte,
// least significant first), one element for a splat.
bool Parser::denseFromHex(std::string_view hex, Type type, size_t start,
                          DenseElements &dense) {
  if (hex.size() < 2 || hex.substr(0, 2) != "0x" || hex.size() % 2 != 0)
    return errorAt(start, "expected a hex string '0x...' of whole bytes");
  std::vector<uint8_t> bytes;
  bytes.reserve(hex.size() / 2 - 1);
  for (size_t i = 2; i < hex.size(); i += 2) {
    if (!isHexDigit(hex[i]) || !isHexDigit(hex[i + 1]))
      return errorAt(start, "elements hex string only contains hex digits");
    bytes.push_back(
        static_cast<uint8_t>(hexValue(hex[i]) << 4 | hexValue(hex[i + 1])));
  }
  const ElementLayout layout = elementLayout(type->element);
  const auto count = static_cast<size_t>(type->numElements());
  const size_t size = layout.elementBytes();
  if (layout.is_bool && bytes.size() == 1 &&
      (bytes[0] == 0 || bytes[0] == 0xFF)) {
    dense.data = {static_cast<uint8_t>(bytes[0] & 1)};
    dense.splat = true;
  } else if (layout.is_bool && bytes.size() == (count + 7) / 8) {
    for (size_t i = 0; i < count; ++i)
      dense.data.push_back((bytes[i / 8] >> (i % 8)) & 1);
  } else if (!layout.is_bool && bytes.size() == size) {
    dense.data = std::move(bytes);
    dense.splat = true;
  } else if (!layout.is_bool && bytes.size() == size * count) {
    dense.data = std::move(bytes);
  } else {
    return errorAt(start, "elements hex data size is invalid for provided "
                          "type: '" +
                              type->text + "'");
  }
  dense.compactSplat(layout);
  return true;
}

// dense<...> : type, after `dense<`: nested lists of numbers, booleans or
// (re, im) pairs, or a hex blob in quotes. A literal of a type this project
// does not model (strings, quantized types) is kept as text.
const Attr *Parser::parseDenseElements() {
  const size_t start = pos_ - 6; // `dense<`
  DenseTokens tokens;
  std::string hex;
  const size_t body_start = mark();
  bool is_string = peek() == '"';
  if (is_string) {
    if (!parseString(hex))
      return nullptr;
  } else if (peek() == '[') {
    if (!parseDenseList(tokens, 0))
      return nullptr;
  } else if (peek() != '>') {
    if (!parseDenseElement(tokens))
      return nullptr;
    tokens.splat = true;
  }
  std::string_view body = text_.substr(body_start, pos_ - body_start);
  Type type = nullptr;
  if (!expectChar('>') || !expectChar(':') || !(type = parseType()))
    return nullptr;
  DenseElements dense;
  const bool modelled = type->isRankedTensor() && type->hasStaticShape() &&
                        elementLayout(type->element).supported();
  if (!modelled) {
    dense.raw = std::string(body);
  } else if (is_string ? !denseFromHex(hex, type, start, dense)
                       : !denseFromTokens(tokens, type, start, dense)) {
    return nullptr;
  }
  return ctx_.attrs.make(
      Attr{AttrKind::DenseElements, std::move(dense), type, std::string()});
}

// array<i64: 1, 2>, array<f32: 1.5, 0x7FC00000> or array<i64>: each value
// as the bits of the element type (a float's bits, in the int64 list).
const Attr *Parser::parseDenseArray() {
  Type element = parseType();
  if (!element)
    return nullptr;
  const ElementLayout layout = elementLayout(element);
  if (layout.kind != ElementLayout::Kind::Integer &&
      layout.kind != ElementLayout::Kind::Float)
    return error("expected integer or float type for a dense array"), nullptr;
  if (layout.part_bits % 8 != 0 && !layout.is_bool)
    return error("element type bitwidth must be a multiple of 8"), nullptr;
  std::vector<int64_t> values;
  if (tryChar(':')) {
    do {
      LiteralToken token;
      uint64_t bits = 0;
      if (!lexLiteralToken(token))
        return error("expected integer or float literal"), nullptr;
      if (layout.is_bool && token.kind != LiteralToken::Kind::Bool)
        return errorAt(token.at,
                       "expected 'true' or 'false' values for i1 type"),
               nullptr;
      if (!literalBits(token, layout, LiteralUse::Attribute, bits))
        return nullptr;
      values.push_back(layout.float_format ? static_cast<int64_t>(bits)
                                           : integerOfBits(bits, layout));
    } while (tryChar(','));
  }
  if (!expectChar('>'))
    return nullptr;
  return ctx_.attrs.denseArray(element, std::move(values));
}

} // namespace shardlab
