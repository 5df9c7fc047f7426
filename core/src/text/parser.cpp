// Lexical helpers, types, values, regions and the generic op form.
#include "parser.h"

#include "ir/op_registry.h"
#include "support/byte_scan.h"
#include "text/char_class.h"

#include <algorithm>
#include <cstring>

namespace shardlab {

Parser::Parser(std::string_view text, std::shared_ptr<Context> context,
               DiagnosticEngine &diags, const ParseOptions &options)
    : text_(text), context_(std::move(context)), ctx_(*context_), diags_(diags),
      options_(options) {
  line_starts_.push_back(0);
  // Every newline, 16 bytes at a time where ByteScan exists (the WASM
  // libc's memchr, called per line, was 2% of parsing there).
  const char *base = text.data();
  size_t at = 0;
#if defined(SHARDLAB_HAS_BYTE_SCAN)
  for (; at + ByteScan::kWidth <= text.size(); at += ByteScan::kWidth) {
    unsigned newlines =
        ByteScan::mask(ByteScan::equal(ByteScan::load(base + at), '\n'));
    for (; newlines; newlines &= newlines - 1)
      line_starts_.push_back(at + ByteScan::first(newlines) + 1);
  }
#endif
  for (; at < text.size(); ++at)
    if (base[at] == '\n')
      line_starts_.push_back(at + 1);
}

// ---------------------------------------------------------------- lexical

void Parser::skipSpaceSlow() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (hasClass(c, kBlank)) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t nl = text_.find('\n', pos_);
      pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
    } else {
      break;
    }
  }
}

char Parser::peekAt(size_t offset) {
  skipSpace();
  return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
}

bool Parser::expectedChar(char c) {
  return error(std::string("expected '") + c + "'");
}

bool Parser::expectedToken(std::string_view token) {
  return error("expected '" + std::string(token) + "'");
}

std::string_view Parser::parseBareId() {
  skipSpace();
  if (pos_ >= text_.size() || !isIdStart(text_[pos_]))
    return {};
  size_t start = pos_;
  while (pos_ < text_.size() && isIdChar(text_[pos_]))
    ++pos_;
  return text_.substr(start, pos_ - start);
}

bool Parser::parseInt(int64_t &value) {
  size_t where = mark();
  size_t start = pos_;
  bool negative = pos_ < text_.size() && text_[pos_] == '-';
  if (negative)
    ++pos_;
  if (pos_ >= text_.size() || !isDigit(text_[pos_])) {
    pos_ = start;
    return error("expected integer value");
  }
  uint64_t magnitude = 0;
  bool overflow = false;
  while (pos_ < text_.size() && isDigit(text_[pos_])) {
    uint64_t digit = static_cast<uint64_t>(text_[pos_++] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10)
      overflow = true;
    magnitude = magnitude * 10 + digit;
  }
  uint64_t limit = negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
  if (overflow || magnitude > limit)
    return errorAt(where, "integer value too large");
  value = negative ? static_cast<int64_t>(0 - magnitude)
                   : static_cast<int64_t>(magnitude);
  return true;
}

bool Parser::parseString(std::string &value) {
  if (peek() != '"')
    return error("expected string");
  ++pos_;
  value.clear();
  while (pos_ < text_.size() && text_[pos_] != '"') {
    char c = text_[pos_++];
    if (c == '\n')
      return error("expected '\"' in string literal");
    if (c != '\\') {
      value += c;
      continue;
    }
    if (pos_ >= text_.size())
      break;
    char esc = text_[pos_++];
    if (esc == 'n')
      value += '\n';
    else if (esc == 't')
      value += '\t';
    else if (esc == '"' || esc == '\\')
      value += esc;
    else if (pos_ < text_.size() && isxdigit(static_cast<unsigned char>(esc)) &&
             isxdigit(static_cast<unsigned char>(text_[pos_]))) {
      value += static_cast<char>(
          std::stoi(std::string(text_.substr(pos_ - 1, 2)), nullptr, 16));
      ++pos_;
    } else
      return error("unknown escape in string literal");
  }
  if (pos_ >= text_.size())
    return error("expected '\"' in string literal");
  ++pos_;
  return true;
}

