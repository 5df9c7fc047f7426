#include "shardlab/ir/ir.h"

#include <algorithm>

namespace shardlab {

Context::Context() : ops(sizeof(Operation)) {}

Context::Context(std::shared_ptr<const Context> parent)
    : types(&parent->types), attrs(&parent->attrs), ops(sizeof(Operation)),
      parent_(std::move(parent)) {}

std::string_view Context::intern(std::string_view text) {
  auto it = strings_.find(text);
  if (it != strings_.end())
    return *it;
  for (const Context *up = parent_.get(); up; up = up->parent_.get())
    if (auto found = up->strings_.find(text); found != up->strings_.end())
      return *found;
  storage_.emplace_back(text);
  return *strings_.insert(storage_.back()).first;
}

void OpOperand::set(Value *new_value) {
  if (value) { // unlink from the old value's use list
    if (prev_use)
      prev_use->next_use = next_use;
    else
      value->first_use_ = next_use;
    if (next_use)
      next_use->prev_use = prev_use;
  }
  value = new_value;
  prev_use = next_use = nullptr;
  if (value) { // push at the front of the new value's use list
    next_use = value->first_use_;
    if (next_use)
      next_use->prev_use = this;
    value->first_use_ = this;
  }
}

size_t Value::numUses() const {
  size_t count = 0;
  for (OpOperand *use = first_use_; use; use = use->next_use)
    ++count;
  return count;
}

void Value::replaceAllUsesWith(Value *other) {
  while (first_use_)
    first_use_->set(other);
}

void Value::replaceAllUsesExcept(Value *other, const Operation *except) {
  OpOperand *use = first_use_;
  while (use) {
    OpOperand *next = use->next_use;
    if (use->owner != except)
      use->set(other);
    use = next;
  }
}

void AttrDict::set(std::string_view interned_name, const Attr *value) {
  // Replacing is the common case (passes rewrite shardings): look the name
  // up as get() does before ordering it among the others.
  for (NamedAttr &entry : entries_)
    if (sameAttrName(entry.name, interned_name)) {
      entry.value = value;
      return;
    }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), interned_name,
                             [](const NamedAttr &entry, std::string_view n) {
                               return entry.name < n;
                             });
  entries_.insert(static_cast<size_t>(it - entries_.begin()),
                  NamedAttr{interned_name, value});
}

bool AttrDict::erase(std::string_view name) {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].name == name) {
      entries_.erase(i);
      return true;
    }
  return false;
}

Operation::Operation(std::string_view op_name, const OpInfo *op_info,
                     Location location)
    : name(op_name), info(op_info), loc(location) {
  // A loop, not find (a memchr call, a byte loop in the WASM libc): the
  // dialect prefix is a few bytes.
  size_t dot = 0;
  while (dot < name.size() && name[dot] != '.')
    ++dot;
  dialect_size_ = dot == name.size() ? 0 : static_cast<uint32_t>(dot);
  pool().countNamed(name, +1);
}

const AttrDict &Operation::emptyDict() {
  static const AttrDict empty{};
  return empty;
}

AttrDict &Operation::mutableProps() {
  if (!props_)
    props_ = std::make_unique<AttrDict>();
  return *props_;
}

Operation::~Operation() {
  dropAllUses();
  pool().countNamed(name, -1);
}

void Operation::dropAllUses() {
  for (OpOperand &use : operands_)
    use.set(nullptr);
}

void Operation::setOperands(std::span<Value *const> values) {
  dropAllUses();
  operands_.reset(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    operands_[i].owner = this;
    operands_[i].set(values[i]);
  }
}

void Operation::setResultTypes(std::span<const Type> types) {
  results_.reset(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    results_[i].type = types[i];
    results_[i].defining_op = this;
    results_[i].index = static_cast<uint32_t>(i);
    results_[i].loc = loc;
  }
}

Region &Operation::addRegion() {
  if (!regions_)
    regions_ = std::make_unique<std::vector<std::unique_ptr<Region>>>();
  regions_->push_back(std::make_unique<Region>());
  regions_->back()->parent = this;
  return *regions_->back();
}

