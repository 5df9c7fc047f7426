#include "driver.h"

#include "edges.h"
#include "factor_propagation_internal.h"
#include "ir/op_properties.h"
#include "propagation/projection.h"
#include "rules/registry.h"
#include "rules/rule_builder.h"
#include "shardlab/ir/sharding_access.h"
#include "support/word_hash.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_set>

namespace shardlab::prop {

void OpIndex::add(Operation &op, Context &ctx) {
  order.push_back(&op);
  op.scratch_index = static_cast<uint32_t>(order.size());
  if (!op.is("func.call"))
    return;
  if (const Attr *callee = op.attrs.get("callee"))
    callers[ctx.intern(callee->str())].push_back(&op);
}

bool OpIndex::elementwise(const Operation &op) const {
  uint32_t i = indexOf(&op);
  if (!i)
    return isElementwise(op);
  if (elementwise_.size() <= order.size())
    elementwise_.resize(order.size() + 1, 0);
  if (!elementwise_[i])
    elementwise_[i] = isElementwise(op) ? 2 : 1;
  return elementwise_[i] == 2;
}

void OpIndex::cacheRule(uint32_t i, const OpShardingRule *rule) const {
  if (!i || i > order.size())
    return;
  if (rules_.size() <= order.size()) {
    rules_.resize(order.size() + 1, nullptr);
    rule_known_.resize(order.size() + 1, 0);
  }
  rules_[i] = rule;
  rule_known_[i] = 1;
}

void OpIndex::build(Module &module) {
  clear();
  for (Operation &top : module.body())
    if (top.is("func.func"))
      walk(top, [&](Operation &op) { add(op, module.ctx()); });
}

size_t StepMemo::Hash::operator()(const Key &key) const {
  return hashWords({key.reads.words, key.reads.size},
                   reinterpret_cast<uintptr_t>(key.rule) ^ key.flags);
}

std::span<const TensorSharding *const> StepMemo::find(const Key &key) const {
  auto it = entries_.find(key);
  if (it == entries_.end())
    return {};
  return {outcomes_.data() + it->second.offset, it->second.size};
}

void StepMemo::insert(const Key &key,
                      std::span<const TensorSharding *const> outcome) {
  Slice slice{static_cast<uint32_t>(outcomes_.size()),
              static_cast<uint32_t>(outcome.size())};
  if (!entries_.emplace(key, slice).second)
    return;
  outcomes_.insert(outcomes_.end(), outcome.begin(), outcome.end());
}

namespace {

// One side (operands or results) of a propagation step: the values, their
// current shardings and where a new one is written.
struct TensorSide {
  std::vector<Value *> values;
  std::vector<const TensorSharding *> shardings;
  /// Shardings computed for the step (a data-flow edge's sharding as
  /// propagation sees it, a manual computation's body argument without its
  /// manual axes); `shardings` may point into it, so it is reserved before
  /// the first entry and never grows past its capacity.
  std::vector<TensorSharding> views;
  /// Where `set` writes: the values, the main func's result `func_index`,
  /// or the sdy.data_flow_edge `edge` (through its manual-axes transform).
  enum class Sink { Values, FuncResult, Edge } sink = Sink::Values;
  Operation *owner = nullptr;
  size_t func_index = 0;
  bool func_result = false;

