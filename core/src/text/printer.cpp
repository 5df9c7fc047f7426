#include "printer.h"

#include "ir/op_registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace shardlab {

// ------------------------------------------------------------ naming

namespace {
// `argN`, spelled in `buffer`.
std::string_view argName(unsigned n, char (&buffer)[16]) {
  std::memcpy(buffer, "arg", 3);
  char *end = std::to_chars(buffer + 3, buffer + sizeof(buffer), n).ptr;
  return {buffer, static_cast<size_t>(end - buffer)};
}
} // namespace

std::string_view Printer::uniqueName(std::string_view name) {
  std::string candidate; // built only on a conflict
  std::string_view unique = name;
  while (used_names_.count(unique)) {
    candidate.assign(name);
    candidate += '_';
    candidate += std::to_string(next_conflict_++);
    unique = candidate;
  }
  unique = name_text_.store(unique);
  used_names_.emplace(unique, true);
  used_stack_.push_back(unique);
  return unique;
}

void Printer::nameValue(Value *value, std::string_view name) {
  if (name.empty()) {
    value->print_slot = static_cast<int32_t>(next_value_++) + 1;
  } else {
    custom_names_.push_back(uniqueName(name));
    value->print_slot = -static_cast<int32_t>(custom_names_.size());
  }
}

void Printer::resetNames() {
  custom_names_.clear();
  used_names_.clear();
  used_stack_.clear();
  scope_starts_.clear();
  name_text_.clear();
}

// MLIR's SSANameState: a region is numbered whole (block arguments, then
// op results in order) before the regions nested in it, each of which
// starts from the counters at the end of its parent region. The generic
// form prints unique ids (OpPrintingFlags::shouldPrintUniqueSSAIDs): the
// counters run on through every region in the order they are taken, the
// last pushed first, so a module's second function is numbered before its
// first:
//   "func.func"() <{sym_name = "main"}> ({ ^bb0(%arg2: ...): %1 = ... })
//   "func.func"() <{sym_name = "inner"}> ({ ^bb0(%arg0: ...): %0 = ... })
void Printer::numberValues(Operation &root) {
  struct Pending {
    Region *region;
    unsigned value, arg, conflict;
    size_t scope_depth;
  };
  scope_starts_.assign(1, used_stack_.size());
  next_value_ = next_arg_ = next_conflict_ = 0;
  std::vector<Pending> stack;
  for (size_t r = root.numRegions(); r-- > 0;)
    stack.push_back({&root.region(r), 0, 0, 0, 1});
  while (!stack.empty()) {
    Pending pending = stack.back();
    stack.pop_back();
    if (!options_.generic) {
      next_value_ = pending.value;
      next_arg_ = pending.arg;
      next_conflict_ = pending.conflict;
    }
    while (scope_starts_.size() > pending.scope_depth) {
      for (size_t i = scope_starts_.back(); i < used_stack_.size(); ++i)
        used_names_.erase(used_stack_[i]);
      used_stack_.resize(scope_starts_.back());
      scope_starts_.pop_back();
    }
    scope_starts_.push_back(used_stack_.size());
    Region &region = *pending.region;
    const OpInfo *parent_info = region.parent ? region.parent->info : nullptr;
    char arg_name[16];
    bool first = true;
    for (auto &block : region.blocks) {
      for (size_t i = 0; i < block->numArguments(); ++i) {
        if (!first)
          nameValue(block->argument(i), {});
        else if (parent_info && !parent_info->block_arg_name.empty() &&
                 !options_.generic)
          nameValue(block->argument(i), parent_info->block_arg_name);
        else
          nameValue(block->argument(i), argName(next_arg_++, arg_name));
      }
      first = false;
      for (Operation &op : *block) {
        if (op.numResults() == 0)
          continue;
        if (op.info && op.info->result_names && !options_.generic) {
          std::vector<std::string_view> group = op.info->result_names(op);
          for (size_t i = 0; i < op.numResults() && i < group.size(); ++i)
            nameValue(op.result(i), group[i]);
          continue;
        }
        std::string_view name;
        if (op.info && op.info->result_name && !options_.generic)
          name = op.info->result_name(op, name_scratch_);
        nameValue(op.result(0), name);
        // The other results print as `%N#i`: forget names an earlier
        // print (e.g. the pretty form's result groups) gave them.
        for (size_t i = 1; i < op.numResults(); ++i)
          op.result(i)->print_slot = 0;
      }
    }
    size_t depth = scope_starts_.size();
    for (auto &block : region.blocks)
      for (Operation &op : *block)
        for (size_t r = 0; r < op.numRegions(); ++r)
          stack.push_back(
              {&op.region(r), next_value_, next_arg_, next_conflict_, depth});
  }
}

