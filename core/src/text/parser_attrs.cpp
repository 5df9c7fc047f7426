// Parsing of builtin attributes: numbers, strings, arrays, dictionaries,
// dense literals, dense arrays, symbol references and opaque dialect
// attributes. The sdy attributes are in parser_sdy.cpp.
#include "parser.h"
#include "printer.h"
#include "support/decimal.h"
#include "text/float_bits.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace shardlab {

namespace {

bool isNumberStart(char c, char next) {
  return (c >= '0' && c <= '9') || (c == '-' && next >= '0' && next <= '9');
}

} // namespace

bool Parser::parseAttrDict(AttrDict &dict) {
  if (!expectChar('{') || !enterNesting())
    return false;
  if (!tryChar('}')) {
    do {
      std::string name_text;
      std::string_view name;
      if (peek() == '"') {
        if (!parseString(name_text))
          return false;
        name = name_text;
      } else {
        name = parseBareId();
        if (name.empty())
          return error("expected attribute name");
      }
      std::string_view interned = intern(name);
      const Attr *value = nullptr;
      if (tryChar('=')) {
        if (!(value = parseAttribute()))
          return false;
      } else {
        value = ctx_.attrs.unit();
      }
      dict.set(interned, value);
    } while (tryChar(','));
    if (!expectChar('}'))
      return false;
  }
  leaveNesting();
  return true;
}

bool Parser::parsePropertiesRest(AttrDict &dict) {
  --pos_; // back onto the '{'
  return parseAttrDict(dict) && expectChar('>');
}