  /// Empties the side, keeping its storage for the next step.
  void reset() {
    values.clear();
    shardings.clear();
    views.clear();
    sink = Sink::Values;
    owner = nullptr;
    func_index = 0;
    func_result = false;
  }
  /// `views` must have been reserved for every entry beforehand.
  const TensorSharding *addView(TensorSharding sharding) {
    views.push_back(std::move(sharding));
    return &views.back();
  }
};

bool allDimsEmpty(const TensorSharding &s) {
  if (!s.replicated.empty() || !s.unreduced.empty())
    return false;
  for (const DimSharding &dim : s.dims)
    if (!dim.axes.empty())
      return false;
  return true;
}

OpShardingRule identityRule(Type type, size_t num_operands) {
  std::vector<int64_t> shape = type->shape;
  std::optional<OpShardingRule> rule = pointwiseRule(
      std::vector<int64_t>(num_operands, type->rank()), {type->rank()}, shape);
  return rule ? *rule : OpShardingRule{};
}

bool staticTensor(Type type) {
  return type && type->isRankedTensor() && type->hasStaticShape();
}

PropagationDirection parseDirection(const Attr *attr) {
  std::string_view text = attr ? std::string_view(attr->str()) : "BOTH";
  if (text == "FORWARD")
    return PropagationDirection::Forward;
  if (text == "BACKWARD")
    return PropagationDirection::Backward;
  if (text == "NONE")
    return PropagationDirection::None;
  return PropagationDirection::Both;
}

class Driver {
public:
  Driver(Module &module, const DriverConfig &config)
      : module_(module), ctx_(module.ctx()), config_(config), meshes_(module) {}

  void run();

private:
  void propagateFuncResults(Operation &func);
  void process(Operation &op);
  void processRegistered(Operation &op);

  void processEdge(Operation &edge);
  void processFuncEdge(Operation &edge);
  void processBarrier(Operation &op);
  /// An emptied side (0: operands, 1: results) of the next step.
  TensorSide &side(int which);
  /// Reads the shardings of `side.values`.
  void loadShardings(TensorSide &side);
  void set(TensorSide &side, size_t i, const TensorSharding &sharding);
  bool noChangeKey(const TensorSide &operands, const TensorSide &results,
                   NoChangeCache::Key &key) const;
  /// Fills directions_ for a step of `op` with `rule` (`dir` null: every
  /// factor propagates in `fixed` direction); false when none propagates.
  bool setDirections(const OpShardingRule &rule, const OpDirectionFn *dir,
                     PropagationDirection fixed, Operation *op);
  /// The rule processRegistered uses for `op` (null: skip the op).
  const OpShardingRule *registeredRule(Operation &op);
  /// identityRule(type, num_operands), made once per run: edges and
  /// barriers ask for it on every visit (a loop's carried values, each
  /// propagation round), and a rule is several vectors to build.
  const OpShardingRule &identity(Type type, size_t num_operands);
  /// Propagates one step along directions_ (see setDirections).
  bool propagate(TensorSide &operands, TensorSide &results,
                 const OpShardingRule &rule, Operation *op, bool conservative,
                 bool notify, StepKind kind, int64_t func_result = -1);
  /// Unprojects the updated rows of `side` and commits those that differ
  /// from the tensor's sharding. With `outcome`, also appends per tensor
  /// the interned new sharding (null: unchanged), for the StepMemo.
  bool applyUpdates(TensorSide &side,
                    const std::vector<TensorFactorShardings> &rows,
                    const std::vector<OpShardingRule::TensorMapping> &maps,
                    const std::vector<bool> &flags, const OpShardingRule &rule,
                    const MeshRef &ref, const Mesh &mesh, bool notify,
                    std::vector<const TensorSharding *> *outcome);
  /// Gives tensor `i` of `side` the new `sharding`: its value (and the
  /// members of its sharding group) and the ops that read it.
  void commit(TensorSide &side, size_t i, const TensorSharding &sharding,
              bool notify);
  /// Tells the NoChangeCache whether the step of op `op_index` (0: not
  /// cached) reading `key` changed a sharding.
  void rememberOutcome(uint32_t op_index, const NoChangeCache::Key &key,
                       bool changed);
  /// Commits a remembered outcome (see StepMemo); whether any changed.
  bool applyOutcome(TensorSide &operands, TensorSide &results,
                    std::span<const TensorSharding *const> outcome,
                    bool notify);

  void push(Operation *op);
  void pop(Operation *op);
  void notifyOp(Operation *op);
  void notifyShardingModified(Value *value);
  void notifyUsersModified(Value *value);
  void notifyTerminatorUse(OpOperand &use);