// ------------------------------------------------------------ values, types

void Printer::appendUnknownName() {
  out_ += "<<UNKNOWN SSA VALUE>>"; // as MLIR prints a value it did not number
}

void Printer::printValue(const Value *value) {
  out_ += '%';
  if (value->isBlockArgument()) {
    appendName(value);
    return;
  }
  Operation *def = value->defining_op;
  if (value->index != 0) { // a result that starts its own named group
    if (hasName(value)) {
      appendName(value);
      return;
    }
  }
  appendName(def->result(0));
  bool named_groups = def->numResults() > 1 && hasName(def->result(1));
  if (def->numResults() > 1 && !named_groups) {
    out_ += '#';
    *this << int64_t{value->index};
  }
}

void Printer::printOperands(Operation &op, size_t begin, size_t end) {
  end = std::min(end, op.numOperands());
  for (size_t i = begin; i < end; ++i) {
    if (i != begin)
      out_ += ", ";
    printValue(op.operand(i));
  }
}

void Printer::printTypes(const std::vector<Type> &types) {
  for (size_t i = 0; i < types.size(); ++i) {
    if (i)
      out_ += ", ";
    out_ += types[i]->text;
  }
}

void Printer::printOperandTypes(Operation &op) {
  for (size_t i = 0; i < op.numOperands(); ++i) {
    if (i)
      out_ += ", ";
    out_ += op.operand(i)->type->text;
  }
}

void Printer::printResultTypes(Operation &op) {
  for (size_t i = 0; i < op.numResults(); ++i) {
    if (i)
      out_ += ", ";
    out_ += op.result(i)->type->text;
  }
}

void Printer::printFunctionalType(Operation &op) {
  out_ += '(';
  printOperandTypes(op);
  out_ += ") -> ";
  bool parens =
      op.numResults() != 1 || op.result(0)->type->kind == TypeKind::Function;
  if (parens)
    out_ += '(';
  printResultTypes(op);
  if (parens)
    out_ += ')';
}

void Printer::printArgDecl(Value *arg, bool with_location) {
  printValue(arg);
  out_ += ": ";
  out_ += arg->type->text;
  if (with_location)
    printArgumentLocation(arg->loc);
}

std::string Printer::locationText(const Location &where) const {
  if (where.debug)
    return where.debug->text;
  if (where.line == 0)
    return "unknown";
  std::string text;
  appendEscapedString(text, options_.file);
  text += ':' + std::to_string(where.line) + ':' + std::to_string(where.col);
  return text;
}

void Printer::printLocationSuffix(const Location &where) {
  printLocationText(locationText(where));
}

void Printer::printLocationText(const std::string &text) {
  if (collecting_)
    return aliases_->visit(text, true);
  out_ += " loc(";
  if (aliases_)
    aliases_->appendAlias(out_, text);
  else
    out_ += text;
  out_ += ')';
}

// An implicit module is where its file starts, as MLIR places it.
void Printer::printModuleLocation(Module &module) {
  if (!options_.debuginfo)
    return;
  const Location &where = module.op().loc;
  if (module.explicit_module || where.debug || where.line != 0)
    return printLocationText(locationText(where));
  std::string text;
  appendEscapedString(text, options_.file);
  printLocationText(text + ":0:0");
}

void Printer::printArgumentLocation(const Location &where) {
  if (!options_.debuginfo)
    return;
  const std::string text = locationText(where);
  if (collecting_)
    return aliases_->visit(text, false);
  out_ += " loc(";
  if (aliases_)
    aliases_->appendWithPartAliases(out_, text);
  else
    out_ += text;
  out_ += ')';
}

void Printer::newline() {
  out_ += '\n';
  out_.append(static_cast<size_t>(indent_) * 2, ' ');
}

// ------------------------------------------------------------ ops

