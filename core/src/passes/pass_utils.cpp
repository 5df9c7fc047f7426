// IR helpers shared by the sdy passes (see pass_utils.h).
#include "passes/pass_utils.h"

#include "ir/op_registry.h"
#include "verify/verify_ops.h"

#include <algorithm>
#include <tsl/robin_map.h>
#include <tsl/robin_set.h>

#include <unordered_map>
#include <unordered_set>
#include <variant>

namespace shardlab {

std::unique_ptr<Operation> makeOp(Context &ctx, std::string_view name,
                                  const std::vector<Value *> &operands,
                                  const std::vector<Type> &types,
                                  Location loc) {
  std::string_view interned = ctx.intern(name);
  auto op = Operation::create(ctx.ops, interned, lookupOp(interned), loc);
  op->setOperands(operands);
  op->setResultTypes(types);
  return op;
}

namespace {

void cloneBlockInto(Block &from, Block &into, Operation *before, ValueMap &map,
                    bool skip_terminator, OpPool *pool);

void cloneRegionInto(Region &from, Region &into, ValueMap &map, OpPool *pool) {
  for (auto &block : from.blocks) {
    Block &copy = into.addBlock();
    for (size_t i = 0; i < block->numArguments(); ++i) {
      Value *arg = block->argument(i);
      Value *new_arg = copy.addArgument(arg->type, arg->loc);
      map[arg] = new_arg;
    }
    cloneBlockInto(*block, copy, nullptr, map, false, pool);
  }
}

// A copy of `op` in `pool` (null: the pool `op` lives in).
std::unique_ptr<Operation> cloneOpInto(Operation &op, ValueMap &map,
                                       OpPool *pool) {
  auto copy =
      Operation::create(pool ? *pool : op.pool(), op.name, op.info, op.loc);
  copy->attrs = op.attrs;
  if (op.hasProps())
    copy->mutableProps() = op.props();
  std::vector<Value *> operands;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    auto it = map.find(op.operand(i));
    operands.push_back(it == map.end() ? op.operand(i) : it->second);
  }
  copy->setOperands(operands);
  std::vector<Type> types;
  for (size_t i = 0; i < op.numResults(); ++i)
    types.push_back(op.result(i)->type);
  copy->setResultTypes(types);
  for (size_t i = 0; i < op.numResults(); ++i) {
    copy->result(i)->loc = op.result(i)->loc;
    map[op.result(i)] = copy->result(i);
  }
  for (size_t r = 0; r < op.numRegions(); ++r)
    cloneRegionInto(op.region(r), copy->addRegion(), map, pool);
  return copy;
}

void cloneBlockInto(Block &from, Block &into, Operation *before, ValueMap &map,
                    bool skip_terminator, OpPool *pool) {
  for (Operation *op = from.front(); op; op = op->nextInBlock()) {
    if (skip_terminator && op == from.back())
      break;
    into.insertBefore(before, cloneOpInto(*op, map, pool));
  }
}

} // namespace

bool mayContain(const Module &module,
                std::initializer_list<std::string_view> names) {
  const OpPool &ops = module.ctx().ops;
  for (std::string_view name : names)
    if (ops.liveNamed(name))
      return true;
  return false;
}

Operation *reshardOperandBefore(Operation &op, size_t index,
                                const TensorSharding &to, Context &ctx) {
  Value *value = op.operand(index);
  auto reshard = makeOp(ctx, "sdy.reshard", {value}, {value->type}, op.loc);
  reshard->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(to));
  Operation *made = op.parentBlock()->insertBefore(&op, std::move(reshard));
  op.setOperand(index, made->result(0));
  return made;
}

Operation *reshardResultBack(Operation &op, size_t index,
                             const TensorSharding &computed, Operation *before,
                             Context &ctx) {
  Value *result = op.result(index);
  const TensorSharding *had = getSharding(result);
  const TensorSharding wanted = had ? *had : computed;
  setSharding(result, computed, ctx);
  auto reshard = makeOp(ctx, "sdy.reshard", {result}, {result->type}, op.loc);
  reshard->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(wanted));
  Operation *back = op.parentBlock()->insertBefore(before, std::move(reshard));
  result->replaceAllUsesExcept(back->result(0), back);
  return back;
}

std::unique_ptr<Operation> cloneOp(Operation &op, ValueMap &map) {
  return cloneOpInto(op, map, nullptr);
}

