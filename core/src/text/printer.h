// The MLIR printer: SSA naming as MLIR's AsmPrinter does it (%0.., %arg0..,
// named results such as %c / %cst with _N conflict suffixes), canonical
// attribute and type spelling, and the helpers custom op printers use.
#pragma once

#include "location_aliases.h"
#include "shardlab/ir/ir.h"
#include "shardlab/text/text.h"
#include "support/string_table.h"
#include "support/text_arena.h"
#include "support/text_sink.h"

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardlab {

class Printer {
public:
  /// Appends to `out`; the text is in `out` after printModule, or after
  /// out().flush() (and when the printer is destroyed).
  Printer(std::string &out, const PrintOptions &options)
      : out_(out), options_(options) {}

  void printModule(Module &module);
  /// Names the values of `module` as printModule does, without printing.
  void nameValues(Module &module);
  /// The printed name of a value named by nameValues/printModule (`%0`,
  /// `%arg1`, `%0#1`, `%iterArg_2`).
  std::string nameOf(const Value *value);

  // ---- helpers for custom op printers
  // Forced inline, as TextSink's appends are: clang kept these out of
  // line, a call per token.
  __attribute__((always_inline)) Printer &operator<<(std::string_view text) {
    out_ += text;
    return *this;
  }
  __attribute__((always_inline)) Printer &operator<<(char c) {
    out_ += c;
    return *this;
  }
  Printer &operator<<(int64_t value) {
    out_.appendDecimal(value);
    return *this;
  }
  /// `[1, 2, 3]`.
  void printIntList(std::span<const int64_t> values) {
    out_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i)
        out_ += ", ";
      *this << values[i];
    }
    out_ += ']';
  }
  void printValue(const Value *value);
  void printOperands(Operation &op, size_t begin = 0, size_t end = SIZE_MAX);
  void printType(Type type) { out_ += type->text; }
  void printTypes(const std::vector<Type> &types);
  void printOperandTypes(Operation &op);
  void printResultTypes(Operation &op);
  /// `(operand types) -> result types`.
  void printFunctionalType(Operation &op);
  void printAttr(const Attr *attr);
  /// ` {a = 1, ...}` (with a leading space) unless empty after elision.
  void printAttrDict(const AttrDict &dict,
                     std::span<const std::string_view> elided = {});
  void printAttrDict(const AttrDict &dict,
                     std::initializer_list<std::string_view> elided) {
    printAttrDict(dict, std::span(elided.begin(), elided.size()));
  }
  void printAttrDictWithKeyword(const AttrDict &dict,
                                std::span<const std::string_view> elided);
  void
  printAttrDictWithKeyword(const AttrDict &dict,
                           std::initializer_list<std::string_view> elided) {
    printAttrDictWithKeyword(dict, std::span(elided.begin(), elided.size()));
  }
  void printNamedAttrs(const std::vector<NamedAttr> &attrs);
  /// `name = value` (or `name` for a unit attribute).
  void printNamedAttr(const NamedAttr &attr);
  void printDialectStruct(const Attr &attr);
  void printTensorSharding(const TensorSharding &sharding);
  void printMesh(const Mesh &mesh);
  void printAxisRef(const AxisRef &axis);
  void printAxisRefList(const std::vector<AxisRef> &axes);
  /// The body of a ManualAxes, AxisRefList, AxisRefListList or
  /// AllToAllParams attribute: `{"a"}`, `[{"a"}, {}]`, `[{"a"}: 0->1]`.
  void printSdyListBody(const Attr &attr);
  /// `{` newline, the ops, `}`; entry args printed as `^bb0(...)` only when
  /// `print_entry_args` is set.
  void printRegion(Region &region, bool print_entry_args = true,
                   bool print_empty_block = false);
  /// `%arg0: type`, and its location under -mlir-print-debuginfo when
  /// `with_location`.
  void printArgDecl(Value *arg, bool with_location = false);
  /// ` loc(...)` of an op under -mlir-print-debuginfo, else nothing.
  /// (Inline: the check runs after every op, the print only with
  /// -mlir-print-debuginfo.)
  void printTrailingLocation(const Location &where) {
    if (options_.debuginfo)
      printLocationSuffix(where);
  }
  /// ` loc(#locN)` (an op's location, as its alias).
  void printLocationSuffix(const Location &where);
  /// ` loc(...)` of a block argument under -mlir-print-debuginfo: written
  /// out, the locations inside it as aliases.
  void printArgumentLocation(const Location &where);
  void newline();
  TextSink &out() { return out_; }

private:
  void printOperation(Operation &op);
  void printGenericOp(Operation &op);
  void printGenericModule(Module &module);
  void printModuleOp(Module &module);
  /// The text inside `loc(...)`: the location as parsed, or the op's place
  /// in the file printed.
  std::string locationText(const Location &where) const;
  void printLocationText(const std::string &text);
  void printModuleLocation(Module &module);
  void printBlock(Block &block, bool print_header);
  void numberValues(Operation &root);
  void nameValue(Value *value, std::string_view name);
  std::string_view uniqueName(std::string_view name);
  void resetNames();

  TextSink out_;
  PrintOptions options_;
  int indent_ = 0;
  std::vector<std::string_view> default_dialect_;
  // Each value's print_slot: N >= 1 is the number N - 1 (`%N-1`); N <= -1
  // is custom_names_[-N - 1] (`%arg0`, `%cst_1`); 0 means unnamed. A slot in
  // the value avoids a hash lookup per printed operand.
  std::vector<std::string_view> custom_names_; // views into name_text_
  bool hasName(const Value *value) const { return value->print_slot != 0; }
  /// The value's name without `%` (inline: every operand and result prints
  /// one).
  __attribute__((always_inline)) void appendName(const Value *value) {
    int64_t slot = value->print_slot;
    if (slot > 0)
      out_.appendDecimal(slot - 1); // digits straight into the output
    else if (slot < 0 && static_cast<size_t>(-slot) <= custom_names_.size())
      out_ += custom_names_[static_cast<size_t>(-slot - 1)];
    else
      appendUnknownName();
  }
  void appendUnknownName();
  // Naming state (see numberValues).
  unsigned next_value_ = 0, next_arg_ = 0, next_conflict_ = 0;
  // The names in use in the regions being numbered: used_stack_ lists them
  // in the order given, scope_starts_ where each nested scope's begin.
  TextArena name_text_;
  std::string name_scratch_; ///< a result name an op made up (OpInfo)
  StringTable<bool> used_names_;
  std::vector<std::string_view> used_stack_;
  std::vector<size_t> scope_starts_;
  // -mlir-print-debuginfo: the aliases of the locations, which a first
  // print of the module collects (`collecting_`) and the second uses.
  LocationAliases *aliases_ = nullptr;
  bool collecting_ = false;
};

/// Appends `value` as an escaped MLIR string literal.
void appendEscapedString(std::string &out, std::string_view value);
void appendEscapedString(TextSink &out, std::string_view value);
/// Appends `@name`, quoted (`@"<lambda>"`) when `name` is not a bare
/// identifier, as MLIR's printSymbolName does.
void appendSymbolName(std::string &out, std::string_view name);
void appendSymbolName(TextSink &out, std::string_view name);

} // namespace shardlab
