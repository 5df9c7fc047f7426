#include "driver.h"

#include "edges.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/propagation/projection.h"
#include "shardlab/rules/registry.h"
#include "shardlab/rules/rule_builder.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

namespace shardlab::prop {

namespace {

const std::unordered_set<std::string_view> &elementwiseOps() {
  static const std::unordered_set<std::string_view> ops = {
      "stablehlo.abs",
      "stablehlo.add",
      "stablehlo.and",
      "stablehlo.atan2",
      "stablehlo.cbrt",
      "stablehlo.ceil",
      "stablehlo.clamp",
      "stablehlo.compare",
      "stablehlo.complex",
      "stablehlo.convert",
      "stablehlo.cosine",
      "stablehlo.count_leading_zeros",
      "stablehlo.divide",
      "stablehlo.exponential",
      "stablehlo.exponential_minus_one",
      "stablehlo.floor",
      "stablehlo.imag",
      "stablehlo.is_finite",
      "stablehlo.log",
      "stablehlo.log_plus_one",
      "stablehlo.logistic",
      "stablehlo.maximum",
      "stablehlo.minimum",
      "stablehlo.multiply",
      "stablehlo.negate",
      "stablehlo.not",
      "stablehlo.or",
      "stablehlo.popcnt",
      "stablehlo.power",
      "stablehlo.real",
      "stablehlo.reduce_precision",
      "stablehlo.remainder",
      "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even",
      "stablehlo.rsqrt",
      "stablehlo.select",
      "stablehlo.shift_left",
      "stablehlo.shift_right_arithmetic",
      "stablehlo.shift_right_logical",
      "stablehlo.sign",
      "stablehlo.sine",
      "stablehlo.sqrt",
      "stablehlo.subtract",
      "stablehlo.tan",
      "stablehlo.tanh",
      "stablehlo.xor",
      "sdy.propagation_barrier",
      "sdy.sharding_constraint",
      "sdy.reshard"};
  return ops;
}

} // namespace

bool isElementwise(const Operation &op) {
  if (op.is("stablehlo.bitcast_convert"))
    return op.numOperands() == 1 && op.numResults() == 1 &&
           op.operand(0)->type->rank() == op.result(0)->type->rank();
  return elementwiseOps().count(op.name) != 0;
}

Operation *mainFunc(Module &module) {
  if (Operation *main = module.lookupSymbol("main"))
    if (main->is("func.func"))
      return main;
  Operation *only = nullptr;
  for (Operation &op : module.body())
    if (op.is("func.func")) {
      if (only)
        return nullptr;
      only = &op;
    }
  return only;
}

namespace {

// One side (operands or results) of a propagation step: the values, their
// current shardings and how to write a new one.
struct TensorSide {
  std::vector<Value *> values;
  std::vector<const TensorSharding *> shardings;
  std::function<void(size_t, const TensorSharding &)> set;
  bool func_result = false;
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
      : module_(module), ctx_(module.ctx()), config_(config) {}

  void run();

private:
  void buildCallers();
  void propagateFuncResults(Operation &func);
  void process(Operation &op);
  void processRegistered(Operation &op);
  void processEdge(Operation &edge);
  void processFuncEdge(Operation &edge);
  void processBarrier(Operation &op);
  TensorSide sideOf(const std::vector<Value *> &values);
  bool propagate(TensorSide &operands, TensorSide &results,
                 const OpShardingRule &rule, const FactorDirectionFn &dir,
                 Operation *op, bool conservative, bool notify, StepKind kind,
                 int64_t func_result = -1);
  bool applyUpdates(TensorSide &side,
                    const std::vector<TensorFactorShardings> &rows,
                    const std::vector<OpShardingRule::TensorMapping> &maps,
                    const std::vector<bool> &flags, const OpShardingRule &rule,
                    const MeshRef &ref, const Mesh &mesh, bool notify);

  void push(Operation *op);
  void notifyOp(Operation *op);
  void notifyShardingModified(Value *value);
  void notifyUsersModified(Value *value);
  void notifyTerminatorUse(OpOperand &use);