void Printer::printBlock(Block &block, bool print_header) {
  if (print_header) {
    out_.append(static_cast<size_t>(indent_ - 1) * 2, ' ');
    Region *region = block.parent;
    size_t index = 0;
    while (region->blocks[index].get() != &block)
      ++index;
    out_ += "^bb" + std::to_string(index);
    if (block.numArguments()) {
      out_ += '(';
      for (size_t i = 0; i < block.numArguments(); ++i) {
        if (i)
          out_ += ", ";
        printArgDecl(block.argument(i), true);
      }
      out_ += ')';
    }
    out_ += ":\n";
  }
  for (Operation &op : block) {
    out_.append(static_cast<size_t>(indent_) * 2, ' ');
    printOperation(op);
    printTrailingLocation(op.loc);
    out_ += '\n';
  }
}

void Printer::printRegion(Region &region, bool print_entry_args,
                          bool print_empty_block) {
  out_ += "{\n";
  ++indent_;
  const OpInfo *info = region.parent ? region.parent->info : nullptr;
  default_dialect_.push_back(info && !options_.generic ? info->region_dialect
                                                       : std::string_view());
  for (size_t b = 0; b < region.blocks.size(); ++b) {
    Block &block = *region.blocks[b];
    bool header = b != 0 || (print_entry_args && block.numArguments() > 0) ||
                  (print_empty_block && block.empty());
    printBlock(block, header);
  }
  default_dialect_.pop_back();
  --indent_;
  out_.append(static_cast<size_t>(indent_) * 2, ' ');
  out_ += '}';
}

// The number of `property`'s name on the op, its absent number when the
// op has none, or -1 (nothing to print).
static int enumNumber(const EnumProperty &property, const AttrDict &attrs) {
  const Attr *attr = attrs.get(property.attr);
  if (!attr)
    return property.absent;
  if (attr->kind != AttrKind::String)
    return -1;
  for (size_t i = 0; i < property.names.size(); ++i)
    if (property.names[i] == attr->str())
      return int(i);
  return -1;
}

void Printer::printGenericOp(Operation &op) {
  out_ += '"';
  out_ += op.name;
  out_ += "\"(";
  printOperands(op);
  out_ += ')';
  // Inherent attributes of known ops are properties: `<{...}>`.
  std::vector<NamedAttr> props = op.props().toVector(), attrs;
  for (const NamedAttr &entry : op.attrs.entries()) {
    bool inherent = false;
    if (op.info)
      for (std::string_view name : op.info->inherent)
        inherent = inherent || name == entry.name;
    (inherent ? props : attrs).push_back(entry);
  }
  // An enum kept by name prints as Shardy's number; its entry (value null)
  // sorts with the others.
  const EnumProperty *numbered = op.info ? op.info->enum_property : nullptr;
  const int number = numbered ? enumNumber(*numbered, op.attrs) : -1;
  if (number >= 0) {
    std::erase_if(props, [&](const NamedAttr &entry) {
      return entry.name == numbered->attr;
    });
    props.push_back({numbered->property, nullptr});
  }
  if (!props.empty()) {
    std::sort(
        props.begin(), props.end(),
        [](const NamedAttr &a, const NamedAttr &b) { return a.name < b.name; });
    out_ += " <{";
    for (size_t i = 0; i < props.size(); ++i) {
      out_ += i ? ", " : "";
      if (props[i].value) {
        printNamedAttr(props[i]);
        continue;
      }
      out_ += props[i].name;
      out_ += " = ";
      out_.appendDecimal(number);
      out_ += " : i32";
    }
    out_ += "}>";
  }
  if (op.numRegions()) {
    out_ += " (";
    for (size_t r = 0; r < op.numRegions(); ++r) {
      if (r)
        out_ += ", ";
      printRegion(op.region(r), true, true);
    }
    out_ += ')';
  }
  if (!attrs.empty()) {
    out_ += " {";
    printNamedAttrs(attrs);
    out_ += '}';
  }
  out_ += " : ";
  printFunctionalType(op);
}