  Module &module_;
  Context &ctx_;
  const DriverConfig &config_;
  Operation *current_ = nullptr;
  std::vector<Operation *> worklist_;
  const OpIndex *index_ = nullptr;
  OpIndex own_index_;
  std::vector<uint8_t> in_worklist_; ///< by OpIndex number
  std::unordered_set<Operation *> unindexed_;
  /// Mesh symbols already resolved (modules have one or a few meshes).
  MeshCache meshes_;
  /// Per-factor directions of the step being propagated.
  std::vector<PropagationDirection> directions_;
  /// Storage reused by every step (a step never starts another one).
  TensorSide sides_[2];
  ShardingProjection projection_;
  TensorUpdates updates_;
  TensorSharding fresh_; ///< applyUpdates' unprojected sharding
  std::vector<const TensorSharding *> outcome_; ///< a step's, for StepMemo
  FactorScratch scratch_;
  std::map<std::pair<Type, size_t>, OpShardingRule> identity_rules_;
};

void Driver::push(Operation *op) {
  if (uint32_t i = index_->indexOf(op)) {
    if (in_worklist_[i])
      return;
    in_worklist_[i] = 1;
    worklist_.push_back(op);
    return;
  }
  // Not indexed (not in a func body): tracked by address.
  if (unindexed_.insert(op).second)
    worklist_.push_back(op);
}

void Driver::pop(Operation *op) {
  if (uint32_t i = index_->indexOf(op))
    in_worklist_[i] = 0;
  else
    unindexed_.erase(op);
}

// Adds `op` and its ancestors below the func, as MLIR's greedy driver does.
void Driver::notifyOp(Operation *op) {
  if (!op || op == current_)
    return;
  for (Operation *cur = op;
       cur && !cur->is("func.func") && !cur->is("builtin.module");
       cur = cur->parentOp())
    push(cur);
}

void Driver::run() {
  if (!config_.index) {
    own_index_.build(module_);
    index_ = &own_index_;
  } else {
    index_ = config_.index;
  }
  in_worklist_.assign(index_->order.size() + 1, 0);
  Operation *main = module_.mainFunc();
  if (main)
    propagateFuncResults(*main);
  const std::vector<Operation *> &order = index_->order;
  worklist_.reserve(order.size());
  // order[i] is numbered i + 1: seeding does not read the ops (a cache miss
  // each in a large module, long before the op is processed).
  for (size_t i = order.size(); i-- > 0;) {
    if (in_worklist_[i + 1])
      continue;
    in_worklist_[i + 1] = 1;
    worklist_.push_back(order[i]);
  }
  while (!worklist_.empty()) {
    Operation *op = worklist_.back();
    worklist_.pop_back();
    pop(op);
    current_ = op;
    process(*op);
    current_ = nullptr;
  }
  if (main)
    propagateFuncResults(*main);
}

} // namespace

namespace {

void Driver::notifyTerminatorUse(OpOperand &use) {
  Operation *user = use.owner;
  Operation *parent = user->parentOp();
  if (!user->is("func.return") || !parent) {
    notifyOp(parent);
    return;
  }
  const Attr *name = parent->attrs.get("sym_name");
  auto it = name ? index_->callers.find(name->str()) : index_->callers.end();
  if (it == index_->callers.end() || it->second.empty()) {
    notifyOp(parent);
    return;
  }
  for (Operation *call : it->second)
    if (use.index() < call->numResults())
      notifyUsersModified(call->result(use.index()));
}

void Driver::notifyUsersModified(Value *value) {
  for (OpOperand *use = value->firstUse(); use; use = use->next_use) {
    Operation *user = use->owner;
    if (Operation *edge = dataFlowEdgeUser(edgeOwnerFromSource(*use))) {
      notifyOp(edge);
      continue;
    }
    if (isTerminator(*user)) {
      notifyTerminatorUse(*use);
      continue;
    }
    if (user->is("func.call")) {
      const Attr *callee = user->attrs.get("callee");
      Operation *func = callee ? module_.lookupSymbol(callee->str()) : nullptr;
      if (func && func->numRegions() && !func->region(0).empty() &&
          use->index() < func->region(0).front().numArguments())
        notifyUsersModified(func->region(0).front().argument(use->index()));
      continue;
    }
    notifyOp(user);
  }
}

void Driver::notifyShardingModified(Value *value) {
  if (!value->isBlockArgument() && value->defining_op->is("sdy.data_flow_edge"))
    for (Value *target : nonOwnerTargets(value->defining_op->operand(0)))
      notifyUsersModified(target);
  notifyOp(owningOp(value));
  notifyUsersModified(value);
}

TensorSide &Driver::side(int which) {
  TensorSide &s = sides_[which];
  s.reset();
  return s;
}

void Driver::loadShardings(TensorSide &side) {
  side.views.reserve(side.values.size());
  for (Value *v : side.values) {
    std::optional<TensorSharding> view;
    if (v->isBlockArgument())
      view = manualBodyArgView(v);
    side.shardings.push_back(view ? side.addView(std::move(*view))
                                  : valueSharding(v));
  }
}

void Driver::set(TensorSide &side, size_t i, const TensorSharding &sharding) {
  switch (side.sink) {
  case TensorSide::Sink::Values:
    setValueSharding(side.values[i], sharding, ctx_);
    return;
  case TensorSide::Sink::FuncResult:
    setFuncResultSharding(*side.owner, side.func_index, sharding, ctx_);
    return;
  case TensorSide::Sink::Edge:
    side.owner->attrs.set("sharding", ctx_.attrs.sharding(transformEdgeSharding(
                                          *side.owner, sharding,
                                          /*before=*/false)));
    return;
  }
}

// The NoChangeCache key of a step: strategy and directions, then the
// addresses of the tensors' shardings. False when the step reads computed
// shardings (edge views) or does not fit the key.
bool Driver::noChangeKey(const TensorSide &operands, const TensorSide &results,
                         NoChangeCache::Key &key) const {
  if (!operands.views.empty() || !results.views.empty() ||
      directions_.size() > 30 ||
      operands.shardings.size() + results.shardings.size() + 1 >
          NoChangeCache::kMaxKey)
    return false;
  uintptr_t head = static_cast<uintptr_t>(config_.strategy);
  for (size_t f = 0; f < directions_.size(); ++f)
    head |= static_cast<uintptr_t>(directions_[f]) << (2 * f + 2);
  key.size = 0;
  key.words[key.size++] = head;
  for (const auto *side : {&operands.shardings, &results.shardings})
    for (const TensorSharding *s : *side)
      key.words[key.size++] = reinterpret_cast<uintptr_t>(s);
  return true;
}

bool Driver::applyUpdates(
    TensorSide &side, const std::vector<TensorFactorShardings> &rows,
    const std::vector<OpShardingRule::TensorMapping> &maps,
    const std::vector<bool> &flags, const OpShardingRule &rule,
    const MeshRef &ref, const Mesh &mesh, bool notify,
    std::vector<const TensorSharding *> *outcome) {
  bool any = false;
  for (size_t i = 0; i < flags.size(); ++i) {
    const TensorSharding *changed = nullptr;
    if (flags[i]) {
      unprojectInto(fresh_, rows[i], maps[i], rule.factor_sizes, ref, mesh);
      const TensorSharding *old = side.shardings[i];
      if (!(!old && allDimsEmpty(fresh_)) && !(old && *old == fresh_))
        changed = &fresh_;
    }
    if (outcome)
      outcome->push_back(changed ? &ctx_.attrs.sharding(fresh_)->sharding()
                                 : nullptr);
    if (!changed)
      continue;
    commit(side, i, fresh_, notify);
    any = true;
  }
  return any;
}

void Driver::commit(TensorSide &side, size_t i, const TensorSharding &sharding,
                    bool notify) {
  set(side, i, sharding);
  if (side.func_result)
    return;
  Value *value = shardableValue(side.values[i]);
  if (!value)
    return;
  if (notify)
    notifyShardingModified(value);
  const std::vector<Value *> *group =
      config_.groups ? config_.groups->groupOf(value) : nullptr;
  if (!group)
    return;
  for (Value *member : *group) {
    if (member == value)
      continue;
    setValueSharding(member, sharding, ctx_);
    if (config_.observer)
      config_.observer->onGroupCopy(value, member, sharding);
    if (notify)
      notifyShardingModified(member);
  }
}

void Driver::rememberOutcome(uint32_t op_index, const NoChangeCache::Key &key,
                             bool changed) {
  if (!op_index)
    return;
  if (changed)
    config_.no_change->forget(op_index);
  else
    config_.no_change->remember(op_index, key);
}

bool Driver::applyOutcome(TensorSide &operands, TensorSide &results,
                          std::span<const TensorSharding *const> outcome,
                          bool notify) {
  bool any = false;
  size_t num_operands = operands.values.size();
  for (size_t i = 0; i < outcome.size(); ++i) {
    if (!outcome[i])
      continue;
    if (i < num_operands)
      commit(operands, i, *outcome[i], notify);
    else
      commit(results, i - num_operands, *outcome[i], notify);
    any = true;
  }
  return any;
}

bool Driver::setDirections(const OpShardingRule &rule, const OpDirectionFn *dir,
                           PropagationDirection fixed, Operation *op) {
  size_t num_factors = rule.factor_sizes.size();
  directions_.assign(num_factors, dir ? PropagationDirection::Both : fixed);
  if (dir && num_factors)
    (*dir)(*op, directions_);
  for (int64_t factor : rule.blocked_propagation)
    if (factor >= 0 && static_cast<size_t>(factor) < num_factors)
      directions_[static_cast<size_t>(factor)] = PropagationDirection::None;
  return std::any_of(
      directions_.begin(), directions_.end(),
      [](PropagationDirection d) { return d != PropagationDirection::None; });
}

bool Driver::propagate(TensorSide &operands, TensorSide &results,
                       const OpShardingRule &rule, Operation *op,
                       bool conservative, bool notify, StepKind kind,
                       int64_t func_result) {
  const MeshRef *ref = nullptr;
  const Mesh *mesh = nullptr;
  for (const auto *side : {&operands.shardings, &results.shardings})
    for (const TensorSharding *s : *side) {
      if (!s)
        continue;
      const Mesh *other = meshes_.get(s->mesh);
      if (!other)
        return false;
      if (!mesh || mesh->isEmpty()) {
        mesh = other;
        ref = &s->mesh;
      } else if (other != mesh && !other->isEmpty() && !(*other == *mesh)) {
        return false;
      }
    }
  if (!mesh || mesh->isMaximal())
    return false;
  NoChangeCache::Key key;
  bool keyed = (config_.no_change || config_.steps) &&
               kind != StepKind::FuncResult &&
               noChangeKey(operands, results, key);
  uint32_t op_index = keyed && config_.no_change ? index_->indexOf(op) : 0;
  if (op_index && config_.no_change->unchanged(op_index, key))
    return false;
  // Only an op's rule is shared (the others are built for the step).
  StepMemo *memo = keyed && kind == StepKind::Op && !config_.observer
                       ? config_.steps
                       : nullptr;
  StepMemo::Key step;
  if (memo) {
    step.reads = key;
    step.rule = &rule;
    step.flags = static_cast<uint8_t>((conservative ? 1 : 0) |
                                      (op && index_->elementwise(*op) ? 2 : 0));
    std::span<const TensorSharding *const> outcome = memo->find(step);
    if (!outcome.empty()) {
      rememberOutcome(op_index, key,
                      applyOutcome(operands, results, outcome, notify));
      return true;
    }
  }
  MeshRef mesh_ref = *ref;
  ShardingProjection &projection = projection_;
  buildProjectionInto(projection, operands.shardings, results.shardings, rule,
                      *mesh);
  FactorDirectionFn local = [this](int64_t factor) {
    return directions_[static_cast<size_t>(factor)];
  };
  FactorPropagationInput in{&local,
                            &rule.factor_sizes,
                            mesh,
                            conservative,
                            op && index_->elementwise(*op),
                            &scratch_};
  std::optional<ShardingProjection> before;
  if (config_.observer)
    before = projection;
  TensorUpdates &updates = updates_;
  propagateFactorsInto(config_.strategy, projection, in, updates);
  std::vector<const TensorSharding *> *outcome = memo ? &outcome_ : nullptr;
  outcome_.clear();
  bool any =
      applyUpdates(operands, projection.operands, rule.operands,
                   updates.operands, rule, mesh_ref, *mesh, notify, outcome);
  any |= applyUpdates(results, projection.results, rule.results,
                      updates.results, rule, mesh_ref, *mesh, notify, outcome);
  if (memo)
    memo->insert(step, outcome_);
  rememberOutcome(op_index, key, any);
  if (config_.observer && any) {
    StepEvent event;
    event.kind = kind;
    event.op = op;
    event.func_result = func_result;
    event.operands = &operands.values;
    event.results = &results.values;
    event.rule = &rule;
    event.mesh = mesh;
    event.before = &*before;
    event.after = &projection;
    config_.observer->onStep(event);
  }
  return true;
}

void Driver::propagateFuncResults(Operation &func) {
  if (!func.numRegions() || func.region(0).empty())
    return;
  Operation *ret = func.region(0).front().back();
  if (!ret || !ret->is("func.return"))
    return;
  for (size_t i = 0; i < ret->numOperands(); ++i) {
    Value *value = ret->operand(i);
    if (!staticTensor(value->type))
      continue;
    TensorSide &operands = side(0);
    operands.values.push_back(value);
    loadShardings(operands);
    TensorSide &results = side(1);
    results.values.push_back(value);
    results.shardings.push_back(getFuncResultSharding(func, i));
    results.sink = TensorSide::Sink::FuncResult;
    results.owner = &func;
    results.func_index = i;
    results.func_result = true;
    const OpShardingRule &rule = identity(value->type, 1);
    if (setDirections(rule, nullptr, PropagationDirection::Both, &func))
      propagate(operands, results, rule, &func, false, false,
                StepKind::FuncResult, static_cast<int64_t>(i));
  }
}

void Driver::process(Operation &op) {
  if (op.is("sdy.propagation_barrier"))
    processBarrier(op);
  else if (op.is("sdy.data_flow_edge"))
    processEdge(op);
  else if (op.is("sdy.func_data_flow_edge"))
    processFuncEdge(op);
  else
    processRegistered(op);
}

void Driver::processBarrier(Operation &op) {
  if (op.numOperands() != 1 || !staticTensor(op.result(0)->type))
    return;
  TensorSide &operands = side(0);
  operands.values.push_back(op.operand(0));
  loadShardings(operands);
  TensorSide &results = side(1);
  results.values.push_back(op.result(0));
  loadShardings(results);
  PropagationDirection allowed =
      parseDirection(op.attrs.get("allowed_direction"));
  const OpShardingRule &rule = identity(op.result(0)->type, 1);
  if (setDirections(rule, nullptr, allowed, &op))
    propagate(operands, results, rule, &op, false, true,
              StepKind::PropagationBarrier);
}

void Driver::processEdge(Operation &edge) {
  Value *result = edge.result(0);
  if (!staticTensor(result->type))
    return;
  TensorSide &operands = side(0);
  operands.values = edgeSources(edge.operand(0));
  size_t num_sources = operands.values.size();
  loadShardings(operands);
  TensorSide &results = side(1);
  results.values.push_back(result);
  results.views.reserve(1);
  const TensorSharding *stored = getSharding(result);
  results.shardings.push_back(
      stored ? results.addView(transformEdgeSharding(edge, *stored, true))
             : nullptr);
  results.sink = TensorSide::Sink::Edge;
  results.owner = &edge;
  const OpShardingRule &rule = identity(result->type, num_sources);
  if (setDirections(rule, &config_.direction, PropagationDirection::None,
                    &edge))
    propagate(operands, results, rule, &edge, false, true,
              StepKind::DataFlowEdge);
}

void Driver::processFuncEdge(Operation &edge) {
  Value *result = edge.result(0);
  if (!staticTensor(result->type) || edge.numOperands() != 1)
    return;
  Value *input = edge.operand(0);
  std::vector<Value *> sources;
  if (input->isBlockArgument()) {
    Operation *func = owningOp(input);
    const Attr *name = func ? func->attrs.get("sym_name") : nullptr;
    auto it = name ? index_->callers.find(name->str()) : index_->callers.end();
    if (it != index_->callers.end())
      for (Operation *call : it->second)
        if (input->index < call->numOperands())
          sources.push_back(call->operand(input->index));
    if (sources.empty())
      return;
  } else if (input->defining_op->is("func.call")) {
    const Attr *callee = input->defining_op->attrs.get("callee");
    Operation *func = callee ? module_.lookupSymbol(callee->str()) : nullptr;
    if (!func || !func->numRegions() || func->region(0).empty())
      return;
    Operation *ret = func->region(0).front().back();
    if (ret && ret->is("func.return") && input->index < ret->numOperands())
      sources.push_back(ret->operand(input->index));
  }
  size_t num_sources = sources.size();
  TensorSide &operands = side(0);
  operands.values = std::move(sources);
  loadShardings(operands);
  TensorSide &results = side(1);
  results.values.push_back(result);
  loadShardings(results);
  const OpShardingRule &rule = identity(result->type, num_sources);
  if (setDirections(rule, &config_.direction, PropagationDirection::None,
                    &edge))
    propagate(operands, results, rule, &edge, false, true,
              StepKind::FuncDataFlowEdge);
}

const OpShardingRule &Driver::identity(Type type, size_t num_operands) {
  auto [it, made] = identity_rules_.try_emplace({type, num_operands});
  if (made)
    it->second = identityRule(type, num_operands);
  return it->second;
}

const OpShardingRule *Driver::registeredRule(Operation &op) {
  uint32_t i = index_->indexOf(&op);
  bool known = false;
  const OpShardingRule *rule = index_->cachedRule(i, known);
  if (known)
    return rule;
  rule = getOrAttachShardingRule(op, ctx_, config_.conservative,
                                 config_.warnings, config_.rules);
  if (rule && (rule->operands.size() != op.numOperands() ||
               rule->results.size() != op.numResults()))
    rule = nullptr;
  index_->cacheRule(i, rule);
  return rule;
}

void Driver::processRegistered(Operation &op) {
  const OpShardingRule *rule = registeredRule(op);
  // Directions before shardings: when no factor may propagate (most ops at
  // the first op-priority levels), the tensors' shardings are not read.
  if (!rule || !setDirections(*rule, &config_.direction,
                              PropagationDirection::None, &op))
    return;
  TensorSide &operand_side = side(0);
  for (size_t i = 0; i < op.numOperands(); ++i)
    operand_side.values.push_back(op.operand(i));
  loadShardings(operand_side);
  TensorSide &result_side = side(1);
  for (size_t i = 0; i < op.numResults(); ++i)
    result_side.values.push_back(op.result(i));
  loadShardings(result_side);
  propagate(operand_side, result_side, *rule, &op, config_.conservative, true,
            StepKind::Op);
}

} // namespace

void runDriver(Module &module, const DriverConfig &config) {
  Driver driver(module, config);
  driver.run();
}

} // namespace shardlab::prop