bool Parser::parseSymbolName(std::string &name) {
  if (peek() != '@')
    return error("expected symbol name");
  ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '"')
    return parseString(name);
  size_t start = pos_;
  while (pos_ < text_.size() && (isIdChar(text_[pos_]) || text_[pos_] == '-'))
    ++pos_;
  if (start == pos_)
    return error("expected symbol name");
  name = std::string(text_.substr(start, pos_ - start));
  return true;
}

Location Parser::loc() {
  skipSpace();
  return locationAt(pos_);
}

Location Parser::locationAt(size_t pos) {
  // Positions mostly move forward: walk from the last answer before
  // falling back to a binary search.
  if (pos < loc_cache_pos_) {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
    loc_cache_line_ = static_cast<size_t>(it - line_starts_.begin()) - 1;
  }
  while (loc_cache_line_ + 1 < line_starts_.size() &&
         line_starts_[loc_cache_line_ + 1] <= pos)
    ++loc_cache_line_;
  loc_cache_pos_ = pos;
  size_t col = pos - line_starts_[loc_cache_line_] + 1;
  if (loc_cache_line_ == 0)
    col += options_.column_offset;
  return {static_cast<uint32_t>(loc_cache_line_ + 1 + options_.line_offset),
          static_cast<uint32_t>(col)};
}

bool Parser::error(std::string message) {
  return errorAt(loc(), std::move(message));
}

bool Parser::errorAt(Location where, std::string message) {
  diags_.error(where, std::move(message));
  failed_ = true;
  return false;
}

bool Parser::error(const char *message) {
  return errorAt(loc(), std::string(message));
}

bool Parser::errorAt(Location where, const char *message) {
  return errorAt(where, std::string(message));
}

bool Parser::errorAt(size_t offset, const char *message) {
  return errorAt(locationAt(offset), std::string(message));
}

bool Parser::nestingTooDeep() {
  --depth_;
  return error("nesting is deeper than " +
               std::to_string(options_.max_nesting) + " levels");
}

bool Parser::skipBalanced(char open, char close) {
  // The cursor is on `open`; skips to just after the matching `close`,
  // honouring nested brackets of every kind and string literals.
  std::string stack;
  while (pos_ < text_.size()) {
    char c = text_[pos_++];
    if (c == '"') {
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size())
          ++pos_;
        ++pos_;
      }
      ++pos_;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (stack.size() >= options_.max_nesting)
        return error("nesting is too deep");
      stack.push_back(c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>');
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (c == '>' && pos_ >= 2 && text_[pos_ - 2] == '-')
        continue; // the arrow of `->`
      if (stack.empty() || stack.back() != c)
        return error(std::string("unbalanced '") + c + "'");
      stack.pop_back();
      if (stack.empty())
        return true;
    }
  }
  (void)open;
  (void)close;
  return error(std::string("expected '") + close + "'");
}

// ------------------------------------------------------------------ types

Type Parser::parseTensorType() {
  // The cursor is after `tensor<`.
  if (tryChar('*')) {
    if (!expectChar('x'))
      return nullptr;
    Type elem = parseType();
    if (!elem || !expectChar('>'))
      return nullptr;
    return ctx_.types.unrankedTensor(elem);
  }
  std::vector<int64_t> shape;
  skipSpace();
  int64_t elements = 1;
  while (pos_ < text_.size() && (isDigit(text_[pos_]) || text_[pos_] == '?')) {
    if (text_[pos_] == '?') {
      ++pos_;
      shape.push_back(kDynamic);
    } else {
      int64_t dim = 0;
      const size_t dim_start = pos_; // a location only on error: hot path
      if (!parseInt(dim))
        return nullptr;
      if (__builtin_mul_overflow(elements, dim, &elements)) {
        pos_ = dim_start;
        return error("tensor has more elements than fit in 64 bits"), nullptr;
      }
      shape.push_back(dim);
    }
    if (pos_ >= text_.size() || text_[pos_] != 'x')
      return error("expected 'x' in dimension list"), nullptr;
    ++pos_;
  }
  Type elem = parseType();
  if (!elem)
    return nullptr;
  std::string encoding;
  if (tryChar(',')) {
    skipSpace();
    size_t start = pos_;
    const Attr *attr = parseAttribute();
    if (!attr)
      return nullptr;
    encoding = std::string(textFrom(start));
  }
  if (!expectChar('>'))
    return nullptr;
  return ctx_.types.rankedTensor(shape, elem, encoding);
}