  Module &module_;
  Context &ctx_;
  const DriverConfig &config_;
  Operation *current_ = nullptr;
  std::vector<Operation *> worklist_;
  std::unordered_set<Operation *> in_worklist_;
  std::unordered_map<std::string_view, std::vector<Operation *>> callers_;
};

void Driver::buildCallers() {
  walk(module_.op(), [&](Operation &op) {
    if (!op.is("func.call"))
      return;
    const Attr *callee = op.attrs.get("callee");
    if (callee)
      callers_[module_.ctx().intern(callee->str())].push_back(&op);
  });
}

void Driver::push(Operation *op) {
  if (in_worklist_.insert(op).second)
    worklist_.push_back(op);
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
  buildCallers();
  Operation *main = mainFunc(module_);
  if (main)
    propagateFuncResults(*main);
  std::vector<Operation *> order;
  for (Operation &top : module_.body())
    if (top.is("func.func"))
      walk(top, [&](Operation &op) { order.push_back(&op); });
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    push(*it);
  while (!worklist_.empty()) {
    Operation *op = worklist_.back();
    worklist_.pop_back();
    in_worklist_.erase(op);
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
  auto it = name ? callers_.find(name->str()) : callers_.end();
  if (it == callers_.end() || it->second.empty()) {
    notifyOp(parent);
    return;
  }
  for (Operation *call : it->second)
    if (use.index < call->numResults())
      notifyUsersModified(call->result(use.index));
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
          use->index < func->region(0).front().numArguments())
        notifyUsersModified(func->region(0).front().argument(use->index));
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

TensorSide Driver::sideOf(const std::vector<Value *> &values) {
  TensorSide side;
  side.values = values;
  for (Value *v : values)
    side.shardings.push_back(valueSharding(v));
  side.set = [this, values](size_t i, const TensorSharding &s) {
    setValueSharding(values[i], s, ctx_);
  };
  return side;
}

bool Driver::applyUpdates(
    TensorSide &side, const std::vector<TensorFactorShardings> &rows,
    const std::vector<OpShardingRule::TensorMapping> &maps,
    const std::vector<bool> &flags, const OpShardingRule &rule,
    const MeshRef &ref, const Mesh &mesh, bool notify) {
  bool any = false;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (!flags[i])
      continue;
    TensorSharding fresh =
        unproject(rows[i], maps[i], rule.factor_sizes, ref, mesh);
    const TensorSharding *old = side.shardings[i];
    if ((!old && allDimsEmpty(fresh)) || (old && *old == fresh))
      continue;
    side.set(i, fresh);
    any = true;
    if (side.func_result)
      continue;
    Value *value = shardableValue(side.values[i]);
    if (!value)
      continue;
    if (notify)
      notifyShardingModified(value);
    const std::vector<Value *> *group =
        config_.groups ? config_.groups->groupOf(value) : nullptr;
    if (!group)
      continue;
    for (Value *member : *group) {
      if (member == value)
        continue;
      setValueSharding(member, fresh, ctx_);
      if (config_.observer)
        config_.observer->onGroupCopy(value, member, fresh);
      if (notify)
        notifyShardingModified(member);
    }
  }
  return any;
}

bool Driver::propagate(TensorSide &operands, TensorSide &results,
                       const OpShardingRule &rule, const FactorDirectionFn &dir,
                       Operation *op, bool conservative, bool notify,
                       StepKind kind, int64_t func_result) {
  const MeshRef *ref = nullptr;
  const Mesh *mesh = nullptr;
  for (const auto *side : {&operands.shardings, &results.shardings})
    for (const TensorSharding *s : *side) {
      if (!s)
        continue;
      const Mesh *other = lookupMesh(module_, s->mesh);
      if (!other)
        return false;
      if (!mesh || mesh->isEmpty()) {
        mesh = other;
        ref = &s->mesh;
      } else if (!other->isEmpty() && !(*other == *mesh)) {
        return false;
      }
    }
  if (!mesh || mesh->isMaximal())
    return false;
  MeshRef mesh_ref = *ref;
  ShardingProjection projection =
      buildProjection(operands.shardings, results.shardings, rule, *mesh);
  FactorDirectionFn local = [&](int64_t factor) {
    if (std::find(rule.blocked_propagation.begin(),
                  rule.blocked_propagation.end(),
                  factor) != rule.blocked_propagation.end())
      return PropagationDirection::None;
    return dir(factor);
  };
  FactorPropagationInput in{&local, &rule.factor_sizes, mesh, conservative,
                            op && isElementwise(*op)};
  std::optional<ShardingProjection> before;
  if (config_.observer)
    before = projection;
  TensorUpdates updates = propagateFactors(config_.strategy, projection, in);
  bool any = applyUpdates(operands, projection.operands, rule.operands,
                          updates.operands, rule, mesh_ref, *mesh, notify);
  any |= applyUpdates(results, projection.results, rule.results,
                      updates.results, rule, mesh_ref, *mesh, notify);
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
    TensorSide operands = sideOf({value});
    TensorSide results;
    results.values = {value};
    results.shardings = {getFuncResultSharding(func, i)};
    results.set = [&](size_t, const TensorSharding &s) {
      setFuncResultSharding(func, i, s, ctx_);
    };
    results.func_result = true;
    OpShardingRule rule = identityRule(value->type, 1);
    FactorDirectionFn both = [](int64_t) { return PropagationDirection::Both; };
    propagate(operands, results, rule, both, &func, false, false,
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
  TensorSide operands = sideOf({op.operand(0)});
  TensorSide results = sideOf({op.result(0)});
  PropagationDirection allowed =
      parseDirection(op.attrs.get("allowed_direction"));
  FactorDirectionFn dir = [allowed](int64_t) { return allowed; };
  propagate(operands, results, identityRule(op.result(0)->type, 1), dir, &op,
            false, true, StepKind::PropagationBarrier);
}

FactorDirectionFn boundDirection(const OpDirectionFn &fn, Operation &op) {
  return [&fn, &op](int64_t factor) { return fn(op, factor); };
}

void Driver::processEdge(Operation &edge) {
  Value *result = edge.result(0);
  if (!staticTensor(result->type))
    return;
  std::vector<Value *> sources = edgeSources(edge.operand(0));
  TensorSide operands = sideOf(sources);
  TensorSide results;
  results.values = {result};
  std::optional<TensorSharding> before;
  if (const TensorSharding *stored = getSharding(result))
    before = transformEdgeSharding(edge, *stored, true);
  results.shardings = {before ? &*before : nullptr};
  results.set = [&](size_t, const TensorSharding &s) {
    edge.attrs.set(ctx_.intern("sharding"),
                   ctx_.attrs.sharding(transformEdgeSharding(edge, s, false)));
  };
  propagate(operands, results, identityRule(result->type, sources.size()),
            boundDirection(config_.direction, edge), &edge, false, true,
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
    auto it = name ? callers_.find(name->str()) : callers_.end();
    if (it != callers_.end())
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
  TensorSide operands = sideOf(sources);
  TensorSide results = sideOf({result});
  propagate(operands, results, identityRule(result->type, sources.size()),
            boundDirection(config_.direction, edge), &edge, false, true,
            StepKind::FuncDataFlowEdge);
}

void Driver::processRegistered(Operation &op) {
  std::optional<OpShardingRule> rule = getOrCreateShardingRule(
      op, ctx_, config_.conservative, /*attach=*/true, config_.warnings);
  if (!rule)
    return;
  std::vector<Value *> operands, results;
  for (size_t i = 0; i < op.numOperands(); ++i)
    operands.push_back(op.operand(i));
  for (size_t i = 0; i < op.numResults(); ++i)
    results.push_back(op.result(i));
  if (rule->operands.size() != operands.size() ||
      rule->results.size() != results.size())
    return;
  TensorSide operand_side = sideOf(operands);
  TensorSide result_side = sideOf(results);
  propagate(operand_side, result_side, *rule,
            boundDirection(config_.direction, op), &op, config_.conservative,
            true, StepKind::Op);
}

} // namespace

void runDriver(Module &module, const DriverConfig &config) {
  Driver driver(module, config);
  driver.run();
}

} // namespace shardlab::prop
