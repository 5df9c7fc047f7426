// Shardy's debugging/source_sharding.cc on top of the propagation trace:
// seeding the user shardings, recording -sdy-apply-sharding-constraints
// steps, and writing the origin and edge attributes.
#include "propagation/debug_info.h"

#include "edges.h"
#include "trace_recorder.h"

#include "propagation/projection.h"
#include "rules/registry.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/format.h"
#include "shardlab/sharding/mesh.h"

#include <algorithm>
#include <cctype>

namespace shardlab {

namespace {

constexpr std::string_view kOriginsAttr = "sdy.sharding_origins";
constexpr std::string_view kOriginNameAttr = "sdy.sharding_origin_name";
constexpr std::string_view kEdgesAttr = "sdy.propagation_edges";

std::vector<TensorSharding> shardingsOf(const Operation &op,
                                        std::string_view name) {
  const Attr *attr = op.attrs.get(name);
  if (attr && attr->kind == AttrKind::ShardingPerValue)
    return attr->shardings();
  return {};
}

const TensorSharding *constraintSharding(const Operation &op) {
  const Attr *attr = op.attrs.get("sharding");
  return attr && attr->kind == AttrKind::Sharding ? &attr->sharding() : nullptr;
}

const Attr *makeDict(std::vector<NamedAttr> entries, Context &ctx) {
  std::sort(
      entries.begin(), entries.end(),
      [](const NamedAttr &a, const NamedAttr &b) { return a.name < b.name; });
  return ctx.attrs.make(Attr{AttrKind::Dict, std::move(entries), nullptr, {}});
}

// A dictionary with every entry equal to `name` replaced by "self".
const Attr *withSelf(const Attr *dict, const std::string &name, Context &ctx) {
  if (!dict || dict->kind != AttrKind::Dict)
    return nullptr;
  std::vector<NamedAttr> entries = dict->entries();
  const Attr *self = ctx.attrs.string("self");
  for (NamedAttr &entry : entries)
    if (entry.value && entry.value->kind == AttrKind::String &&
        entry.value->str() == name)
      entry.value = self;
  return ctx.attrs.make(Attr{AttrKind::Dict, std::move(entries), nullptr, {}});
}

void setOpOriginsToSelf(Operation *op, const std::string &name, Context &ctx) {
  if (!op)
    return;
  if (const Attr *dict = withSelf(op->attrs.get(kOriginsAttr), name, ctx))
    op->attrs.set(ctx.intern(kOriginsAttr), dict);
}

std::string stringAttr(const Operation &op, std::string_view name) {
  const Attr *attr = op.attrs.get(name);
  return attr && attr->kind == AttrKind::String ? attr->str() : std::string();
}

bool rowsEqual(const TensorFactorShardings &a, const TensorFactorShardings &b) {
  if (a.factors.size() != b.factors.size() || !(a.replicated == b.replicated) ||
      !(a.unreduced == b.unreduced) || a.unreduced_kind != b.unreduced_kind)
    return false;
  for (size_t i = 0; i < a.factors.size(); ++i) {
    const FactorSharding &x = a.factors[i], &y = b.factors[i];
    if (x.present != y.present || !(x.axes == y.axes) || x.closed != y.closed ||
        x.minor_most != y.minor_most || !(x.overflow == y.overflow))
      return false;
  }
  return true;
}

bool projectionsEqual(const ShardingProjection &a,
                      const ShardingProjection &b) {
  auto side = [](const std::vector<TensorFactorShardings> &x,
                 const std::vector<TensorFactorShardings> &y) {
    if (x.size() != y.size())
      return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!rowsEqual(x[i], y[i]))
        return false;
    return true;
  };
  return side(a.operands, b.operands) && side(a.results, b.results);
}

} // namespace