Type Parser::parseDialectType() {
  // The cursor is on '!'.
  size_t start = pos_++;
  while (pos_ < text_.size() && isIdChar(text_[pos_]))
    ++pos_;
  std::string_view name = text_.substr(start, pos_ - start);
  if (name == "!stablehlo.token")
    return ctx_.types.token(name);
  if (pos_ < text_.size() && text_[pos_] == '<' && !skipBalanced('<', '>'))
    return nullptr;
  std::string full(textFrom(start));
  if (name.find('.') == std::string_view::npos) { // an alias `!name`
    auto it = type_aliases_.find(full);
    if (it == type_aliases_.end())
      return error("undefined symbol alias id '" + full.substr(1) + "'"),
             nullptr;
    return it->second;
  }
  if (name.rfind("!quant.", 0) == 0)
    return ctx_.types.element(full);
  return ctx_.types.opaque(full);
}

// The first byte of kSpanStop at or after `from`, or the text's end.
size_t Parser::spanStop(size_t from) const {
  size_t at = from;
#if defined(SHARDLAB_HAS_BYTE_SCAN)
  for (; at + ByteScan::kWidth <= text_.size(); at += ByteScan::kWidth) {
    const ByteScan::Bytes bytes = ByteScan::load(text_.data() + at);
    const unsigned stops = ByteScan::mask(
        ByteScan::any(ByteScan::any(ByteScan::any(ByteScan::equal(bytes, '>'),
                                                  ByteScan::equal(bytes, '<')),
                                    ByteScan::any(ByteScan::equal(bytes, '\n'),
                                                  ByteScan::equal(bytes, '"'))),
                      ByteScan::equal(bytes, '(')));
    if (stops)
      return at + ByteScan::first(stops);
  }
#endif
  while (at < text_.size() && !hasClass(text_[at], kSpanStop))
    ++at;
  return at;
}

// `tensor<8x16xf32>` and other types without nested brackets are looked up
// by their source text: most modules spell the same few types many times.
// The source span of a type with no nested brackets (`tensor<8x16xf32>`,
// `f32`), or an empty view when the type is more complex.
std::string_view Parser::simpleTypeSpan() const {
  size_t end = pos_;
  while (end < text_.size() && isIdChar(text_[end]))
    ++end;
  if (end == pos_)
    return {};
  if (end < text_.size() && text_[end] == '<') {
    size_t close = spanStop(end + 1);
    if (close >= text_.size() || text_[close] != '>')
      return {};
    end = close + 1;
  }
  return text_.substr(pos_, end - pos_);
}

Type Parser::parseType() {
  char c = peek();
  if (c == '!')
    return parseDialectType();
  if (c == '(')
    return parseFunctionTypeAsType();
  // Modules spell the same few types many times: look them up by spelling.
  std::string_view span = simpleTypeSpan();
  if (!span.empty()) {
    auto it = type_cache_.find(span);
    if (it != type_cache_.end()) {
      pos_ += span.size();
      return it->second;
    }
  }
  return parseUncachedType(span);
}

Type Parser::parseFunctionTypeAsType() {
  std::vector<Type> inputs, results;
  if (!parseFunctionType(inputs, results))
    return nullptr;
  return ctx_.types.function(inputs, results);
}

Type Parser::parseUncachedType(std::string_view span) {
  size_t start = pos_;
  Type type = parseBareType();
  if (type && !span.empty() && pos_ - start == span.size())
    type_cache_.emplace(span, type);
  return type;
}

