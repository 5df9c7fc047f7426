// The propagation trace: recording steps (Shardy's createSourceMap over the
// projections before and after a step) and the views derived from it.
#include "propagation/trace.h"

#include "edges.h"
#include "trace_recorder.h"

#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace shardlab {

std::string edgeNodeName(const EdgeNode &node) {
  return (node.type == EdgeNodeType::Operand ? "operand-" : "result-") +
         std::to_string(node.index);
}

std::string stepKindName(StepKind kind) {
  switch (kind) {
  case StepKind::Op:
    return "op";
  case StepKind::DataFlowEdge:
    return "data_flow_edge";
  case StepKind::FuncDataFlowEdge:
    return "func_data_flow_edge";
  case StepKind::PropagationBarrier:
    return "propagation_barrier";
  case StepKind::FuncResult:
    return "func_result";
  case StepKind::ShardingConstraint:
    return "sharding_constraint";
  }
  return "op";
}

std::string strategyName(FactorStrategy strategy) {
  return strategy == FactorStrategy::Basic ? "basic" : "aggressive";
}

std::string originName(const Origin &origin) {
  std::string mc = "mc_" + std::to_string(origin.source_id);
  switch (origin.kind) {
  case OriginKind::Input:
    return "input: " + std::to_string(origin.index);
  case OriginKind::Output:
    return "output: " + std::to_string(origin.index);
  case OriginKind::Constraint:
    return "constraint_" + std::to_string(origin.source_id);
  case OriginKind::ManualInput:
    return mc + "_input: " + std::to_string(origin.index);
  case OriginKind::ManualOutput:
    return mc + "_output: " + std::to_string(origin.index);
  }
  return "";
}

namespace prop {

namespace {

// Axis -> decision of one tensor, in insertion order (Shardy keeps a map per
// tensor, with try_emplace and erase).
struct TensorDecisions {
  std::vector<AxisDecision> list;