void cloneBlockBefore(Block &from, Block &into, Operation *before,
                      ValueMap &map, bool skip_terminator) {
  cloneBlockInto(from, into, before, map, skip_terminator, nullptr);
}

std::unique_ptr<Module> copyModule(const Module &source) {
  auto context = std::make_shared<Context>(
      std::shared_ptr<const Context>(source.sharedContext()));
  auto copy = std::make_unique<Module>(context);
  copy->explicit_module = source.explicit_module;
  copy->sym_name = source.sym_name;
  copy->signature_ranges = source.signature_ranges;
  copy->verify_passes = source.verify_passes;
  copy->per_device = source.per_device;
  // Only read: the source's ops are shared by every copy made from it.
  Module &from = const_cast<Module &>(source);
  copy->op().attrs = from.op().attrs;
  copy->op().loc = from.op().loc;
  ValueMap map;
  std::unordered_map<const Operation *, const Operation *> top_level;
  for (Operation *op = from.body().front(); op; op = op->nextInBlock()) {
    Operation *made = copy->body().insertBefore(
        nullptr, cloneOpInto(*op, map, &context->ops));
    top_level.emplace(op, made);
  }
  // What was verified of the source holds for its copy, op for op.
  for (const Module::VerifiedOp &verified : source.verified_top_level)
    if (auto it = top_level.find(verified.op); it != top_level.end())
      copy->verified_top_level.push_back(
          {it->second, verified.own, verified.body});
  copy->verified_interface = source.verified_interface;
  return copy;
}

void insertMeshOp(Module &module, Operation *before, const std::string &name,
                  const Mesh &mesh) {
  Context &ctx = module.ctx();
  auto op = makeOp(ctx, "sdy.mesh", {}, {}, module.op().loc);
  op->attrs.set(ctx.intern("sym_name"), ctx.attrs.string(name));
  op->attrs.set(ctx.intern("mesh"),
                ctx.attrs.make(Attr{AttrKind::Mesh, mesh, nullptr, {}}));
  module.body().insertBefore(before, std::move(op));
}

std::string_view combinerKind(Operation &op) {
  if (!op.numRegions() || op.region(0).empty())
    return {};
  Block &body = op.region(0).front();
  Operation *combine = body.front();
  if (!combine || body.numArguments() != 2 || combine->numOperands() != 2 ||
      !combine->nextInBlock() || combine->nextInBlock()->nextInBlock() ||
      combine->operand(0)->owner_block != &body ||
      combine->operand(1)->owner_block != &body)
    return {};
  static constexpr std::pair<std::string_view, std::string_view> kKinds[] = {
      {"stablehlo.add", "sum"},     {"stablehlo.multiply", "product"},
      {"stablehlo.maximum", "max"}, {"stablehlo.minimum", "min"},
      {"stablehlo.and", "and"},     {"stablehlo.or", "or"}};
  for (const auto &[name, kind] : kKinds)
    if (combine->is(name))
      return kind;
  return {};
}

void eraseOp(Operation &op) { op.parentBlock()->erase(&op); }

void replaceOp(Operation &op, const std::vector<Value *> &values) {
  for (size_t i = 0; i < op.numResults(); ++i)
    op.result(i)->replaceAllUsesWith(values[i]);
  eraseOp(op);
}

bool isCollectiveOp(const Operation &op) {
  return verify::isCollective(op) || isStableHloCollective(op);
}

std::vector<std::vector<int64_t>> readReplicaGroups(const Attr *attr,
                                                    int64_t devices) {
  std::vector<std::vector<int64_t>> groups;
  const Type type = attr ? attr->type : nullptr;
  if (!attr || !type || type->rank() != 2 || !attr->denseReader().valid() ||
      attr->denseReader().size() == 0) {
    groups.emplace_back(); // empty: every device
    for (int64_t d = 0; d < devices; ++d)
      groups.back().push_back(d);
    return groups;
  }
  const DenseReader r = attr->denseReader();
  const int64_t cols = type->shape[1];
  for (int64_t i = 0; i < r.size(); i += cols) {
    groups.emplace_back();
    for (int64_t j = 0; j < cols; ++j)
      if (const int64_t d = int64_t(r.doubleAt(i + j)); d >= 0)
        groups.back().push_back(d);
  }
  return groups;
}