void Printer::printOperation(Operation &op) {
  // MLIR takes an op's location before what the op holds.
  if (collecting_)
    printLocationSuffix(op.loc);
  if (op.numResults() > 1 && hasName(op.result(1))) {
    for (size_t i = 0; i < op.numResults(); ++i) {
      out_ += i ? ", %" : "%";
      appendName(op.result(i));
    }
    out_ += " = ";
  } else if (op.numResults()) {
    out_ += '%';
    appendName(op.result(0));
    if (op.numResults() > 1) {
      out_ += ':';
      out_.appendDecimal(static_cast<int64_t>(op.numResults()));
    }
    out_ += " = ";
  }
  if (options_.generic || !op.info || !op.info->print ||
      (op.info->can_print && !op.info->can_print(op))) {
    printGenericOp(op);
    return;
  }
  std::string_view name = op.name;
  std::string_view dialect =
      default_dialect_.empty() ? std::string_view() : default_dialect_.back();
  if (!dialect.empty() && name.size() > dialect.size() &&
      equalStrings(name.substr(0, dialect.size()), dialect) &&
      name[dialect.size()] == '.')
    name = name.substr(dialect.size() + 1);
  out_ += name;
  op.info->print(*this, op);
}

// Under -mlir-print-debuginfo the module is printed twice, as MLIR's
// printer does: first to see which locations print where (the aliases'
// numbers depend on all of them), then with their aliases.
void Printer::printModule(Module &module) {
  if (!options_.debuginfo || aliases_)
    return printModuleOp(module);
  LocationAliases aliases;
  {
    std::string scratch;
    Printer collector(scratch, options_);
    collector.aliases_ = &aliases;
    collector.collecting_ = true;
    collector.printModuleOp(module);
  }
  aliases.assignNames();
  aliases_ = &aliases;
  aliases.appendDefinitions(out_, false);
  printModuleOp(module);
  aliases.appendDefinitions(out_, true);
  aliases_ = nullptr;
  out_.flush();
}

void Printer::printModuleOp(Module &module) {
  if (collecting_)
    printModuleLocation(module);
  resetNames();
  // Size the name table and the output once: large modules otherwise spend
  // much of printing in rehashing and reallocation.
  size_t ops = 0;
  walk(module.op(), [&](Operation &) { ++ops; });
  custom_names_.reserve(ops / 4);
  out_.reserve(ops * 112); // ~100 bytes per op as written, a little over
  numberValues(module.op());
  if (options_.generic) {
    printGenericModule(module);
    out_.flush();
    return;
  }
  out_ += "module";
  if (!module.sym_name.empty()) {
    out_ += ' ';
    appendSymbolName(out_, module.sym_name);
  }
  printAttrDictWithKeyword(module.op().attrs, {});
  out_ += ' ';
  printRegion(module.op().region(0), false);
  printModuleLocation(module);
  out_ += '\n';
  out_.flush();
}

// As MLIR prints a ModuleOp generically: its name a property, every other
// attribute discardable.
void Printer::printGenericModule(Module &module) {
  out_ += "\"builtin.module\"()";
  if (!module.sym_name.empty()) {
    out_ += " <{sym_name = ";
    appendEscapedString(out_, module.sym_name);
    out_ += "}>";
  }
  out_ += " (";
  printRegion(module.op().region(0), false);
  out_ += ')';
  printAttrDict(module.op().attrs);
  out_ += " : () -> ()";
  printModuleLocation(module);
  out_ += '\n';
}

void Printer::nameValues(Module &module) {
  resetNames();
  numberValues(module.op());
}

std::string Printer::nameOf(const Value *value) {
  size_t start = out_.size();
  printValue(value);
  std::string name(out_.view(start));
  out_.truncate(start);
  return name;
}

std::unordered_map<const Value *, std::string>
printedValueNames(Module &module, const PrintOptions &options) {
  std::string unused;
  Printer printer(unused, options);
  printer.nameValues(module);
  std::unordered_map<const Value *, std::string> names;
  walk(module.op(), [&](Operation &op) {
    for (size_t i = 0; i < op.numResults(); ++i)
      names[op.result(i)] = printer.nameOf(op.result(i));
    for (size_t r = 0; r < op.numRegions(); ++r)
      for (auto &block : op.region(r).blocks)
        for (size_t i = 0; i < block->numArguments(); ++i)
          names[block->argument(i)] = printer.nameOf(block->argument(i));
  });
  return names;
}

std::string printModule(Module &module, const PrintOptions &options) {
  std::string out;
  Printer printer(out, options);
  printer.printModule(module);
  return out;
}

std::string printAttribute(const Attr *attr) {
  std::string out;
  PrintOptions options;
  Printer printer(out, options);
  printer.printAttr(attr);
  printer.out().flush();
  return out;
}

} // namespace shardlab