  void tryEmplace(const AxisDecision &decision) {
    for (const AxisDecision &d : list)
      if (d.axis == decision.axis)
        return;
    list.push_back(decision);
  }
  void erase(const AxisRef &axis) {
    list.erase(
        std::remove_if(list.begin(), list.end(),
                       [&](const AxisDecision &d) { return d.axis == axis; }),
        list.end());
  }
};

// The first tensor whose old axes for `factor` start with `axes`.
std::optional<int64_t>
findSource(const std::vector<AxisRef> &axes, int64_t factor,
           const std::vector<TensorFactorShardings> &tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const FactorSharding *f = tensors[i].find(factor);
    if (f && axisListPrefixStatus(axes, f->axes) != PrefixStatus::NotAPrefix)
      return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

// Shardy's saveEdges: only the last old axis (a sub-axis may have grown)
// and the axes after the old ones are new.
void saveEdges(const std::vector<AxisRef> &fresh,
               const std::vector<AxisRef> &old, EdgeNode source,
               EdgeNode target, int64_t factor, TensorDecisions &out) {
  if (!old.empty() && old.size() <= fresh.size() &&
      !(old.back() == fresh[old.size() - 1]))
    out.tryEmplace({target, source, factor, fresh[old.size() - 1]});
  for (size_t i = old.size(); i < fresh.size(); ++i)
    out.tryEmplace({target, source, factor, fresh[i]});
}

void visitTensor(const TensorFactorShardings &old_row,
                 const TensorFactorShardings &new_row,
                 const OpShardingRule::TensorMapping &mapping, EdgeNode target,
                 const ShardingProjection &before, const Mesh &mesh,
                 TensorDecisions &out) {
  for (const OpShardingRule::DimMapping &dim : mapping) {
    std::optional<AxisRef> previous;
    for (int64_t factor : dim) {
      if (factor < 0 || static_cast<size_t>(factor) >= old_row.factors.size() ||
          static_cast<size_t>(factor) >= new_row.factors.size())
        continue;
      const FactorSharding &old_f = old_row.factors[factor];
      const FactorSharding &new_f = new_row.factors[factor];
      if (old_f.axes == new_f.axes || new_f.axes.empty())
        continue;
      AxisRef last = new_f.axes.back();
      if (previous && canMerge(*previous, last)) {
        out.erase(*previous);
        last = merge(*previous, last, mesh);
      }
      previous = new_f.axes.back();
      std::vector<AxisRef> fresh = new_f.axes;
      fresh.back() = last;
      if (auto i = findSource(new_f.axes, factor, before.operands))
        saveEdges(fresh, old_f.axes, {EdgeNodeType::Operand, *i}, target,
                  factor, out);
      else if (auto j = findSource(new_f.axes, factor, before.results))
        saveEdges(fresh, old_f.axes, {EdgeNodeType::Result, *j}, target, factor,
                  out);
    }
  }
}

} // namespace

std::vector<AxisDecision> diffProjections(const ShardingProjection &before,
                                          const ShardingProjection &after,
                                          const OpShardingRule &rule,
                                          const Mesh &mesh) {
  std::vector<AxisDecision> decisions;
  auto side = [&](const std::vector<TensorFactorShardings> &old_rows,
                  const std::vector<TensorFactorShardings> &new_rows,
                  const std::vector<OpShardingRule::TensorMapping> &maps,
                  EdgeNodeType type) {
    for (size_t i = 0;
         i < old_rows.size() && i < new_rows.size() && i < maps.size(); ++i) {
      TensorDecisions tensor;
      visitTensor(old_rows[i], new_rows[i], maps[i],
                  {type, static_cast<int64_t>(i)}, before, mesh, tensor);
      decisions.insert(decisions.end(), tensor.list.begin(), tensor.list.end());
    }
  };
  side(before.operands, after.operands, rule.operands, EdgeNodeType::Operand);
  side(before.results, after.results, rule.results, EdgeNodeType::Result);
  return decisions;
}

namespace {

ShardingSlot valueSlot(Value *value) {
  ShardingSlot slot;
  slot.value = shardableValue(value);
  return slot;
}

std::vector<AxisRef> dimAxes(const TensorSharding &sharding) {
  std::vector<AxisRef> axes;
  for (const DimSharding &dim : sharding.dims)
    axes.insert(axes.end(), dim.axes.begin(), dim.axes.end());
  return axes;
}

} // namespace

void TraceRecorder::onStep(const StepEvent &event) {
  TraceStep step;
  step.index = next_step_++;
  step.kind = event.kind;
  step.op = event.op;
  step.position = position;
  for (Value *v : *event.operands)
    step.operands.push_back(valueSlot(v));
  if (event.kind == StepKind::FuncResult) {
    ShardingSlot slot;
    slot.func = event.op;
    slot.result = event.func_result;
    step.results.push_back(slot);
  } else {
    for (Value *v : *event.results)
      step.results.push_back(valueSlot(v));
  }
  step.decisions =
      diffProjections(*event.before, *event.after, *event.rule, *event.mesh);
  step.group_copies = std::move(pending_copies_);
  pending_copies_.clear();
  trace_.steps.push_back(std::move(step));
}

void TraceRecorder::onGroupCopy(Value *from, Value *to,
                                const TensorSharding &sharding) {
  pending_copies_.push_back(
      {valueSlot(from), valueSlot(to), dimAxes(sharding)});
}

} // namespace prop

// ------------------------------------------------------------------ views

namespace {

struct SlotHash {
  size_t operator()(const ShardingSlot &s) const {
    return std::hash<const void *>()(s.value) * 31 +
           std::hash<const void *>()(s.func) * 7 +
           std::hash<int64_t>()(s.result);
  }
};

// Shardy's lookUpValueOriginSharding: the axis itself, else the first axis
// containing it or contained in it (a reshape split or merged it).
template <typename List, typename Get>
const typename List::value_type *findAxis(const List &list, const AxisRef &axis,
                                          Get get) {
  for (const auto &entry : list)
    if (get(entry) == axis)
      return &entry;
  for (const auto &entry : list)
    if (contains(get(entry), axis) || contains(axis, get(entry)))
      return &entry;
  return nullptr;
}

} // namespace

Value *debugValue(const ShardingSlot &slot) {
  if (!slot.isFuncResult())
    return slot.value;
  Operation *ret = prop::funcReturnOp(*slot.func);
  if (!ret || slot.result < 0 ||
      static_cast<size_t>(slot.result) >= ret->numOperands())
    return nullptr;
  return prop::shardableValue(ret->operand(slot.result));
}

std::vector<ValueOrigins> shardingOrigins(const PropagationTrace &trace) {
  std::vector<ValueOrigins> out;
  std::unordered_map<Value *, size_t> index;
  auto entryOf = [&](Value *value) -> ValueOrigins & {
    auto [it, inserted] = index.emplace(value, out.size());
    if (inserted)
      out.push_back({value, {}});
    return out[it->second];
  };
  auto tryEmplace = [&](Value *value, const AxisRef &axis,
                        const Origin &origin) {
    ValueOrigins &entry = entryOf(value);
    for (const auto &[a, o] : entry.axes)
      if (a == axis)
        return;
    entry.axes.emplace_back(axis, origin);
  };
  for (const TraceSeed &seed : trace.seeds)
    if (Value *value = debugValue(seed.slot))
      tryEmplace(value, seed.axis, seed.origin);
  for (const TraceStep &step : trace.steps)
    for (const AxisDecision &d : step.decisions) {
      Value *target = debugValue(step.slot(d.target));
      Value *source = debugValue(step.slot(d.source));
      if (!target || !source)
        continue;
      auto it = index.find(source);
      if (it == index.end())
        continue;
      const auto *found =
          findAxis(out[it->second].axes, d.axis,
                   [](const std::pair<AxisRef, Origin> &e) { return e.first; });
      if (!found)
        continue;
      Origin origin = found->second;
      tryEmplace(target, d.axis, origin);
    }
  return out;
}

std::vector<OpEdges> propagationEdges(const PropagationTrace &trace) {
  std::vector<OpEdges> out;
  std::map<std::pair<Operation *, int64_t>, size_t> index;
  for (const TraceStep &step : trace.steps) {
    for (const AxisDecision &d : step.decisions) {
      // Shardy files a func-result step under the step's tensor index,
      // which is always 0.
      int64_t func_result =
          step.kind == StepKind::FuncResult ? d.target.index : -1;
      auto key = std::make_pair(step.op, func_result);
      auto [it, inserted] = index.emplace(key, out.size());
      if (inserted)
        out.push_back({step.op, func_result, {}});
      OpEdges &edges = out[it->second];
      auto axis_it =
          std::find_if(edges.axes.begin(), edges.axes.end(),
                       [&](const AxisEdges &a) { return a.axis == d.axis; });
      if (axis_it == edges.axes.end()) {
        edges.axes.push_back({d.axis, {}});
        axis_it = edges.axes.end() - 1;
      }
      axis_it->edges.push_back({d.source, d.target, step.index});
    }
  }
  return out;
}

namespace {

bool nodeLess(const EdgeNode &a, const EdgeNode &b) {
  if (a.type != b.type)
    return a.type < b.type;
  return a.index < b.index;
}

} // namespace

std::string propagationEdgesText(const std::vector<AxisEdges> &axes) {
  // Shardy's createPropagationEdges: per (axis, source, target) the edge
  // of the smallest step, regrouped by step; targets sorted, axes sorted
  // by AxisRefAttr order within a step, steps ascending.
  struct Entry {
    AxisRef axis;
    EdgeNode source;
    std::vector<EdgeNode> targets;
  };
  std::map<int64_t, std::vector<Entry>> per_step;
  for (const AxisEdges &axis_edges : axes) {
    struct Min {
      EdgeNode source, target;
      int64_t step;
    };
    std::vector<Min> mins;
    for (const PropagationEdge &edge : axis_edges.edges) {
      auto it = std::find_if(mins.begin(), mins.end(), [&](const Min &m) {
        return m.source == edge.source && m.target == edge.target;
      });
      if (it == mins.end())
        mins.push_back({edge.source, edge.target, edge.step});
      else if (edge.step < it->step)
        it->step = edge.step;
    }
    for (const Min &m : mins) {
      std::vector<Entry> &entries = per_step[m.step];
      auto it =
          std::find_if(entries.begin(), entries.end(), [&](const Entry &e) {
            return e.axis == axis_edges.axis && e.source == m.source;
          });
      if (it == entries.end()) {
        entries.push_back({axis_edges.axis, m.source, {}});
        it = entries.end() - 1;
      }
      if (std::find(it->targets.begin(), it->targets.end(), m.target) ==
          it->targets.end())
        it->targets.push_back(m.target);
    }
  }
  if (per_step.empty())
    return "";
  std::string text = "#sdy.propagation_edges<[";
  bool first_step = true;
  for (auto &[step, entries] : per_step) {
    for (Entry &e : entries)
      std::sort(e.targets.begin(), e.targets.end(), nodeLess);
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry &a, const Entry &b) {
                       if (axisRefLess(a.axis, b.axis))
                         return true;
                       if (axisRefLess(b.axis, a.axis))
                         return false;
                       return nodeLess(a.source, b.source);
                     });
    text += first_step ? "" : ", ";
    first_step = false;
    text += "{step-" + std::to_string(step) + " = [";
    for (size_t i = 0; i < entries.size(); ++i) {
      text += i ? ", {" : "{";
      text += axisRefToString(entries[i].axis) + " = " +
              edgeNodeName(entries[i].source) + " -> [";
      for (size_t t = 0; t < entries[i].targets.size(); ++t)
        text += (t ? ", " : "") + edgeNodeName(entries[i].targets[t]);
      text += "]}";
    }
    text += "]}";
  }
  text += "]>";
  return text;
}