namespace {

/// The values of a 1-D integer `stablehlo.constant`, or nothing.
std::optional<std::vector<int64_t>> constantInts(const Value *value) {
  const Operation *def = value ? value->defining_op : nullptr;
  if (!def || !def->is("stablehlo.constant"))
    return std::nullopt;
  const Attr *attr = def->attrs.get("value");
  const Type type = value->type;
  if (!attr || !type || type->rank() != 1 || !type->hasStaticShape() ||
      !attr->denseReader().valid() || attr->denseReader().size() == 0)
    return std::nullopt;
  const DenseReader r = attr->denseReader();
  std::vector<int64_t> out;
  for (int64_t i = 0; i < type->shape[0]; ++i)
    out.push_back(int64_t(r.doubleAt(r.size() == 1 ? 0 : i)));
  return out;
}

/// Whether `value` is `stablehlo.partition_id`, possibly converted.
bool isDeviceIndex(const Value *value) {
  const Operation *def = value ? value->defining_op : nullptr;
  while (def && def->is("stablehlo.convert"))
    def = def->operand(0)->defining_op;
  return def && def->is("stablehlo.partition_id");
}

} // namespace

std::optional<std::vector<int64_t>> deviceTableOf(const Operation &lookup) {
  if (!lookup.is("stablehlo.dynamic_slice") || lookup.numOperands() != 2 ||
      !isDeviceIndex(lookup.operand(1)))
    return std::nullopt;
  return constantInts(lookup.operand(0));
}

bool isBeforeInBlock(const Operation *a, const Operation *b) {
  for (const Operation *op = a->nextInBlock(); op; op = op->nextInBlock())
    if (op == b)
      return true;
  return false;
}

namespace {

// StableHLO ops with side effects (no Pure trait in StableHLO).
bool isStablehloEffecting(std::string_view name) {
  static const std::unordered_set<std::string_view> kEffecting = {
      "stablehlo.custom_call",
      "stablehlo.all_reduce",
      "stablehlo.all_gather",
      "stablehlo.all_to_all",
      "stablehlo.reduce_scatter",
      "stablehlo.collective_permute",
      "stablehlo.collective_broadcast",
      "stablehlo.send",
      "stablehlo.recv",
      "stablehlo.infeed",
      "stablehlo.outfeed",
      "stablehlo.rng",
      "stablehlo.partition_id",
      "stablehlo.replica_id",
      "stablehlo.create_token",
      "stablehlo.after_all",
      "stablehlo.composite",
      "stablehlo.optimization_barrier"};
  return kEffecting.count(name) != 0;
}

bool isSdyPure(std::string_view name) {
  return name == "sdy.reshard" || name == "sdy.constant" ||
         name == "sdy.propagation_barrier";
}

bool regionsSideEffectFree(Operation &op) {
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (auto &block : op.region(r).blocks)
      for (Operation &nested : *block)
        if (!(nested.nextInBlock() == nullptr && nested.numResults() == 0) &&
            !isSideEffectFree(nested))
          return false;
  return true;
}

} // namespace

bool isSideEffectFree(Operation &op) {
  std::string_view dialect = op.dialect();
  if (dialect == "sdy") {
    if (op.is("sdy.manual_computation") || op.is("sdy.named_computation"))
      return regionsSideEffectFree(op);
    return isSdyPure(op.name);
  }
  if (dialect == "stablehlo" && op.info) {
    // A custom call has effects only when it says so (StableHLO's
    // getEffects): `@check.eq(...)` with an unused result is dead.
    if (op.is("stablehlo.custom_call")) {
      const Attr *effect = op.attrs.get("has_side_effect");
      return !(effect && effect->kind == AttrKind::Bool &&
               std::get<bool>(effect->payload)) &&
             regionsSideEffectFree(op);
    }
    if (isStablehloEffecting(op.name))
      return false;
    return regionsSideEffectFree(op);
  }
  return false;
}

bool isTriviallyDead(Operation &op) {
  // A terminator never is (it ends its block); an op without results is
  // when it has no effects (a manual computation with an empty body).
  if (op.nextInBlock() == nullptr)
    return false;
  for (size_t i = 0; i < op.numResults(); ++i)
    if (op.result(i)->hasUses())
      return false;
  return isSideEffectFree(op);
}