int64_t maximumPropagationStep(Module &module) {
  int64_t max_step = -1;
  walk(module.op(), [&](Operation &op) {
    const Attr *attr = op.attrs.get(kEdgesAttr);
    if (!attr)
      return;
    const std::string &text = attr->text;
    for (size_t pos = text.find("step-"); pos != std::string::npos;
         pos = text.find("step-", pos + 5)) {
      size_t begin = pos + 5, end = begin;
      while (end < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[end])))
        ++end;
      if (end > begin && end - begin < 18)
        max_step = std::max<int64_t>(
            max_step, std::stoll(text.substr(begin, end - begin)));
    }
  });
  return max_step;
}

ShardingDebugSession::ShardingDebugSession(Module &module, bool origins,
                                           bool edges)
    : module_(module), origins_(origins), edges_(edges) {
  Context &ctx = module.ctx();
  recorder_ = std::make_unique<prop::TraceRecorder>(
      trace_, maximumPropagationStep(module) + 1);

  auto seed = [&](const TensorSharding *sharding, Value *value,
                  const Origin &origin) {
    Value *slot_value = value ? prop::shardableValue(value) : nullptr;
    if (!sharding || !slot_value)
      return;
    for (const DimSharding &dim : sharding->dims)
      for (const AxisRef &axis : dim.axes)
        trace_.seeds.push_back({ShardingSlot{slot_value, nullptr, -1}, axis,
                                origin, dim.priority.value_or(0)});
  };

  // Sharding constraints, then manual computations, each numbered in walk
  // order across the whole module.
  int64_t source_id = 0;
  walkPostOrder(module.op(), [&](Operation &op) {
    if (!op.is("sdy.sharding_constraint") || op.numResults() != 1 ||
        op.numOperands() != 1)
      return;
    Origin origin{OriginKind::Constraint, 0, source_id};
    seed(constraintSharding(op), op.result(0), origin);
    if (origins_)
      op.attrs.set(ctx.intern(kOriginNameAttr),
                   ctx.attrs.string(originName(origin)));
    seed(prop::valueSharding(op.operand(0)), op.operand(0), origin);
    ++source_id;
  });
  source_id = 0;
  walkPostOrder(module.op(), [&](Operation &op) {
    if (!op.is("sdy.manual_computation") || !op.numRegions() ||
        op.region(0).empty())
      return;
    Block &body = op.region(0).front();
    std::vector<TensorSharding> in = shardingsOf(op, "in_shardings");
    for (size_t i = 0; i < in.size() && i < body.numArguments(); ++i) {
      Operation *edge = prop::dataFlowEdgeUser(body.argument(i));
      if (!edge)
        continue;
      Origin origin{OriginKind::ManualInput, static_cast<int64_t>(i),
                    source_id};
      seed(&in[i], edge->result(0), origin);
      if (i < op.numOperands())
        seed(prop::valueSharding(op.operand(i)), op.operand(i), origin);
    }
    std::vector<TensorSharding> out = shardingsOf(op, "out_shardings");
    for (size_t i = 0; i < out.size() && i < op.numResults(); ++i) {
      Operation *edge = prop::dataFlowEdgeUser(op.result(i));
      if (!edge)
        continue;
      seed(&out[i], edge->result(0),
           {OriginKind::ManualOutput, static_cast<int64_t>(i), source_id});
    }
    if (origins_)
      op.attrs.set(ctx.intern(kOriginNameAttr),
                   ctx.attrs.string("mc_" + std::to_string(source_id)));
    ++source_id;
  });

  // Func arguments and results last: a constraint or manual computation
  // already claimed the axes it gave them.
  for (Operation &func : module.body()) {
    if (!func.is("func.func") || !func.numRegions() || func.region(0).empty())
      continue;
    Block &body = func.region(0).front();
    for (size_t i = 0; i < body.numArguments(); ++i)
      seed(getSharding(body.argument(i)), body.argument(i),
           {OriginKind::Input, static_cast<int64_t>(i), 0});
    Operation *ret = prop::funcReturnOp(func);
    for (size_t i = 0; ret && i < ret->numOperands(); ++i) {
      const TensorSharding *sharding = getFuncResultSharding(func, i);
      if (!sharding)
        continue;
      Origin origin{OriginKind::Output, static_cast<int64_t>(i), 0};
      for (const DimSharding &dim : sharding->dims)
        for (const AxisRef &axis : dim.axes)
          trace_.seeds.push_back(
              {ShardingSlot{nullptr, &func, static_cast<int64_t>(i)}, axis,
               origin, dim.priority.value_or(0)});
    }
  }
}

