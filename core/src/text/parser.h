// The recursive-descent MLIR parser used by parseModule and by the custom
// op syntaxes (ops_*.cpp). It reads characters directly (no token stream):
// MLIR's grammar is context-sensitive in places (shapes like `8x?xf32`,
// factor symbols like `ij`), and this keeps the hot path allocation-free.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/text/text.h"
#include "support/string_table.h"
#include "text/char_class.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace shardlab {

struct OpInfo;
struct EnumProperty;

/// An entry block argument declared in a custom syntax (`%arg1: tensor<..>`).
struct ArgDecl {
  std::string_view name;
  Type type = nullptr;
  Location loc;
  std::vector<NamedAttr> attrs;
};

/// Vectors parse steps borrow and give back with their capacity: parsing
/// an op needs a few short lists (operands, types, result names), and
/// allocating them afresh per op was a fifth of the parser's instructions.
template <typename T> class ScratchPool {
public:
  /// One borrowed vector, empty, given back when the lease ends.
  class Lease {
  public:
    explicit Lease(ScratchPool &pool) : pool_(pool), list_(pool.take()) {}
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    ~Lease() { pool_.free_.push_back(std::move(list_)); }
    std::vector<T> &operator*() { return list_; }
    std::vector<T> *operator->() { return &list_; }

  private:
    ScratchPool &pool_;
    std::vector<T> list_;
  };

private:
  std::vector<T> take() {
    if (free_.empty())
      return {};
    std::vector<T> list = std::move(free_.back());
    free_.pop_back();
    list.clear();
    return list;
  }
  std::vector<std::vector<T>> free_;
};

class Parser {
public:
  Parser(std::string_view text, std::shared_ptr<Context> context,
         DiagnosticEngine &diags, const ParseOptions &options);

  std::unique_ptr<Module> parseTopLevel();