bool eraseUnreadOps(Operation &root,
                    const std::function<bool(Operation &)> &erasable) {
  // Users come after their operands' definitions: visiting in reverse
  // erases a dead chain in one sweep.
  std::vector<Operation *> ops;
  walk(root, [&](Operation &op) { ops.push_back(&op); });
  bool erased = false;
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation &op = **it;
    bool unread = op.parentBlock() && op.nextInBlock();
    for (size_t i = 0; i < op.numResults() && unread; ++i)
      unread = !op.result(i)->hasUses();
    if (unread && erasable(op)) {
      eraseOp(op);
      erased = true;
    }
  }
  return erased;
}

void eraseTriviallyDeadOps(Operation &root) {
  eraseUnreadOps(root, isSideEffectFree);
}

std::vector<Operation *> usersOf(const Value *value) {
  // Most values have a handful of users: a scan of those found so far is
  // cheapest. A value with many (a scalar constant every layer of a large
  // function reads) would make that quadratic: 1M ops in one function spent
  // 16% of their schedule here. Past kScanned users, a set remembers them.
  constexpr size_t kScanned = 16;
  std::vector<Operation *> users;
  tsl::robin_set<const Operation *> seen;
  for (OpOperand *use = value->firstUse(); use; use = use->next_use) {
    Operation *user = use->owner;
    if (users.size() < kScanned) {
      if (std::find(users.begin(), users.end(), user) != users.end())
        continue;
      users.push_back(user);
      if (users.size() == kScanned)
        seen.insert(users.begin(), users.end());
    } else if (seen.insert(user).second) {
      users.push_back(user);
    }
  }
  return users;
}

void forEachFunc(Module &module, const std::function<void(Operation &)> &fn) {
  for (Operation *op = module.body().front(); op;) {
    Operation *next = op->nextInBlock();
    // Declarations (no body) are only symbols: nothing to import, propagate
    // or export in them.
    if (op->is("func.func") && op->numRegions() && !op->region(0).empty())
      fn(*op);
    op = next;
  }
}

Operation *terminatorOf(Operation &op, size_t region) {
  if (op.numRegions() <= region || op.region(region).empty())
    return nullptr;
  return op.region(region).front().back();
}

std::vector<TensorSharding> shardingList(const Operation &op,
                                         std::string_view attr_name) {
  const Attr *attr = op.attrs.get(attr_name);
  if (!attr || attr->kind != AttrKind::ShardingPerValue)
    return {};
  return attr->shardings();
}

void setShardingList(Operation &op, std::string_view attr_name,
                     std::vector<TensorSharding> shardings, Context &ctx) {
  op.attrs.set(ctx.intern(attr_name),
               ctx.attrs.shardingPerValue(std::move(shardings)));
}

const TensorSharding &opSharding(const Operation &op,
                                 std::string_view attr_name) {
  return op.attrs.get(attr_name)->sharding();
}

void setOpSharding(Operation &op, const TensorSharding &sharding, Context &ctx,
                   std::string_view attr_name) {
  op.attrs.set(ctx.intern(attr_name), ctx.attrs.sharding(sharding));
}