Operation *Operation::parentOp() const {
  return parent_ && parent_->parent ? parent_->parent->parent : nullptr;
}

Block::~Block() {
  // Destroy ops back to front so that uses die before their definitions;
  // first drop every use so that order does not matter.
  for (Operation *op = first_; op; op = op->next_)
    op->dropAllUses();
  Operation *op = last_;
  while (op) {
    Operation *prev = op->prev_;
    delete op;
    op = prev;
  }
}

Value *Block::addArgument(Type type, Location loc) {
  auto value = std::make_unique<Value>();
  value->type = type;
  value->owner_block = this;
  value->index = static_cast<uint32_t>(args_.size());
  value->loc = loc;
  args_.push_back(std::move(value));
  return args_.back().get();
}

void Block::eraseArgument(size_t index) {
  args_.erase(args_.begin() + static_cast<std::ptrdiff_t>(index));
  for (size_t i = index; i < args_.size(); ++i)
    args_[i]->index = static_cast<uint32_t>(i);
}

Operation *Block::push_back(std::unique_ptr<Operation> op) {
  return insertBefore(nullptr, std::move(op));
}

Operation *Block::insertBefore(Operation *before,
                               std::unique_ptr<Operation> owned) {
  Operation *op = owned.release();
  op->parent_ = this;
  op->next_ = before;
  op->prev_ = before ? before->prev_ : last_;
  if (op->prev_)
    op->prev_->next_ = op;
  else
    first_ = op;
  if (before)
    before->prev_ = op;
  else
    last_ = op;
  ++size_;
  ++version_;
  return op;
}

void Block::erase(Operation *op) { take(op).reset(); }

std::unique_ptr<Operation> Block::take(Operation *op) {
  if (op->prev_)
    op->prev_->next_ = op->next_;
  else
    first_ = op->next_;
  if (op->next_)
    op->next_->prev_ = op->prev_;
  else
    last_ = op->prev_;
  --size_;
  ++version_;
  op->parent_ = nullptr;
  op->next_ = op->prev_ = nullptr;
  return std::unique_ptr<Operation>(op);
}

Block &Region::addBlock() {
  blocks.push_back(std::make_unique<Block>());
  blocks.back()->parent = this;
  return *blocks.back();
}

Module::Module(std::shared_ptr<Context> context)
    : context_(std::move(context)) {
  op_ = Operation::create(context_->ops, context_->intern("builtin.module"),
                          nullptr, Location{});
  op_->addRegion().addBlock();
}

std::vector<Type> operandTypes(const Operation &op) {
  std::vector<Type> types;
  for (size_t i = 0; i < op.numOperands(); ++i)
    types.push_back(op.operand(i)->type);
  return types;
}

std::vector<Type> resultTypes(const Operation &op) {
  std::vector<Type> types;
  for (size_t i = 0; i < op.numResults(); ++i)
    types.push_back(op.result(i)->type);
  return types;
}

namespace {

bool isFuncWithBody(const Operation &op) {
  return op.is("func.func") && op.numRegions() && !op.region(0).empty();
}

} // namespace

Operation *Module::mainFunc() {
  Operation *only = nullptr;
  int count = 0;
  for (Operation &op : body())
    if (isFuncWithBody(op)) {
      only = &op;
      ++count;
    }
  if (count == 1)
    return only;
  // `@main` may name another symbol (a mesh) or a declaration: then there
  // is no main function (a fuzz finding).
  Operation *main = lookupSymbol("main");
  return main && isFuncWithBody(*main) ? main : nullptr;
}

Operation *Module::lookupSymbol(std::string_view name) const {
  Block &body = op_->region(0).front();
  if (symbols_version_ != body.version()) {
    // Symbols are looked up per value during verification: index them once.
    symbols_.clear();
    for (Operation &op : body) {
      const Attr *sym = op.attrs.get("sym_name");
      if (sym && sym->kind == AttrKind::String)
        symbols_.emplace(sym->str(), &op);
    }
    symbols_version_ = body.version();
  }
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : it->second;
}

} // namespace shardlab