// The builtin element types: index, none, floats (f16, bf16, tf32, f32,
// f64, f80, f128, the f8E*/f6E*/f4E* variants) and integers (i8, si8, ui8).
static bool isBuiltinElementType(std::string_view id) {
  static const std::string_view kFloats[] = {
      "index", "none", "bf16", "f16", "tf32", "f32", "f64", "f80", "f128"};
  for (std::string_view name : kFloats)
    if (id == name)
      return true;
  if (id.size() > 3 && id[0] == 'f' &&
      (id[1] == '8' || id[1] == '6' || id[1] == '4') && id[2] == 'E')
    return true;
  std::string_view digits = id;
  if (digits.rfind("si", 0) == 0 || digits.rfind("ui", 0) == 0)
    digits.remove_prefix(2);
  else if (digits.rfind("i", 0) == 0)
    digits.remove_prefix(1);
  else
    return false;
  return !digits.empty() &&
         digits.find_first_not_of("0123456789") == std::string_view::npos;
}

Type Parser::parseBareType() {
  skipSpace();
  size_t start = pos_;
  std::string_view id = parseBareId();
  if (id.empty())
    return error("expected non-function type"), nullptr;
  if (id == "tensor" && tryChar('<')) {
    if (!enterNesting())
      return nullptr;
    Type type = parseTensorType();
    leaveNesting();
    return type;
  }
  if (id == "tuple" && tryChar('<')) {
    std::vector<Type> members;
    if (!tryChar('>')) {
      if (!enterNesting() || !parseTypeList(members) || !expectChar('>'))
        return nullptr;
      leaveNesting();
    }
    return ctx_.types.tuple(members);
  }
  if (pos_ < text_.size() && text_[pos_] == '<') { // complex<f32>, vector<..>
    if (!skipBalanced('<', '>'))
      return nullptr;
    std::string full(textFrom(start));
    return id == "complex" ? ctx_.types.element(full) : ctx_.types.opaque(full);
  }
  if (!isBuiltinElementType(id)) {
    pos_ = start;
    return error("expected non-function type, got '" + std::string(id) + "'"),
           nullptr;
  }
  return ctx_.types.element(id);
}

bool Parser::parseTypeList(std::vector<Type> &types) {
  do {
    Type type = parseType();
    if (!type)
      return false;
    types.push_back(type);
  } while (tryChar(','));
  return true;
}

bool Parser::parseFunctionType(std::vector<Type> &inputs,
                               std::vector<Type> &results) {
  if (!expectChar('(') || !enterNesting())
    return false;
  if (!tryChar(')') && (!parseTypeList(inputs) || !expectChar(')')))
    return false;
  leaveNesting();
  if (!expectPunct("->"))
    return false;
  if (peek() == '(') {
    ++pos_;
    if (!tryChar(')') && (!parseTypeList(results) || !expectChar(')')))
      return false;
    return true;
  }
  Type result = parseType();
  if (!result)
    return false;
  results.push_back(result);
  return true;
}

// ------------------------------------------------------------ values

bool Parser::parseOperand(Value *&value) {
  size_t where = mark();
  std::string_view name = parseValueName();
  if (name.empty())
    return error("expected SSA operand");
  int64_t number = -1;
  if (pos_ < text_.size() && text_[pos_] == '#') {
    ++pos_;
    if (!parseInt(number) || number < 0)
      return error("expected result number");
  }
  auto it = values_.find(name);
  if (it == values_.end())
    return errorAt(where, "use of undeclared SSA value name");
  const ValueDef &def = it->second;
  if (def.arg) {
    if (number > 0)
      return errorAt(where, "invalid result number");
    value = def.arg;
    return true;
  }
  size_t index = def.offset + (number < 0 ? 0 : static_cast<size_t>(number));
  if (index >= def.op->numResults())
    return errorAt(where, "reference to invalid result number");
  value = def.op->result(index);
  return true;
}