namespace {

// The result of `fn` per Sharding or ShardingPerValue attribute.
// Attributes are immutable and uniqued, so a module's many equal shardings
// are transformed once. Neighbouring ops mostly carry the same sharding:
// the last lookup is kept in front of the table (on a 100k-op module each
// walk of transformShardings is memory-bound; the table's probes were a
// good part of it).
class ShardingMemo {
public:
  /// The memoized result for `attr`, or null.
  const Attr *find(const Attr *attr) {
    if (attr == last_key_)
      return last_value_;
    auto it = results_.find(attr);
    if (it == results_.end())
      return nullptr;
    remember(attr, it->second);
    return it->second;
  }
  void insert(const Attr *attr, const Attr *result) {
    results_.emplace(attr, result);
    remember(attr, result);
  }

private:
  void remember(const Attr *attr, const Attr *result) {
    last_key_ = attr;
    last_value_ = result;
  }
  tsl::robin_map<const Attr *, const Attr *> results_;
  const Attr *last_key_ = nullptr;
  const Attr *last_value_ = nullptr;
};

// `fn` applied to a Sharding or ShardingPerValue attribute, the same
// attribute when nothing changed. `fn` must give equal results for equal
// shardings.
const Attr *transformedAttr(const Attr *attr, Context &ctx,
                            const std::function<void(TensorSharding &)> &fn,
                            ShardingMemo &memo) {
  if (const Attr *known = memo.find(attr))
    return known;
  const Attr *result = attr;
  if (attr->kind == AttrKind::Sharding) {
    TensorSharding sharding = attr->sharding();
    fn(sharding);
    if (!(sharding == attr->sharding()))
      result = ctx.attrs.sharding(std::move(sharding));
  } else {
    std::vector<TensorSharding> list = attr->shardings();
    for (TensorSharding &sharding : list)
      fn(sharding);
    if (list != attr->shardings())
      result = ctx.attrs.shardingPerValue(std::move(list));
  }
  memo.insert(attr, result);
  return result;
}

// The attribute arrays of `func` Shardy reaches through its arguments and
// results: a declaration has no block arguments, so only `res_attrs`.
std::vector<const char *> funcShardingArrays(const Operation &func) {
  if (func.numRegions() && !func.region(0).empty())
    return {"arg_attrs", "res_attrs"};
  return {"res_attrs"};
}

// `array` (a func's arg_attrs or res_attrs) with `fn` applied to the
// `sdy.sharding` of each dictionary; the same attribute when nothing
// changed. Built once per func, not once per changed argument.
const Attr *
transformedDictArray(const Attr *array, Context &ctx,
                     const std::function<void(TensorSharding &)> &fn,
                     ShardingMemo &memo) {
  if (!array || array->kind != AttrKind::Array)
    return array;
  std::vector<const Attr *> dicts = array->elements();
  bool changed = false;
  for (const Attr *&dict : dicts) {
    const Attr *old = dict && dict->kind == AttrKind::Dict
                          ? dict->get("sdy.sharding")
                          : nullptr;
    if (!old || old->kind != AttrKind::Sharding)
      continue;
    const Attr *updated = transformedAttr(old, ctx, fn, memo);
    if (updated == old)
      continue;
    std::vector<NamedAttr> entries = dict->entries();
    for (NamedAttr &entry : entries)
      if (entry.value == old && entry.name == "sdy.sharding")
        entry.value = updated;
    dict =
        ctx.attrs.make(Attr{AttrKind::Dict, std::move(entries), nullptr, {}});
    changed = true;
  }
  return changed ? ctx.attrs.array(std::move(dicts)) : array;
}

void transformFuncShardings(Operation &func, Context &ctx,
                            const std::function<void(TensorSharding &)> &fn,
                            ShardingMemo &memo) {
  for (const char *key : funcShardingArrays(func)) {
    const Attr *array = func.attrs.get(key);
    const Attr *updated = transformedDictArray(array, ctx, fn, memo);
    if (updated != array)
      func.attrs.set(ctx.intern(key), updated);
  }
}

void transformOpShardings(Operation &op, Context &ctx,
                          const std::function<void(TensorSharding &)> &fn,
                          ShardingMemo &memo) {
  // set() on an existing name replaces its value in place.
  for (size_t i = 0; i < op.attrs.entries().size(); ++i) {
    const NamedAttr &entry = op.attrs.entries()[i];
    if (entry.value->kind != AttrKind::Sharding &&
        entry.value->kind != AttrKind::ShardingPerValue)
      continue;
    const Attr *updated = transformedAttr(entry.value, ctx, fn, memo);
    if (updated != entry.value)
      op.attrs.set(entry.name, updated);
  }
}

} // namespace

void transformShardings(Module &module,
                        const std::function<void(TensorSharding &)> &fn) {
  Context &ctx = module.ctx();
  ShardingMemo memo;
  walk(module.op(), [&](Operation &op) {
    if (op.is("func.func"))
      transformFuncShardings(op, ctx, fn, memo);
    else
      transformOpShardings(op, ctx, fn, memo);
  });
}

const Attr *withoutDictEntries(const Attr *array, std::string_view name,
                               Context &ctx) {
  if (!array || array->kind != AttrKind::Array)
    return nullptr;
  std::vector<const Attr *> dicts;
  bool any = false;
  for (const Attr *dict : array->elements()) {
    std::vector<NamedAttr> entries;
    if (dict && dict->kind == AttrKind::Dict)
      for (const NamedAttr &entry : dict->entries())
        if (entry.name != name)
          entries.push_back(entry);
    any = any || !entries.empty();
    dicts.push_back(
        ctx.attrs.make(Attr{AttrKind::Dict, std::move(entries), nullptr, {}}));
  }
  return any ? ctx.attrs.array(std::move(dicts)) : nullptr;
}