  // ---- lexical helpers (each skips leading white space and comments)
  /// Inline: called before every token, and most tokens follow no blank
  /// or a single space.
  /// (Forced: clang, the WASM build's compiler, kept it out of line.)
  __attribute__((always_inline)) void skipSpace() {
    if (pos_ + 1 < text_.size()) {
      char c = text_[pos_];
      if (c > ' ' && c != '/')
        return;
      char next = text_[pos_ + 1];
      if (c == ' ' && next > ' ' && next != '/') {
        ++pos_;
        return;
      }
    }
    skipSpaceSlow();
  }
  __attribute__((always_inline)) bool atEnd() {
    skipSpace();
    return pos_ >= text_.size();
  }
  // peek, tryChar and expectChar run before nearly every token; clang
  // kept them out of line (5% of the WASM parse + print profile in peek's
  // own frame), so they are forced inline like skipSpace.
  __attribute__((always_inline)) char peek() {
    skipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  char peekAt(size_t offset);
  __attribute__((always_inline)) bool tryChar(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  /// tryChar, or an "expected 'c'" error.
  __attribute__((always_inline)) bool expectChar(char c) {
    return tryChar(c) || expectedChar(c);
  }
  /// Inline, like tryKeyword: `->`, `x` and the like, several per op.
  __attribute__((always_inline)) bool tryPunct(std::string_view punct) {
    skipSpace();
    if (!equalStrings(text_.substr(pos_, punct.size()), punct))
      return false;
    pos_ += punct.size();
    return true;
  }
  /// tryPunct, or an "expected '...'" error (out of line).
  bool expectPunct(std::string_view punct) {
    return tryPunct(punct) || expectedToken(punct);
  }
  /// tryKeyword, or an "expected '...'" error (out of line).
  __attribute__((always_inline)) bool expectKeyword(std::string_view keyword) {
    return tryKeyword(keyword) || expectedToken(keyword);
  }
  /// Whether `keyword` is the next token (whole: not the start of a longer
  /// identifier). Forced inline: ~3 calls per op (the trailing `loc`,
  /// keyed op syntax), and clang kept it out of line.
  __attribute__((always_inline)) bool peekKeyword(std::string_view keyword) {
    skipSpace();
    if (!equalStrings(text_.substr(pos_, keyword.size()), keyword))
      return false;
    size_t after = pos_ + keyword.size();
    return after >= text_.size() || !isIdChar(text_[after]);
  }
  __attribute__((always_inline)) bool tryKeyword(std::string_view keyword) {
    if (!peekKeyword(keyword))
      return false;
    pos_ += keyword.size();
    return true;
  }
  std::string_view parseBareId(); ///< empty when none
  bool parseInt(int64_t &value);  ///< optional leading '-'
  bool parseString(std::string &value);
  bool parseSymbolName(std::string &name); ///< @name
  /// The position of the next token (skips blanks and comments).
  Location loc();
  /// The offset of the next token (skips blanks and comments): where a
  /// check made later reports its error. Cheaper than loc(), which turns
  /// the offset into a line and column even when nothing goes wrong.
  __attribute__((always_inline)) size_t mark() {
    skipSpace();
    return pos_;
  }
  /// The position of the cursor itself (where the last token ended).
  Location locHere() { return locationAt(pos_); }
  /// Keeps where func `name`'s arguments and results were written; the
  /// parsed module gets them (Module::signature_ranges).
  void recordSignature(const std::string &name, FuncSignatureRanges ranges) {
    signature_ranges_[name] = std::move(ranges);
  }
  size_t pos() const { return pos_; }
  void advance(size_t count) { pos_ = std::min(pos_ + count, text_.size()); }
  std::string_view textFrom(size_t start) const {
    return text_.substr(start, pos_ - start);
  }
  bool error(std::string message);
  bool errorAt(Location where, std::string message);
  /// At an offset from mark().
  bool errorAt(size_t offset, std::string message) {
    return errorAt(locationAt(offset), std::move(message));
  }
  /// The errors with a literal message, which nearly all are: out of line
  /// and cold, so that the hot parse functions do not each build a
  /// std::string per error they may report. In the WASM build that inline
  /// code (libc++'s string is instantiated in place) made the parse
  /// functions larger and made V8 spill values on their hot paths.
  [[gnu::cold, gnu::noinline]] bool error(const char *message);
  [[gnu::cold, gnu::noinline]] bool errorAt(Location where,
                                            const char *message);
  [[gnu::cold, gnu::noinline]] bool errorAt(size_t offset, const char *message);
  /// The "expected 'c'" error of expectChar (out of line); returns false.
  [[gnu::cold, gnu::noinline]] bool expectedChar(char c);
  /// The "expected '...'" error of expectPunct and expectKeyword.
  [[gnu::cold, gnu::noinline]] bool expectedToken(std::string_view token);
  bool failed() const { return failed_; }
  /// Emits a follow-up error of a failed sub-parse (MLIR's "failed to parse
  /// X parameter" chain) and returns false.
  bool chainError(std::string message);
  /// Prefix of mesh errors: "custom op 'sdy.mesh' " inside sdy.mesh.
  std::string_view mesh_error_prefix_;

  // ---- types and attributes
  Type parseType();
  bool parseTypeList(std::vector<Type> &types); ///< t1, t2 (at least one)
  /// `(t1, t2) -> t3` or `(t1) -> (t2, t3)`.
  bool parseFunctionType(std::vector<Type> &inputs, std::vector<Type> &results);
  /// `: t` or `: (ins) -> outs`, as hlo's same-operands-and-result syntax.
  const Attr *parseAttribute(Type hint = nullptr);
  /// `{...}` at the cursor. Out of line: the optional forms below are
  /// inline, and most ops have no dictionary.
  [[gnu::noinline]] bool parseAttrDict(AttrDict &dict);
  __attribute__((always_inline)) bool parseOptionalAttrDict(AttrDict &dict) {
    return peek() != '{' || parseAttrDict(dict);
  }
  /// After `<{`: the property entries and the closing `}>`.
  bool parsePropertiesRest(AttrDict &dict);
  bool parseOptionalAttrDictWithKeyword(AttrDict &dict) {
    return !tryKeyword("attributes") || parseAttrDict(dict);
  }
  std::string_view intern(std::string_view text) { return ctx_.intern(text); }
  Context &ctx() { return ctx_; }

  // ---- sdy attribute bodies (after the mnemonic)
  bool parseMesh(Mesh &mesh); ///< <[...], device_ids=[...]>
  bool parseTensorShardingBody(TensorSharding &sharding); ///< <@m, [...]>
  bool parseAxisRef(AxisRef &axis);
  bool parseStringSet(std::vector<std::string> &values); ///< {"a", "b"}
  /// [{"a"}: 0->1, ...]
  bool parseAllToAllParamList(std::vector<AllToAllParam> &params);
  const Attr *parseSdyListAttr();
  bool parseAxisRefList(std::vector<AxisRef> &axes); ///< {"a", "b":(1)2}
  bool parseDimShardingListList(std::vector<std::vector<AxisRef>> &dims);
  bool parseShardingRuleBody(OpShardingRule &rule);

  // ---- scratch lists (see ScratchPool)
  ScratchPool<Value *>::Lease valueList() {
    return ScratchPool<Value *>::Lease(value_lists_);
  }
  ScratchPool<Type>::Lease typeList() {
    return ScratchPool<Type>::Lease(type_lists_);
  }
  ScratchPool<int64_t>::Lease intList() {
    return ScratchPool<int64_t>::Lease(int_lists_);
  }

  // ---- values and regions
  bool parseOperand(Value *&value);
  bool parseOperandList(std::vector<Value *> &values); ///< possibly empty
  /// Parses `{ ... }` into `region`. `args` become the entry block
  /// arguments; `isolated` hides enclosing values (func.func).
  bool parseRegion(Region &region, const std::vector<ArgDecl> &args,
                   bool isolated = false);
  /// `(%a: type {attrs}, ...)` declaring entry block arguments.
  bool parseArgDeclList(std::vector<ArgDecl> &args, bool allow_attrs);
  /// `%name` without '%', or empty. Inline: two or three per op.
  __attribute__((always_inline)) std::string_view parseValueName() {
    if (peek() != '%')
      return {};
    size_t start = ++pos_;
    while (pos_ < text_.size() && (isIdChar(text_[pos_]) || text_[pos_] == '-'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }
  std::string_view currentDefaultDialect() const;

  /// An optional trailing `loc(...)`, stored in `where.debug`.
  /// (Inline: the check runs after every op, the parse only when there is
  /// one.)
  __attribute__((always_inline)) bool parseTrailingLocation(Location &where) {
    return !peekKeyword("loc") || parseLocationSuffix(where);
  }
  /// `loc(...)` at the cursor, stored in `where.debug`.
  bool parseLocationSuffix(Location &where);

  /// Parses one operation and appends it to `block`.
  bool parseOperation(Block &block);

  /// Registers `%name` (with `count` results) in the current scope; reports
  /// a redefinition at `where` (a Location or a mark() offset).
  template <typename Where>
  bool defineValues(std::string_view name, Operation *op, Value *arg,
                    Where where, uint32_t offset = 0) {
    if (defineValue(name, op, arg, offset))
      return true;
    if constexpr (std::is_same_v<Where, Location>)
      return redefinition(where, name);
    else
      return redefinition(locationAt(where), name);
  }

private:
  struct ValueDef {
    Operation *op = nullptr;
    Value *arg = nullptr;
    uint32_t offset = 0; ///< first result of a `%a:2, %b` group
  };
  struct ResultName {
    std::string_view name;
    size_t count;
    size_t at; ///< mark() offset
  };
  /// Registers `%name`; false when it is already defined.
  bool defineValue(std::string_view name, Operation *op, Value *arg,
                   uint32_t offset);
  Location locationAt(size_t pos);
  void skipSpaceSlow();
  bool parseTopLevelItem(Module &module);
  bool parseExplicitModule(Module &module);
  bool parseGenericModule(Module &module);
  bool parseAliasDefinition();
  bool parseLocationBody(std::string &out);
  bool parseLocationBodyInner(std::string &out);
  const Attr *parseLocationAttr();
  /// Replaces the alias references of every location read (aliases may be
  /// defined after their use, as JAX prints them).
  bool resolvePendingLocations();
  /// Out of line: the generic form is its own path, and inlined into
  /// parseOperation it made one function too large for V8 to keep the
  /// custom path's values in registers.
  [[gnu::noinline]] bool parseGenericOp(Operation *&op, Location where);
  bool readEnumProperty(const EnumProperty &property, Operation &op,
                        Location where);
  bool parseCustomOp(Operation *&op, std::string_view name, Location where,
                     size_t num_results);
  /// `name` in the enclosing op's default dialect (`return` in a func).
  [[gnu::noinline]] const OpInfo *lookupInDefaultDialect(std::string_view name);
  // The error messages that are built from parts, out of line and cold.
  [[gnu::cold, gnu::noinline]] bool unknownCustomOp(Location where,
                                                    std::string_view name);
  [[gnu::cold, gnu::noinline]] bool resultCountMismatch(const Operation &op,
                                                        size_t expected);
  [[gnu::cold, gnu::noinline]] bool redefinition(Location where,
                                                 std::string_view name);
  bool parseResultNames(std::vector<ResultName> &names);
  bool bindResults(Operation &op, const std::vector<ResultName> &names);
  bool parseBlock(Region &region, bool entry, const std::vector<ArgDecl> &args);
  /// Counts one more level of nesting; an error past max_nesting.
  bool enterNesting() {
    return ++depth_ <= options_.max_nesting || nestingTooDeep();
  }
  [[gnu::cold, gnu::noinline]] bool nestingTooDeep();
  void leaveNesting() { --depth_; }
  Type parseTensorType();
  Type parseBareType();
  // parseType's paths other than a spelling seen before, out of line: they
  // made parseType, called for every type in the module, ten times larger
  // than its hot path in the WASM build.
  [[gnu::noinline]] Type parseFunctionTypeAsType();
  /// Parses the type at the cursor and files it under `span` (when not
  /// empty and the type is exactly that text).
  [[gnu::noinline]] Type parseUncachedType(std::string_view span);
  std::string_view simpleTypeSpan() const;
  size_t spanStop(size_t from) const;
  Type parseDialectType();
  // ---- literals (parser_literals.cpp): numbers read as tokens first and
  // turned into bits once their type is known, as MLIR does.
  /// One number or keyword of a literal, before its type is known.
  struct LiteralToken {
    enum class Kind : uint8_t { Integer, Hex, Float, Bool };
    Kind kind = Kind::Integer;
    bool negative = false;
    bool truth = false; ///< a Bool's value
    size_t at = 0;      ///< the number's first character (after any '-')
    size_t length = 0;
  };
  /// What a literal is read for: MLIR's messages differ.
  enum class LiteralUse { Element, Attribute };
  /// A dense literal's elements as tokens (two per complex element).
  struct DenseTokens {
    std::vector<LiteralToken> parts;
    std::vector<int64_t> shape; ///< of the nested lists
    bool splat = false;
    bool complex = false;
  };
  bool lexLiteralToken(LiteralToken &token);
  bool literalBits(const LiteralToken &token, const ElementLayout &layout,
                   LiteralUse use, uint64_t &bits);
  bool integerLiteralBits(const LiteralToken &token,
                          const ElementLayout &layout, LiteralUse use,
                          uint64_t &bits);
  bool floatLiteralBits(const LiteralToken &token, const ElementLayout &layout,
                        LiteralUse use, uint64_t &bits);
  const Attr *parseDenseElements();
  bool parseDenseElement(DenseTokens &tokens);
  bool parseDenseList(DenseTokens &tokens, size_t depth);
  bool denseFromTokens(const DenseTokens &tokens, Type type, size_t start,
                       DenseElements &dense);
  bool denseFromHex(std::string_view hex, Type type, size_t start,
                    DenseElements &dense);
  const Attr *parseDenseArray();
  const Attr *parseNumberAttr(Type hint);
  const Attr *parseSdyAttr(std::string_view mnemonic);
  const Attr *parseOpaqueAttr(size_t start);
  const Attr *parseDotDimensions();
  bool skipBalanced(char open, char close);

public:
  /// Skips from `open` at the cursor past its matching `close` (nested
  /// brackets and strings honoured).
  bool skipBalancedAt(char open, char close) {
    return skipBalanced(open, close);
  }

private:
  bool parseDimSharding(DimSharding &dim);
  bool parseFactorSizes(OpShardingRule &rule);
  bool parseTensorMappings(std::vector<OpShardingRule::TensorMapping> &out,
                           const char *param);
  bool parseSpecialFactors(OpShardingRule &rule);
  bool parseFactorToken(std::vector<int64_t> &factors);
  bool parseShardingAxesLists(TensorSharding &sharding);

  std::string_view text_;
  size_t pos_ = 0;
  std::shared_ptr<Context> context_;
  Context &ctx_;
  DiagnosticEngine &diags_;
  ParseOptions options_;
  bool failed_ = false;
  bool soft_failed_ = false; ///< an error was reported but parsing goes on
  uint32_t depth_ = 0;
  std::vector<size_t> line_starts_;
  /// SSA names in scope (open addressing: a name is defined and looked up
  /// once or twice per op, and erased when its region closes).
  using ValueTable = StringTable<ValueDef>;
  ValueTable values_;
  /// The names each open region defined, innermost last: region i's are
  /// scope_names_[scope_starts_[i]..]. One vector for all regions, so a
  /// region's names cost no allocation of their own.
  std::vector<std::string_view> scope_names_;
  std::vector<size_t> scope_starts_;
  std::vector<ValueTable> hidden_;
  /// Emptied tables of closed isolated regions, buckets kept: each function
  /// body starts from one instead of growing a table from nothing.
  std::vector<ValueTable> spare_tables_;
  ValueTable takeSpareTable();
  std::vector<std::string_view> dialect_stack_;
  std::unordered_map<std::string, const Attr *> attr_aliases_;
  std::unordered_map<std::string, Type> type_aliases_;
  std::vector<Attr *> pending_locations_; ///< locations naming aliases
  /// Types by spelling.
  StringTable<Type> type_cache_;
  std::unordered_map<std::string, FuncSignatureRanges> signature_ranges_;
  ScratchPool<Value *> value_lists_;
  ScratchPool<Type> type_lists_;
  ScratchPool<int64_t> int_lists_;
  ScratchPool<ResultName> name_lists_;
  size_t loc_cache_pos_ = 0;  ///< position of the last loc() answer
  size_t loc_cache_line_ = 0; ///< its line index
};

} // namespace shardlab