ShardingDebugSession::~ShardingDebugSession() = default;

prop::StepObserver &ShardingDebugSession::observer() { return *recorder_; }

void ShardingDebugSession::recordConstraint(
    Operation &constraint, const std::function<void()> &apply) {
  Context &ctx = module_.ctx();
  std::optional<OpShardingRule> rule =
      getOrCreateShardingRule(constraint, ctx, false, /*attach=*/false);
  if (!rule || rule->operands.size() != constraint.numOperands() ||
      rule->results.size() != constraint.numResults()) {
    apply();
    return;
  }
  std::vector<Value *> operands, results;
  for (size_t i = 0; i < constraint.numOperands(); ++i)
    operands.push_back(constraint.operand(i));
  for (size_t i = 0; i < constraint.numResults(); ++i)
    results.push_back(constraint.result(i));
  auto shardings = [](const std::vector<Value *> &values) {
    std::vector<const TensorSharding *> out;
    for (Value *v : values)
      out.push_back(prop::valueSharding(v));
    return out;
  };
  std::vector<const TensorSharding *> operand_shardings = shardings(operands);
  std::vector<const TensorSharding *> result_shardings = shardings(results);
  std::vector<const Mesh *> meshes;
  for (const auto *side : {&operand_shardings, &result_shardings})
    for (const TensorSharding *s : *side)
      if (s)
        meshes.push_back(lookupMesh(module_, s->mesh));
  const Mesh *mesh = commonMesh(meshes);
  if (!mesh ||
      std::find(meshes.begin(), meshes.end(), nullptr) != meshes.end()) {
    apply();
    return;
  }
  ShardingProjection before =
      buildProjection(operand_shardings, result_shardings, *rule, *mesh);
  apply();
  ShardingProjection after =
      buildProjection(shardings(operands), shardings(results), *rule, *mesh);
  if (projectionsEqual(before, after))
    return;
  prop::StepEvent event;
  event.kind = StepKind::ShardingConstraint;
  event.op = &constraint;
  event.operands = &operands;
  event.results = &results;
  event.rule = &*rule;
  event.mesh = mesh;
  event.before = &before;
  event.after = &after;
  recorder_->onStep(event);
}