const Attr *dictWith(const Attr *dict, std::string_view key, const Attr *value,
                     Context &ctx) {
  AttrDict entries;
  if (dict && dict->kind == AttrKind::Dict)
    for (const NamedAttr &entry : dict->entries())
      entries.set(entry.name, entry.value);
  entries.set(ctx.intern(key), value);
  return ctx.attrs.make(Attr{AttrKind::Dict, entries.toVector(), nullptr, {}});
}

const Attr *dictWithout(const Attr *dict, std::string_view key, Context &ctx) {
  if (!dict || dict->kind != AttrKind::Dict)
    return dict;
  std::vector<NamedAttr> kept;
  for (const NamedAttr &entry : dict->entries())
    if (entry.name != key)
      kept.push_back(entry);
  if (kept.empty())
    return nullptr;
  return ctx.attrs.make(Attr{AttrKind::Dict, std::move(kept), nullptr, {}});
}

void setOrEraseAttr(Operation &op, std::string_view name, const Attr *value,
                    Context &ctx) {
  if (value)
    op.attrs.set(ctx.intern(name), value);
  else
    op.attrs.erase(name);
}

bool isCustomCall(const Operation *op, std::string_view target) {
  return op && !target.empty() && customCallTarget(*op) == target;
}

const TensorSharding *firstResultSharding(const Operation &op) {
  const Attr *attr = op.attrs.get("sdy.sharding");
  return attr && attr->kind == AttrKind::ShardingPerValue &&
                 !attr->shardings().empty()
             ? &attr->shardings()[0]
             : nullptr;
}

void eraseFuncArgAndResultAttr(Operation &func, std::string_view name,
                               Context &ctx) {
  for (const char *key : funcShardingArrays(func)) {
    const Attr *array = func.attrs.get(key);
    if (!array || array->kind != AttrKind::Array)
      continue;
    setOrEraseAttr(func, key, withoutDictEntries(array, name, ctx), ctx);
  }
}

std::vector<Operation *> opsNamed(Module &module, std::string_view kind) {
  std::vector<Operation *> ops;
  if (!mayContain(module, {kind}))
    return ops;
  walk(module.op(), [&](Operation &op) {
    if (op.is(kind))
      ops.push_back(&op);
  });
  return ops;
}

void eraseMeshOps(Module &module) {
  for (Operation *op = module.body().front(); op;) {
    Operation *next = op->nextInBlock();
    if (op->is("sdy.mesh"))
      eraseOp(*op);
    op = next;
  }
}

bool markUnchanged(Module &module) {
  module.unchanged_by_pass = true;
  return true;
}

Operation *enclosingManualComputation(const Operation &op) {
  for (Operation *parent = op.parentOp(); parent; parent = parent->parentOp())
    if (parent->is("sdy.manual_computation"))
      return parent;
  return nullptr;
}

namespace {

bool samePayload(const std::vector<const Attr *> &x,
                 const std::vector<const Attr *> &y) {
  if (x.size() != y.size())
    return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!sameAttr(x[i], y[i]))
      return false;
  return true;
}

bool samePayload(std::span<const NamedAttr> x, std::span<const NamedAttr> y) {
  if (x.size() != y.size())
    return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].name != y[i].name || !sameAttr(x[i].value, y[i].value))
      return false;
  return true;
}

bool samePayload(const std::vector<NamedAttr> &x,
                 const std::vector<NamedAttr> &y) {
  return samePayload(std::span<const NamedAttr>(x),
                     std::span<const NamedAttr>(y));
}

template <typename T> bool samePayload(const T &x, const T &y) {
  return x == y;
}

} // namespace

// Structural equality of attributes (MLIR attributes are uniqued, so
// Shardy compares them by identity).
bool sameAttr(const Attr *a, const Attr *b) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type ||
      a->text != b->text || a->payload.index() != b->payload.index())
    return false;
  return std::visit(
      [&](const auto &x) {
        using T = std::decay_t<decltype(x)>;
        return samePayload(x, std::get<T>(b->payload));
      },
      a->payload);
}

bool sameAttrs(const AttrDict &x, const AttrDict &y) {
  return samePayload(x.entries(), y.entries());
}

} // namespace shardlab
