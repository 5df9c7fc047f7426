// Parsing of builtin attributes: numbers, strings, arrays, dictionaries,
// dense literals, dense arrays, symbol references and opaque dialect
// attributes. The sdy attributes are in parser_sdy.cpp.
#include "ir/stablehlo_dim_numbers.h"
#include "parser.h"
#include "printer.h"

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

// `#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "z", size = 4>]>`
// as StableHLO prints it: `#stablehlo.mesh<axes=[<name = "z", size = 4>]>`.
static void canonicalStablehloMeshes(std::string &text) {
  constexpr std::string_view kMesh = "#stablehlo.mesh<";
  constexpr std::string_view kAxis = "#stablehlo.mesh_axis<";
  for (size_t at = text.find(kMesh); at != std::string::npos;
       at = text.find(kMesh, at + 1)) {
    size_t p = at + kMesh.size();
    size_t key = text.find_first_not_of(' ', p);
    if (key == std::string::npos || text.compare(key, 4, "axes") != 0)
      continue;
    size_t eq = text.find_first_not_of(' ', key + 4);
    if (eq == std::string::npos || text[eq] != '=')
      continue;
    size_t open = text.find_first_not_of(' ', eq + 1);
    if (open == std::string::npos || text[open] != '[')
      continue;
    text.replace(p, open + 1 - p, "axes=[");
    size_t end = text.find(']', p);
    for (size_t axis = text.find(kAxis, p);
         axis != std::string::npos && axis < end;
         axis = text.find(kAxis, axis)) {
      text.replace(axis, kAxis.size(), "<");
      end -= kAxis.size() - 1;
    }
  }
}

// StableHLO's dimension-number attributes kept as text in the form StableHLO
// prints (defaults left out, compact convolution lists); others as written.
static std::string canonicalOpaque(std::string text) {
  if (text.find("#stablehlo.mesh<") != std::string::npos)
    canonicalStablehloMeshes(text);
  if (std::optional<GatherScatterDims> dims = parseGatherScatterDims(text))
    return formatGatherScatterDims(*dims);
  constexpr std::string_view kConv = "#stablehlo.conv<";
  if (text.rfind(kConv, 0) == 0 && text.back() == '>')
    if (std::optional<std::string> body =
            canonicalConvDims(std::string_view(text).substr(
                kConv.size(), text.size() - kConv.size() - 1)))
      return std::string(kConv) + *body + ">";
  return text;
}

const Attr *Parser::parseOpaqueAttr(size_t start) {
  // The cursor is after `#dialect.name` or a keyword like `affine_map`.
  if (pos_ < text_.size() && text_[pos_] == '<' && !skipBalanced('<', '>'))
    return nullptr;
  std::string_view text = textFrom(start);
  if (text.find('\n') != std::string_view::npos)
    return ctx_.attrs.opaque(canonicalOpaque(onOneLine(text)));
  return ctx_.attrs.opaque(canonicalOpaque(std::string(text)));
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