void ShardingDebugSession::save() {
  Context &ctx = module_.ctx();
  if (origins_) {
    for (const ValueOrigins &vo : shardingOrigins(trace_)) {
      Value *value = vo.value;
      Operation *owner = prop::owningOp(value);
      if (!owner)
        continue;
      std::vector<NamedAttr> entries;
      for (const auto &[axis, origin] : vo.axes) {
        std::string key = axisRefToString(axis);
        key.erase(std::remove(key.begin(), key.end(), '"'), key.end());
        entries.push_back(
            {ctx.intern(key), ctx.attrs.string(originName(origin))});
      }
      const Attr *dict = makeDict(std::move(entries), ctx);
      Operation *func = owner;
      while (func && !func->is("func.func"))
        func = func->parentOp();
      if (Operation *ret = func ? prop::funcReturnOp(*func) : nullptr)
        for (OpOperand *use = value->firstUse(); use; use = use->next_use)
          if (use->owner == ret) {
            setFuncResultAttr(*func, use->index(), kOriginsAttr, dict, ctx);
            break;
          }
      if (owner->is("func.func")) {
        if (value->isBlockArgument())
          setFuncArgAttr(*owner, value->index, kOriginsAttr, dict, ctx);
      } else if (owner->is("sdy.sharding_constraint") ||
                 owner->is("sdy.data_flow_edge")) {
        owner->attrs.set(ctx.intern(kOriginsAttr), dict);
      } else if (!value->isBlockArgument()) {
        std::vector<const Attr *> dicts;
        if (const Attr *old = owner->attrs.get(kOriginsAttr);
            old && old->kind == AttrKind::Array)
          dicts = old->elements();
        const Attr *empty = makeDict({}, ctx);
        if (dicts.size() < owner->numResults())
          dicts.resize(owner->numResults(), empty);
        if (value->index < dicts.size())
          dicts[value->index] = dict;
        owner->attrs.set(ctx.intern(kOriginsAttr),
                         ctx.attrs.array(std::move(dicts)));
      }
    }
    // Axes a constraint, func argument/result or manual computation had
    // from the start come from "self".
    walk(module_.op(), [&](Operation &op) {
      if (op.is("sdy.sharding_constraint"))
        setOpOriginsToSelf(&op, stringAttr(op, kOriginNameAttr), ctx);
    });
    for (Operation &func : module_.body()) {
      if (!func.is("func.func"))
        continue;
      for (size_t i = 0; i < funcNumInputs(func); ++i)
        if (const Attr *dict = withSelf(
                getFuncArgAttr(func, i, kOriginsAttr),
                originName({OriginKind::Input, static_cast<int64_t>(i), 0}),
                ctx))
          setFuncArgAttr(func, i, kOriginsAttr, dict, ctx);
      for (size_t i = 0; i < funcNumResults(func); ++i)
        if (const Attr *dict = withSelf(
                getFuncResultAttr(func, i, kOriginsAttr),
                originName({OriginKind::Output, static_cast<int64_t>(i), 0}),
                ctx))
          setFuncResultAttr(func, i, kOriginsAttr, dict, ctx);
    }
    walk(module_.op(), [&](Operation &op) {
      if (!op.is("sdy.manual_computation") || !op.numRegions() ||
          op.region(0).empty())
        return;
      std::string name = stringAttr(op, kOriginNameAttr);
      Block &body = op.region(0).front();
      for (size_t i = 0; i < body.numArguments(); ++i)
        setOpOriginsToSelf(prop::dataFlowEdgeUser(body.argument(i)),
                           name + "_input: " + std::to_string(i), ctx);
      for (size_t i = 0; i < op.numResults(); ++i)
        setOpOriginsToSelf(prop::dataFlowEdgeUser(op.result(i)),
                           name + "_output: " + std::to_string(i), ctx);
    });
  }
  if (edges_) {
    for (const OpEdges &op_edges : propagationEdges(trace_)) {
      std::string text = propagationEdgesText(op_edges.axes);
      if (text.empty())
        continue;
      const Attr *attr = ctx.attrs.opaque(text);
      if (op_edges.func_result >= 0)
        setFuncResultAttr(*op_edges.op,
                          static_cast<size_t>(op_edges.func_result), kEdgesAttr,
                          attr, ctx);
      else if (!op_edges.op->is("func.func"))
        op_edges.op->attrs.set(ctx.intern(kEdgesAttr), attr);
    }
  }
}

void sinkEdgeDebugInfo(Operation &op, const std::vector<Value *> &owners,
                       bool block_args, bool origins, bool edges,
                       Context &ctx) {
  if (!origins && !edges)
    return;
  std::vector<const Attr *> origin_dicts, edge_attrs;
  for (Value *owner : owners) {
    Operation *edge = prop::dataFlowEdgeUser(owner);
    if (!edge)
      continue;
    if (origins)
      if (const Attr *dict = edge->attrs.get(kOriginsAttr);
          dict && dict->kind == AttrKind::Dict)
        origin_dicts.push_back(dict);
    if (edges)
      if (const Attr *attr = edge->attrs.get(kEdgesAttr);
          attr && attr->text.find("step-") != std::string::npos)
        edge_attrs.push_back(attr);
  }
  if (origins)
    op.attrs.set(ctx.intern(block_args ? "sdy.block_arg_sharding_origins"
                                       : "sdy.result_sharding_origins"),
                 ctx.attrs.array(std::move(origin_dicts)));
  if (edges)
    op.attrs.set(ctx.intern(block_args ? "sdy.block_arg_propagation_edges"
                                       : "sdy.result_propagation_edges"),
                 ctx.attrs.array(std::move(edge_attrs)));
}

} // namespace shardlab
