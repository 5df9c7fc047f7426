// The propagation trace as JSON, for the playground.
//
// {
//   "first_step": 0,
//   "seeds":  [{"slot": SLOT, "axis": "a", "origin": "input: 0",
//               "priority": 0}],
//   "steps":  [{"step": 3, "kind": "op", "op": OP,
//               "user_priority": -1, "op_priority_level": 2,
//               "strategy": "aggressive",
//               "operands": [SLOT], "results": [SLOT],
//               "decisions": [{"axis": "a", "factor": 0, "factor_name": "i",
//                              "target": "result-0", "source": "operand-1"}],
//               "group_copies": [{"from": SLOT, "to": SLOT, "axes": ["a"]}]}],
//   "values": [{"slot": SLOT, "axes": [AXIS]}],
//   "origins": [{"slot": SLOT, "axes": {"a": "input: 0"}}]
// }
// SLOT: {"func": "main", "value": "%0"} or {"func": "main", "result": 0}.
// OP: {"name": "stablehlo.add", "line": 5, "column": 8, "func": "main",
//      "results": ["%0"]}.
// AXIS: {"axis": "a", "user_given": true, "origin": "input: 0" | null,
//        "priority": 0} for an axis a user wrote, else
//       {"axis": "a", "user_given": false, "origin": ..., "step": 3,
//        "kind": "op", "op": OP, "factor": 0, "factor_name": "i",
//        "from": SLOT, "user_priority": -1, "op_priority_level": 2,
//        "strategy": "aggressive", "via": "propagation" | "sharding_group"}.
// Axes are spelled without quotes ("a", "c:(1)4").
#include "propagation/trace.h"

#include "edges.h"

#include "shardlab/sharding/format.h"
#include "shardlab/text/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_map>

namespace shardlab {

namespace {

using nlohmann::json;

std::string axisName(const AxisRef &axis) {
  std::string text = axisRefToString(axis);
  text.erase(std::remove(text.begin(), text.end(), '"'), text.end());
  return text;
}

std::string funcName(Operation *op) {
  while (op && !op->is("func.func"))
    op = op->parentOp();
  if (!op)
    return "";
  const Attr *name = op->attrs.get("sym_name");
  return name && name->kind == AttrKind::String ? name->str() : "";
}

class JsonWriter {
public:
  explicit JsonWriter(Module &module) : names_(printedValueNames(module)) {}

  json slot(const ShardingSlot &s) {
    json out = json::object();
    if (s.isFuncResult()) {
      out["func"] = funcName(s.func);
      out["result"] = s.result;
    } else if (s.value) {
      out["func"] = funcName(prop::owningOp(s.value));
      out["value"] = name(s.value);
    }
    return out;
  }

  json op(Operation *op) {
    json out = json::object();
    if (!op)
      return out;
    out["name"] = std::string(op->name);
    out["line"] = op->loc.line;
    out["column"] = op->loc.col;
    out["func"] = funcName(op);
    json results = json::array();
    for (size_t i = 0; i < op->numResults(); ++i)
      results.push_back(name(op->result(i)));
    out["results"] = results;
    return out;
  }

  void position(json &out, const LayerPosition &p) {
    out["user_priority"] = p.user_priority;
    out["op_priority_level"] = p.op_priority_level;
    out["strategy"] = strategyName(p.strategy);
  }

private:
  std::string name(Value *value) {
    auto it = names_.find(value);
    return it == names_.end() ? std::string() : it->second;
  }
  std::unordered_map<const Value *, std::string> names_;
};

} // namespace

json traceToJson(const PropagationTrace &trace, Module &module) {
  JsonWriter w(module);
  json out = json::object();
  out["first_step"] = trace.steps.empty() ? 0 : trace.steps.front().index;

  json seeds = json::array();
  for (const TraceSeed &seed : trace.seeds)
    seeds.push_back({{"slot", w.slot(seed.slot)},
                     {"axis", axisName(seed.axis)},
                     {"origin", originName(seed.origin)},
                     {"priority", seed.priority}});
  out["seeds"] = seeds;

  json steps = json::array();
  for (const TraceStep &step : trace.steps) {
    json s = {{"step", step.index},
              {"kind", stepKindName(step.kind)},
              {"op", w.op(step.op)}};
    w.position(s, step.position);
    json operands = json::array(), results = json::array();
    for (const ShardingSlot &slot : step.operands)
      operands.push_back(w.slot(slot));
    for (const ShardingSlot &slot : step.results)
      results.push_back(w.slot(slot));
    s["operands"] = operands;
    s["results"] = results;
    json decisions = json::array();
    for (const AxisDecision &d : step.decisions)
      decisions.push_back({{"axis", axisName(d.axis)},
                           {"factor", d.factor},
                           {"factor_name", factorSymbol(d.factor)},
                           {"target", edgeNodeName(d.target)},
                           {"source", edgeNodeName(d.source)}});
    s["decisions"] = decisions;
    json copies = json::array();
    for (const GroupCopy &copy : step.group_copies) {
      json axes = json::array();
      for (const AxisRef &axis : copy.axes)
        axes.push_back(axisName(axis));
      copies.push_back({{"from", w.slot(copy.from)},
                        {"to", w.slot(copy.to)},
                        {"axes", axes}});
    }
    s["group_copies"] = copies;
    steps.push_back(s);
  }
  out["steps"] = steps;

  json values = json::array();
  for (const SlotExplanation &e : explainShardings(trace)) {
    json axes = json::array();
    for (const AxisExplanation &a : e.axes) {
      json x = {{"axis", axisName(a.axis)}};
      x["origin"] = a.origin ? json(originName(*a.origin)) : json(nullptr);
      const TraceStep *step = a.step ? a.step : a.group_step;
      x["user_given"] = step == nullptr;
      if (!step) {
        x["priority"] = a.priority;
        axes.push_back(x);
        continue;
      }
      x["step"] = step->index;
      x["kind"] = stepKindName(step->kind);
      x["op"] = w.op(step->op);
      w.position(x, step->position);
      if (a.decision) {
        x["via"] = "propagation";
        x["factor"] = a.decision->factor;
        x["factor_name"] = factorSymbol(a.decision->factor);
        x["from"] = w.slot(step->slot(a.decision->source));
      } else {
        x["via"] = "sharding_group";
        x["from"] = w.slot(a.group_copy->from);
      }
      axes.push_back(x);
    }
    values.push_back({{"slot", w.slot(e.slot)}, {"axes", axes}});
  }
  out["values"] = values;

  json origins = json::array();
  for (const ValueOrigins &vo : shardingOrigins(trace)) {
    json axes = json::object();
    for (const auto &[axis, origin] : vo.axes)
      axes[axisName(axis)] = originName(origin);
    ShardingSlot slot;
    slot.value = vo.value;
    origins.push_back({{"slot", w.slot(slot)}, {"axes", axes}});
  }
  out["origins"] = origins;
  return out;
}

} // namespace shardlab