std::vector<SlotExplanation> explainShardings(const PropagationTrace &trace) {
  std::vector<SlotExplanation> out;
  std::unordered_map<ShardingSlot, size_t, SlotHash> index;
  auto entryOf = [&](const ShardingSlot &slot) -> SlotExplanation & {
    auto [it, inserted] = index.emplace(slot, out.size());
    if (inserted)
      out.push_back({slot, {}});
    return out[it->second];
  };
  auto has = [](const SlotExplanation &e, const AxisRef &axis) {
    for (const AxisExplanation &a : e.axes)
      if (a.axis == axis)
        return true;
    return false;
  };
  auto originOf = [&](const ShardingSlot &slot,
                      const AxisRef &axis) -> std::optional<Origin> {
    auto it = index.find(slot);
    if (it == index.end())
      return std::nullopt;
    const AxisExplanation *found =
        findAxis(out[it->second].axes, axis,
                 [](const AxisExplanation &e) { return e.axis; });
    return found ? found->origin : std::nullopt;
  };
  for (const TraceSeed &seed : trace.seeds) {
    SlotExplanation &entry = entryOf(seed.slot);
    if (has(entry, seed.axis))
      continue;
    AxisExplanation a;
    a.axis = seed.axis;
    a.origin = seed.origin;
    a.priority = seed.priority;
    entry.axes.push_back(a);
  }
  for (const TraceStep &step : trace.steps) {
    for (const AxisDecision &d : step.decisions) {
      std::optional<Origin> origin = originOf(step.slot(d.source), d.axis);
      SlotExplanation &entry = entryOf(step.slot(d.target));
      if (has(entry, d.axis))
        continue;
      AxisExplanation a;
      a.axis = d.axis;
      a.step = &step;
      a.decision = &d;
      a.origin = origin;
      entry.axes.push_back(a);
    }
    for (const GroupCopy &copy : step.group_copies)
      for (const AxisRef &axis : copy.axes) {
        std::optional<Origin> origin = originOf(copy.from, axis);
        SlotExplanation &entry = entryOf(copy.to);
        if (has(entry, axis))
          continue;
        AxisExplanation a;
        a.axis = axis;
        a.group_copy = &copy;
        a.group_step = &step;
        a.origin = origin;
        entry.axes.push_back(a);
      }
  }
  return out;
}

} // namespace shardlab