bool Parser::parseOperandList(std::vector<Value *> &values) {
  if (peek() != '%')
    return true;
  while (true) {
    Value *value = nullptr;
    if (!parseOperand(value))
      return false;
    values.push_back(value);
    // A ',' not followed by an operand belongs to the op's own syntax
    // (`%a, %b, dims = [...]`): leave it for the caller.
    size_t before = pos_;
    if (!tryChar(',') || peek() != '%') {
      pos_ = before;
      return true;
    }
  }
}

bool Parser::defineValue(std::string_view name, Operation *op, Value *arg,
                         uint32_t offset) {
  auto [it, inserted] = values_.emplace(name, ValueDef{op, arg, offset});
  if (!inserted)
    return false;
  if (!scope_starts_.empty())
    scope_names_.push_back(name);
  return true;
}

bool Parser::parseArgDeclList(std::vector<ArgDecl> &args, bool allow_attrs) {
  if (!expectChar('('))
    return false;
  if (tryChar(')'))
    return true;
  do {
    ArgDecl arg;
    arg.loc = loc();
    arg.name = parseValueName();
    if (arg.name.empty())
      return error("expected SSA identifier");
    if (!expectChar(':') || !(arg.type = parseType()))
      return false;
    if (allow_attrs && peek() == '{') {
      AttrDict dict;
      if (!parseAttrDict(dict))
        return false;
      arg.attrs = dict.toVector();
    }
    if (!parseTrailingLocation(arg.loc))
      return false;
    args.push_back(std::move(arg));
  } while (tryChar(','));
  return expectChar(')');
}

// ------------------------------------------------------------ regions

std::string_view Parser::currentDefaultDialect() const {
  return dialect_stack_.empty() ? std::string_view() : dialect_stack_.back();
}

bool Parser::parseRegion(Region &region, const std::vector<ArgDecl> &args,
                         bool isolated) {
  if (!expectChar('{') || !enterNesting())
    return false;
  if (isolated) { // hide every enclosing value
    hidden_.push_back(std::move(values_));
    values_ = takeSpareTable();
  }
  scope_starts_.push_back(scope_names_.size());
  bool ok = true;
  if (peek() == '}') {
    if (!args.empty())
      ok = parseBlock(region, true, args); // an empty entry block
  } else {
    bool entry = true;
    while (ok && peek() != '}' && !atEnd()) {
      ok = parseBlock(region, entry, args);
      entry = false;
    }
  }
  size_t scope_start = scope_starts_.back();
  for (size_t i = scope_start; i < scope_names_.size(); ++i)
    values_.erase(scope_names_[i]);
  scope_names_.resize(scope_start);
  scope_starts_.pop_back();
  if (isolated) {
    values_.clear(); // keeps its buckets for the next isolated region
    spare_tables_.push_back(std::move(values_));
    values_ = std::move(hidden_.back());
    hidden_.pop_back();
  }
  leaveNesting();
  return ok && expectChar('}');
}

Parser::ValueTable Parser::takeSpareTable() {
  if (spare_tables_.empty())
    return {};
  ValueTable table = std::move(spare_tables_.back());
  spare_tables_.pop_back();
  return table;
}

bool Parser::parseBlock(Region &region, bool entry,
                        const std::vector<ArgDecl> &args) {
  Block &block = region.addBlock();
  std::vector<ArgDecl> label_args;
  if (peek() == '^') { // ^bb0(%a: t, ...):
    ++pos_;
    parseBareId();
    if (peek() == '(' && !parseArgDeclList(label_args, false))
      return false;
    if (!expectChar(':'))
      return false;
  }
  const std::vector<ArgDecl> &decls =
      entry && !args.empty() ? args : label_args;
  block.reserveArguments(decls.size());
  for (const ArgDecl &decl : decls) {
    // A func.func keeps its arguments' attributes in its `arg_attrs`.
    Value *value = block.addArgument(decl.type, decl.loc);
    if (!defineValues(decl.name, nullptr, value, decl.loc))
      return false;
  }
  while (peek() != '}' && peek() != '^' && !atEnd())
    if (!parseOperation(block))
      return false;
  return true;
}

// -------------------------------------------------------------- ops