const Attr *Parser::parseNumberAttr(Type hint, bool allow_type_suffix) {
  skipSpace();
  size_t start = pos_;
  if (pos_ < text_.size() && text_[pos_] == '-')
    ++pos_;
  bool is_float = false;
  if (text_.substr(pos_, 2) == "0x") {
    pos_ += 2;
    while (pos_ < text_.size() &&
           isxdigit(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  } else {
    while (pos_ < text_.size() &&
           (isdigit(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E' ||
            ((text_[pos_] == '+' || text_[pos_] == '-') &&
             (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E')))) {
      if (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')
        is_float = true;
      ++pos_;
    }
  }
  std::string spelling(textFrom(start));
  Type type = hint;
  // Elements of dense literals take their type from the literal's type.
  if (allow_type_suffix && tryChar(':') && !(type = parseType()))
    return nullptr;
  if (!type)
    type = ctx_.types.element(is_float ? "f64" : "i64");
  if (type->isFloatElement() && spelling.rfind("0x", 0) == 0) {
    // The bits of the float (MLIR's spelling of infinities and NaNs).
    errno = 0;
    uint64_t bits = std::strtoull(spelling.c_str() + 2, nullptr, 16);
    double value = 0;
    if (errno == ERANGE ||
        !floatOfBits(bits, type->text, spelling, start, value))
      return nullptr;
    Attr attr{AttrKind::Float, value, type, spelling};
    return ctx_.attrs.make(std::move(attr));
  }
  if (is_float || type->isFloatElement()) {
    Attr attr{AttrKind::Float, parseDecimal(spelling), type, spelling};
    return ctx_.attrs.make(std::move(attr));
  }
  size_t digits = spelling[0] == '-' ? 1 : 0;
  errno = 0;
  long long value = std::strtoll(spelling.c_str() + digits, nullptr, 0);
  bool fits = errno != ERANGE;
  int64_t signed_value = static_cast<int64_t>(digits ? -value : value);
  if (fits)
    return ctx_.attrs.integer(signed_value, type);
  Attr attr{AttrKind::Integer, signed_value, type, spelling};
  return ctx_.attrs.make(std::move(attr));
}

bool Parser::parseDenseScalar(DenseElements &dense) {
  DenseValue value;
  if (peekKeyword("true") || peekKeyword("false")) {
    value.real = tryKeyword("true") ? 1 : (tryKeyword("false"), 0);
  } else if (tryChar('(')) {
    value.is_complex = true;
    if (!parseDensePart(value, dense.values.size(), false) ||
        !expectChar(',') || !parseDensePart(value, dense.values.size(), true) ||
        !expectChar(')'))
      return false;
  } else if (peek() == '0' && peekAt(1) == 'x') {
    if (!parseDenseHex(value, dense.values.size(), false))
      return false;
  } else {
    if (!isNumberStart(peek(), peekAt(1)))
      return error("expected element literal of primitive type");
    const Attr *num = parseNumberAttr(ctx_.types.element("f64"), false);
    if (!num)
      return false;
    value.real = std::get<double>(num->payload);
  }
  dense.values.push_back(value);
  return true;
}

// One `[...]` level of a dense literal; records its length in `shape`.
bool Parser::parseDenseList(DenseElements &dense, size_t depth) {
  if (!expectChar('[') || !enterNesting())
    return false;
  if (dense.literal_shape.size() == depth)
    dense.literal_shape.push_back(-1); // length not known yet
  int64_t count = 0;
  if (peek() != ']') {
    do {
      bool ok = peek() == '[' ? parseDenseList(dense, depth + 1)
                              : parseDenseScalar(dense);
      if (!ok)
        return false;
      ++count;
    } while (tryChar(','));
  }
  leaveNesting();
  if (dense.literal_shape[depth] == -1)
    dense.literal_shape[depth] = count;
  else if (dense.literal_shape[depth] != count)
    return error("tensor literal is invalid; ranks are not consistent "
                 "between elements");
  return expectChar(']');
}

bool Parser::parseDensePart(DenseValue &value, size_t index, bool imag) {
  skipSpace();
  if (peek() == '0' && peekAt(1) == 'x')
    return parseDenseHex(value, index, imag);
  const Attr *part = parseNumberAttr(ctx_.types.element("f64"), false);
  if (!part)
    return false;
  (imag ? value.imag : value.real) = std::get<double>(part->payload);
  return true;
}

bool Parser::parseDenseHex(DenseValue &value, size_t index, bool imag) {
  skipSpace();
  size_t start = pos_;
  pos_ += 2; // 0x
  while (pos_ < text_.size() &&
         isxdigit(static_cast<unsigned char>(text_[pos_])))
    ++pos_;
  std::string digits(textFrom(start + 2));
  errno = 0;
  uint64_t bits = std::strtoull(digits.c_str(), nullptr, 16);
  if (digits.empty())
    return errorAt(locationAt(start), "expected hexadecimal digits after '0x'");
  if (errno == ERANGE)
    return errorAt(locationAt(start),
                   "expected at most 16 hexadecimal digits after '0x'");
  (imag ? value.imag : value.real) = static_cast<double>(bits);
  dense_hex_.push_back({index, bits, start, pos_ - start, imag});
  return true;
}

bool Parser::floatOfBits(uint64_t bits, std::string_view type,
                         std::string_view spelling, size_t at, double &value) {
  std::optional<double> of_bits = floatFromBits(bits, type);
  if (!of_bits)
    return errorAt(locationAt(at),
                   "hexadecimal float literal " + std::string(spelling) +
                       " for type '" + std::string(type) +
                       "': only f64, f32, f16 and bf16 bit patterns are read");
  value = *of_bits;
  return true;
}

bool Parser::resolveDenseHex(DenseElements &dense, Type type) {
  const TypeStorage *element = type->isTensor() ? type->element : type;
  if (dense_hex_.empty() || !element)
    return true;
  // complex<f32>: each part is an f32.
  std::string_view name = complexPartType(element->text);
  if (name == element->text && !element->isFloatElement())
    return true;
  for (const auto &[index, bits, at, length, imag] : dense_hex_) {
    DenseValue &value = dense.values[index];
    if (!floatOfBits(bits, name, text_.substr(at, length), at,
                     imag ? value.imag : value.real))
      return false;
  }
  return true;
}

// dense<...>: nested lists of numbers, booleans or (re, im) pairs, or a
// quoted hex blob kept as text.
const Attr *Parser::parseDenseElements() {
  DenseElements dense;
  dense_hex_.clear();
  if (peek() == '"') {
    size_t start = pos_;
    std::string ignored;
    if (!parseString(ignored))
      return nullptr;
    dense.raw = std::string(textFrom(start));
  } else if (peek() == '[') {
    if (!parseDenseList(dense, 0))
      return nullptr;
  } else if (peek() != '>') {
    if (!parseDenseScalar(dense))
      return nullptr;
    dense.splat = true;
  }
  if (!expectChar('>'))
    return nullptr;
  Type type = nullptr;
  if (!expectChar(':') || !(type = parseType()) ||
      !resolveDenseHex(dense, type))
    return nullptr;
  Attr attr{AttrKind::DenseElements, std::move(dense), type, {}};
  return ctx_.attrs.make(std::move(attr));
}

// array<i64: 1, 2> or array<i64>.
const Attr *Parser::parseDenseArray() {
  Type elem = parseType();
  if (!elem)
    return nullptr;
  std::vector<int64_t> values;
  std::string text;
  if (tryChar(':')) {
    do {
      if (peekKeyword("true") || peekKeyword("false")) {
        values.push_back(tryKeyword("true") ? 1 : (tryKeyword("false"), 0));
        continue;
      }
      const Attr *num = parseNumberAttr(elem);
      if (!num)
        return nullptr;
      values.push_back(num->intValue());
      if (num->kind == AttrKind::Float) // keep float spellings for printing
        text += (text.empty() ? "" : ", ") + num->text;
    } while (tryChar(','));
  }
  if (!expectChar('>'))
    return nullptr;
  // Uniqued unless float spellings must be kept for printing.
  if (text.empty())
    return ctx_.attrs.denseArray(elem, std::move(values));
  Attr attr{AttrKind::DenseArray, std::move(values), elem, std::move(text)};
  return ctx_.attrs.make(std::move(attr));
}

// `#stablehlo.dot<lhs_batching_dimensions = [0], ...>` as the same
// structured dictionary the dot_general pretty form produces.
const Attr *Parser::parseDotDimensions() {
  static constexpr std::string_view kKeys[] = {
      "lhs_batching_dimensions", "rhs_batching_dimensions",
      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  std::vector<int64_t> lists[4];
  if (!expectChar('<'))
    return nullptr;
  if (!tryChar('>')) {
    do {
      std::string_view key = parseBareId();
      int index = -1;
      for (int i = 0; i < 4; ++i)
        if (key == kKeys[i])
          index = i;
      if (index < 0)
        return error("unknown dot dimension '" + std::string(key) + "'"),
               nullptr;
      if (!expectChar('=') || !expectChar('['))
        return nullptr;
      if (!tryChar(']')) {
        do {
          int64_t value = 0;
          if (!parseInt(value))
            return nullptr;
          lists[index].push_back(value);
        } while (tryChar(','));
        if (!expectChar(']'))
          return nullptr;
      }
    } while (tryChar(','));
    if (!expectChar('>'))
      return nullptr;
  }
  std::vector<NamedAttr> entries;
  Type i64 = ctx_.types.element("i64");
  for (int i = 0; i < 4; ++i)
    entries.push_back({intern(kKeys[i]), ctx_.attrs.denseArray(i64, lists[i])});
  return ctx_.attrs.make(
      Attr{AttrKind::Dict, std::move(entries), nullptr, "#stablehlo.dot"});
}

// MLIR prints an attribute on one line: line breaks and the indentation
// after them become one space, none just inside brackets.
static std::string onOneLine(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\n' && c != '\r') {
      out += c;
      continue;
    }
    while (!out.empty() && out.back() == ' ')
      out.pop_back();
    while (i + 1 < text.size() &&
           (text[i + 1] == ' ' || text[i + 1] == '\n' || text[i + 1] == '\r'))
      ++i;
    char next = i + 1 < text.size() ? text[i + 1] : '\0';
    char prev = out.empty() ? '\0' : out.back();
    bool tight = prev == '<' || prev == '[' || prev == '(' || next == '>' ||
                 next == ']' || next == ')';
    if (!tight)
      out += ' ';
  }
  return out;
}

const Attr *Parser::parseOpaqueAttr(size_t start) {
  // The cursor is after `#dialect.name` or a keyword like `affine_map`.
  if (pos_ < text_.size() && text_[pos_] == '<' && !skipBalanced('<', '>'))
    return nullptr;
  std::string_view text = textFrom(start);
  if (text.find('\n') != std::string_view::npos)
    return ctx_.attrs.opaque(onOneLine(text));
  return ctx_.attrs.opaque(std::string(text));
}

const Attr *Parser::parseAttribute(Type hint) {
  char c = peek();
  if (c == '"') {
    std::string value;
    if (!parseString(value))
      return nullptr;
    return ctx_.attrs.string(std::move(value));
  }
  if (c == '[') {
    ++pos_;
    if (!enterNesting())
      return nullptr;
    std::vector<const Attr *> elements;
    if (!tryChar(']')) {
      do {
        const Attr *element = parseAttribute();
        if (!element)
          return nullptr;
        elements.push_back(element);
      } while (tryChar(','));
      if (!expectChar(']'))
        return nullptr;
    }
    leaveNesting();
    return ctx_.attrs.array(std::move(elements));
  }
  if (c == '{') {
    AttrDict dict;
    if (!parseAttrDict(dict))
      return nullptr;
    Attr attr{AttrKind::Dict, dict.toVector(), nullptr, {}};
    return ctx_.attrs.make(std::move(attr));
  }
  if (c == '@') {
    std::string name;
    if (!parseSymbolName(name))
      return nullptr;
    while (tryPunct("::")) {
      std::string nested;
      if (!parseSymbolName(nested))
        return nullptr;
      name += "::@" + nested;
    }
    return ctx_.attrs.symbol(std::move(name));
  }
  if (c == '#') {
    size_t start = pos_++;
    std::string_view name = parseBareId();
    if (name.rfind("sdy", 0) == 0 && (name.size() == 3 || name[3] == '.'))
      return parseSdyAttr(name);
    if (name == "stablehlo.dot" && pos_ < text_.size() && text_[pos_] == '<')
      return parseDotDimensions();
    if (name.find('.') == std::string_view::npos &&
        !(pos_ < text_.size() && text_[pos_] == '<')) {
      auto it = attr_aliases_.find("#" + std::string(name));
      if (it == attr_aliases_.end())
        return error("undefined symbol alias id '" + std::string(name) + "'"),
               nullptr;
      return it->second;
    }
    return parseOpaqueAttr(start);
  }
  if (isNumberStart(c, peekAt(1)))
    return parseNumberAttr(hint);
  size_t start = pos_;
  if (tryKeyword("true") || tryKeyword("false"))
    return ctx_.attrs.boolean(text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u');
  if (tryKeyword("unit"))
    return ctx_.attrs.unit();
  if (tryPunct("dense<"))
    return parseDenseElements();
  if (tryPunct("array<"))
    return parseDenseArray();
  if (peekKeyword("loc") && peekAt(3) == '(') {
    tryKeyword("loc");
    return parseLocationAttr();
  }
  for (std::string_view keyword : {"dense_resource", "sparse", "affine_map",
                                   "affine_set", "strided", "distinct"}) {
    if (peekKeyword(keyword)) {
      tryKeyword(keyword);
      if (peek() == '(') {
        if (!skipBalanced('(', ')'))
          return nullptr;
        return ctx_.attrs.opaque(std::string(textFrom(start)));
      }
      if (peek() == '[' && !skipBalanced('[', ']'))
        return nullptr;
      return parseOpaqueAttr(start);
    }
  }
  // A type used as an attribute.
  Type type = parseType();
  if (!type)
    return nullptr;
  Attr attr{AttrKind::TypeAttr, type, nullptr, {}};
  return ctx_.attrs.make(std::move(attr));
}

// ------------------------------------------------------------ locations

// MLIR's location grammar, re-spelled canonically (as MLIR prints it):
//   unknown | #alias | callsite(L at L) | fused<attr>?[L, ...]
//   | "file":line:col (to (line:)?col)? | "name" | "name"(L)
bool Parser::parseLocationBody(std::string &out) {
  if (!enterNesting())
    return false;
  bool ok = parseLocationBodyInner(out);
  leaveNesting();
  return ok;
}

bool Parser::parseLocationBodyInner(std::string &out) {
  char c = peek();
  if (c == '#') {
    size_t start = pos_++;
    if (parseBareId().empty())
      return error("expected location alias name");
    out += textFrom(start);
    return true;
  }
  if (c == '"') {
    std::string name;
    if (!parseString(name))
      return false;
    appendEscapedString(out, name);
    if (tryChar('(')) { // a name location with a child
      out += '(';
      if (!parseLocationBody(out) || !expectChar(')'))
        return false;
      out += ')';
      return true;
    }
    if (peek() != ':')
      return true;
    int64_t line = 0, col = 0;
    if (!expectChar(':') || !parseInt(line))
      return false;
    out += ':' + std::to_string(line);
    if (tryChar(':')) {
      if (!parseInt(col))
        return false;
      out += ':' + std::to_string(col);
    }
    if (tryKeyword("to")) { // a range: `to :col` or `to line:col`
      out += " to ";
      int64_t end = 0;
      if (!tryChar(':')) {
        if (!parseInt(end) || !expectChar(':'))
          return false;
        out += std::to_string(end);
      }
      if (!parseInt(end))
        return false;
      out += ':' + std::to_string(end);
    }
    return true;
  }
  if (tryKeyword("unknown")) {
    out += "unknown";
    return true;
  }
  if (tryKeyword("callsite")) {
    out += "callsite(";
    if (!expectChar('(') || !parseLocationBody(out) || !expectKeyword("at"))
      return false;
    out += " at ";
    if (!parseLocationBody(out) || !expectChar(')'))
      return false;
    out += ')';
    return true;
  }
  if (tryKeyword("fused")) {
    out += "fused";
    if (peek() == '<') {
      size_t start = pos_;
      if (!skipBalanced('<', '>'))
        return false;
      out += textFrom(start);
    }
    if (!expectChar('['))
      return false;
    out += '[';
    if (!tryChar(']')) {
      bool first = true;
      do {
        out += first ? "" : ", ";
        first = false;
        if (!parseLocationBody(out))
          return false;
      } while (tryChar(','));
      if (!expectChar(']'))
        return false;
    }
    out += ']';
    return true;
  }
  return error("expected location instance");
}

/// After `loc`: `(body)`, as a location attribute (aliases resolved at the
/// end of the text: they may be defined after their use).
const Attr *Parser::parseLocationAttr() {
  std::string body;
  if (!expectChar('(') || !parseLocationBody(body) || !expectChar(')'))
    return nullptr;
  Attr *attr = ctx_.attrs.location(std::move(body));
  if (attr->text.find('#') != std::string::npos)
    pending_locations_.push_back(attr);
  return attr;
}

bool Parser::parseLocationSuffix(Location &where) {
  tryKeyword("loc");
  const Attr *attr = parseLocationAttr();
  if (!attr)
    return false;
  where.debug = attr;
  return true;
}

namespace {

/// The body of `alias` with its own alias references replaced, memoized in
/// `done`; `visiting` catches cycles.
bool resolveLocationText(
    const std::string &text,
    const std::unordered_map<std::string, const Attr *> &aliases,
    std::unordered_map<std::string, std::string> &done,
    std::vector<std::string> &visiting, std::string &out, std::string &error);

bool resolveAlias(const std::string &name,
                  const std::unordered_map<std::string, const Attr *> &aliases,
                  std::unordered_map<std::string, std::string> &done,
                  std::vector<std::string> &visiting, std::string &out,
                  std::string &error) {
  if (auto it = done.find(name); it != done.end()) {
    out += it->second;
    return true;
  }
  auto it = aliases.find(name);
  if (it == aliases.end() || it->second->kind != AttrKind::Location) {
    error = it == aliases.end()
                ? "undefined symbol alias id '" + name.substr(1) + "'"
                : "expected location, but found '" + name + "'";
    return false;
  }
  if (std::find(visiting.begin(), visiting.end(), name) != visiting.end()) {
    error = "location alias '" + name + "' refers to itself";
    return false;
  }
  visiting.push_back(name);
  std::string body;
  bool ok = resolveLocationText(it->second->text, aliases, done, visiting, body,
                                error);
  visiting.pop_back();
  if (!ok)
    return false;
  done[name] = body;
  out += body;
  return true;
}

bool resolveLocationText(
    const std::string &text,
    const std::unordered_map<std::string, const Attr *> &aliases,
    std::unordered_map<std::string, std::string> &done,
    std::vector<std::string> &visiting, std::string &out, std::string &error) {
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '"') { // copy a string literal whole (it may hold '#')
      size_t j = i + 1;
      while (j < text.size() && text[j] != '"')
        j += text[j] == '\\' ? 2 : 1;
      out.append(text, i, j + 1 - i);
      i = j + 1;
    } else if (c == '#') {
      size_t j = i + 1;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) ||
              text[j] == '_' || text[j] == '.' || text[j] == '$'))
        ++j;
      if (!resolveAlias(text.substr(i, j - i), aliases, done, visiting, out,
                        error))
        return false;
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return true;
}

} // namespace

bool Parser::resolvePendingLocations() {
  std::unordered_map<std::string, std::string> done;
  std::vector<std::string> visiting;
  for (Attr *attr : pending_locations_) {
    std::string resolved, message;
    if (!resolveLocationText(attr->text, attr_aliases_, done, visiting,
                             resolved, message))
      return error(message);
    attr->text = std::move(resolved);
  }
  pending_locations_.clear();
  return true;
}

} // namespace shardlab