bool Parser::parseResultNames(std::vector<ResultName> &names) {
  if (peek() != '%')
    return true;
  do {
    size_t where = mark();
    std::string_view name = parseValueName();
    if (name.empty())
      return error("expected SSA identifier");
    int64_t count = 1;
    if (pos_ < text_.size() && text_[pos_] == ':') {
      ++pos_;
      if (!parseInt(count) || count < 1)
        return error("expected valid result count");
    }
    names.push_back({name, static_cast<size_t>(count), where});
  } while (tryChar(','));
  return expectChar('=');
}

bool Parser::resultCountMismatch(const Operation &op, size_t expected) {
  return errorAt(op.loc, "operation defines " +
                             std::to_string(op.numResults()) +
                             " results but was provided " +
                             std::to_string(expected) + " to bind");
}

bool Parser::redefinition(Location where, std::string_view name) {
  return errorAt(where,
                 "redefinition of SSA value '%" + std::string(name) + "'");
}

bool Parser::bindResults(Operation &op, const std::vector<ResultName> &names) {
  size_t expected = 0;
  for (const ResultName &name : names)
    expected += name.count;
  if (expected != op.numResults())
    return resultCountMismatch(op, expected);
  uint32_t offset = 0;
  for (const ResultName &name : names) {
    // `%a:2, %b = ...`: `%b` names result 2, `%a#1` result 1.
    if (!defineValues(name.name, &op, nullptr, name.at, offset))
      return false;
    offset += static_cast<uint32_t>(name.count);
  }
  return true;
}

bool Parser::parseOperation(Block &block) {
  ScratchPool<ResultName>::Lease names_lease(name_lists_);
  std::vector<ResultName> &names = *names_lease;
  if (!parseResultNames(names))
    return false;
  size_t num_results = 0;
  for (const ResultName &name : names)
    num_results += name.count;
  Location where = loc();
  Operation *op = nullptr;
  if (peek() == '"') {
    if (!parseGenericOp(op, where))
      return false;
  } else {
    std::string_view name = parseBareId();
    if (name.empty())
      return error("expected operation name");
    if (!parseCustomOp(op, name, where, num_results))
      return false;
  }
  std::unique_ptr<Operation> owned(op);
  if (!parseTrailingLocation(op->loc) || !bindResults(*op, names))
    return false;
  // A result is where its op is, written location included: an op a pass
  // makes at a value takes the value's location (as MLIR's getLoc()).
  for (size_t i = 0; i < op->numResults(); ++i)
    op->result(i)->loc = op->loc;
  block.push_back(std::move(owned));
  return true;
}

const OpInfo *Parser::lookupInDefaultDialect(std::string_view name) {
  std::string_view dialect = currentDefaultDialect();
  if (dialect.empty())
    return nullptr;
  return lookupOp(std::string(dialect) + "." + std::string(name));
}

bool Parser::unknownCustomOp(Location where, std::string_view name) {
  return errorAt(where, "custom op '" + std::string(name) +
                            "' is unknown; shardlab reads ops it does not "
                            "model only in the generic form, e.g. \"" +
                            std::string(name) +
                            "\"(%a) {attrs} : (operand types) -> result "
                            "types, and keeps them as they are");
}

bool Parser::parseCustomOp(Operation *&op, std::string_view name,
                           Location where, size_t num_results) {
  const OpInfo *info = lookupOp(name);
  if (!info && name.find('.') == std::string_view::npos)
    info = lookupInDefaultDialect(name);
  if (!info || !info->parse)
    return unknownCustomOp(where, name);
  auto owned = Operation::create(ctx_.ops, info->name, info, where);
  dialect_stack_.push_back(info->region_dialect.empty()
                               ? currentDefaultDialect()
                               : info->region_dialect);
  bool ok = info->parse(*this, *owned, num_results);
  dialect_stack_.pop_back();
  if (!ok)
    return false;
  op = owned.release();
  return true;
}

bool Parser::parseGenericOp(Operation *&op, Location where) {
  std::string name;
  if (!parseString(name))
    return false;
  const OpInfo *info = lookupOp(name);
  auto owned = Operation::create(ctx_.ops, ctx_.intern(name), info, where);
  auto operands_lease = valueList();
  std::vector<Value *> &operands = *operands_lease;
  if (!expectChar('(') || !parseOperandList(operands) || !expectChar(')'))
    return false;
  owned->setOperands(operands);
  if (peek() == '[')
    return error("successors are not supported");
  if (tryPunct("<{")) {
    --pos_;
    if (!parseAttrDict(info ? owned->attrs : owned->mutableProps()) ||
        !expectChar('>'))
      return false;
  }
  if (peek() == '(') {
    ++pos_;
    dialect_stack_.push_back(info && !info->region_dialect.empty()
                                 ? info->region_dialect
                                 : std::string_view());
    do {
      bool isolated = info && info->isolated_from_above;
      if (!parseRegion(owned->addRegion(), {}, isolated))
        return dialect_stack_.pop_back(), false;
    } while (tryChar(','));
    dialect_stack_.pop_back();
    if (!expectChar(')'))
      return false;
  }
  if (!parseOptionalAttrDict(owned->attrs))
    return false;
  auto inputs_lease = typeList(), results_lease = typeList();
  std::vector<Type> &inputs = *inputs_lease, &results = *results_lease;
  size_t type_loc = mark();
  if (!expectChar(':') || !parseFunctionType(inputs, results))
    return false;
  if (inputs.size() != operands.size())
    return errorAt(type_loc, std::to_string(operands.size()) +
                                 " operands present, but expected " +
                                 std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (operands[i]->type != inputs[i])
      return errorAt(where, "use of value expects different type than prior "
                            "uses: '" +
                                inputs[i]->text + "' vs '" +
                                operands[i]->type->text + "'");
  owned->setResultTypes(results);
  if (info && info->enum_property &&
      !readEnumProperty(*info->enum_property, *owned, where))
    return false;
  op = owned.release();
  return true;
}

// A Shardy enum written as its number (`allowed_direction = 2 : i32`) is
// kept by name, as the custom form keeps it; the number an absent
// attribute stands for (a sum) is not kept at all.
bool Parser::readEnumProperty(const EnumProperty &property, Operation &op,
                              Location where) {
  const Attr *number = op.attrs.get(property.property);
  if (!number || number->kind != AttrKind::Integer)
    return true; // absent, or a name already
  const int64_t n = number->intValue();
  if (n < 0 || n >= int64_t(property.names.size()))
    return errorAt(where, "'" + std::string(op.name) + "' op property '" +
                              std::string(property.property) + "' is " +
                              std::to_string(n) + ", not one of 0 to " +
                              std::to_string(property.names.size() - 1));
  op.attrs.erase(property.property);
  if (n != property.absent)
    op.attrs.set(ctx_.intern(property.attr),
                 ctx_.attrs.string(std::string(property.names[size_t(n)])));
  return true;
}

// ------------------------------------------------------------ top level

bool Parser::parseAliasDefinition() {
  char sigil = peek();
  size_t start = pos_++;
  while (pos_ < text_.size() && isIdChar(text_[pos_]))
    ++pos_;
  std::string name(textFrom(start));
  if (!expectChar('='))
    return false;
  if (sigil == '#') {
    const Attr *attr = parseAttribute();
    if (!attr)
      return false;
    attr_aliases_[name] = attr;
  } else {
    Type type = parseType();
    if (!type)
      return false;
    type_aliases_[name] = type;
  }
  return true;
}

bool Parser::parseTopLevelItem(Module &module) {
  char c = peek();
  if ((c == '#' || c == '!') && pos_ + 1 < text_.size() &&
      isIdStart(text_[pos_ + 1])) {
    // `#alias = ...` definitions; `#sdy...` never starts a statement.
    return parseAliasDefinition();
  }
  return parseOperation(module.body());
}

bool Parser::parseExplicitModule(Module &module) {
  module.op().loc = loc();
  tryKeyword("module");
  module.explicit_module = true;
  if (peek() == '@' && !parseSymbolName(module.sym_name))
    return false;
  AttrDict attrs;
  if (!parseOptionalAttrDictWithKeyword(attrs))
    return false;
  for (const NamedAttr &entry : attrs.entries())
    module.op().attrs.set(entry.name, entry.value);
  if (!expectChar('{'))
    return false;
  while (peek() != '}' && !atEnd())
    if (!parseTopLevelItem(module))
      return false;
  return expectChar('}') && parseTrailingLocation(module.op().loc);
}

// `"builtin.module"() <{sym_name = "m"}> ({ ... }) {attrs} : () -> ()`,
// the module as -mlir-print-op-generic prints it.
bool Parser::parseGenericModule(Module &module) {
  module.op().loc = loc();
  std::string name;
  if (!parseString(name))
    return false;
  module.explicit_module = true;
  AttrDict attrs;
  if (!expectChar('(') || !expectChar(')') ||
      (tryPunct("<{") && !parsePropertiesRest(attrs)) || !expectChar('(') ||
      !expectChar('{'))
    return false;
  while (peek() != '}' && !atEnd())
    if (!parseTopLevelItem(module))
      return false;
  if (!expectChar('}') || !expectChar(')') || !parseOptionalAttrDict(attrs) ||
      !expectChar(':') || !expectChar('(') || !expectChar(')') ||
      !expectPunct("->") || !expectChar('(') || !expectChar(')'))
    return false;
  for (const NamedAttr &entry : attrs.entries()) {
    if (entry.name == "sym_name" && entry.value->kind == AttrKind::String)
      module.sym_name = entry.value->str();
    else
      module.op().attrs.set(entry.name, entry.value);
  }
  return parseTrailingLocation(module.op().loc);
}

// A file is one `module {...}` (with alias definitions before and after
// it, as JAX writes `#loc` aliases) or a list of top-level ops that form
// the module implicitly.
std::unique_ptr<Module> Parser::parseTopLevel() {
  auto module = std::make_unique<Module>(context_);
  scope_starts_.push_back(0);
  dialect_stack_.push_back({});
  bool any_op = false;
  while (!atEnd()) {
    if (peekKeyword("module") && !any_op && !module->explicit_module) {
      if (!parseExplicitModule(*module))
        return nullptr;
      continue;
    }
    if (!any_op && !module->explicit_module &&
        text_.substr(pos_, 16) == "\"builtin.module\"") {
      if (!parseGenericModule(*module))
        return nullptr;
      continue;
    }
    char c = peek();
    bool alias = (c == '#' || c == '!') && pos_ + 1 < text_.size() &&
                 isIdStart(text_[pos_ + 1]);
    if (!alias && module->explicit_module)
      return error("expected only alias definitions after the module (one "
                   "module per file; split several with -split-input-file)"),
             nullptr;
    any_op = any_op || !alias;
    if (!parseTopLevelItem(*module))
      return nullptr;
  }
  if (!resolvePendingLocations())
    return nullptr;
  module->signature_ranges = std::move(signature_ranges_);
  return module;
}

Result<const Attr *> parseAttributeText(std::string_view text,
                                        std::shared_ptr<Context> context) {
  DiagnosticEngine diags;
  Parser parser(text, std::move(context), diags, {});
  const Attr *attr = parser.parseAttribute();
  if (attr && !parser.atEnd()) {
    parser.error("expected the end of the attribute");
    attr = nullptr;
  }
  if (attr)
    return attr;
  const auto &all = diags.diagnostics();
  return makeError(all.empty() ? "cannot parse the attribute"
                               : "col " + std::to_string(all.front().loc.col) +
                                     ": " + all.front().message);
}

std::unique_ptr<Module> parseModule(std::string_view text,
                                    DiagnosticEngine &diags,
                                    const ParseOptions &options,
                                    std::shared_ptr<Context> context) {
  if (!context)
    context = std::make_shared<Context>();
  Parser parser(text, context, diags, options);
  return parser.parseTopLevel();
}

} // namespace shardlab
