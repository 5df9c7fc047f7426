// The playground's teaching views: the factor table of an op (Shardy's
// sharding projection before and after propagation), the device layout of
// a value (which shard each device holds, local shapes) and a per-op
// trace of what propagation added.
#include "shardlab/api/playground_api.h"

#include "guard.h"
#include "playground_internal.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_utils.h"
#include "shardlab/propagation/projection.h"
#include "shardlab/rules/registry.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"
#include "shardlab/sharding/sharding_utils.h"

#include <algorithm>
#include <optional>

namespace shardlab::api {
namespace {

using detail::dumpReply;
using detail::guarded;
using detail::json;
using detail::OptionReader;

// ---- Factor tables

std::vector<const TensorSharding *> operandShardings(Operation &op) {
  std::vector<const TensorSharding *> out;
  for (size_t i = 0; i < op.numOperands(); ++i)
    out.push_back(getSharding(op.operand(i)));
  return out;
}

std::vector<const TensorSharding *> resultShardings(Operation &op) {
  std::vector<const TensorSharding *> out;
  for (size_t i = 0; i < op.numResults(); ++i)
    out.push_back(getSharding(op.result(i)));
  return out;
}

/// The mesh of the first sharding among the op's operands and results.
const Mesh *opMesh(Module &module, Operation &op) {
  for (const TensorSharding *s : operandShardings(op))
    if (const Mesh *mesh = s ? meshOf(module, *s) : nullptr)
      return mesh;
  for (const TensorSharding *s : resultShardings(op))
    if (const Mesh *mesh = s ? meshOf(module, *s) : nullptr)
      return mesh;
  return nullptr;
}

std::string factorKind(const OpShardingRule &rule, int64_t factor) {
  auto has = [&](const std::vector<int64_t> &list) {
    return std::find(list.begin(), list.end(), factor) != list.end();
  };
  if (has(rule.reduction))
    return "reduction";
  if (has(rule.need_replication))
    return "need-replication";
  if (has(rule.permutation))
    return "permutation";
  if (has(rule.blocked_propagation))
    return "blocked";
  return "pass-through";
}

json rowStateJson(const TensorFactorShardings &row,
                  const TensorSharding *sharding) {
  json factors = json::array();
  for (const FactorSharding &f : row.factors)
    factors.push_back({{"axes", detail::axesJson(f.axes)},
                       {"present", f.present},
                       {"closed", f.closed},
                       {"overflow", detail::axesJson(f.overflow)}});
  return {{"factors", factors},
          {"replicated", detail::axesJson(row.replicated)},
          {"unreduced", detail::axesJson(row.unreduced)},
          {"sharding", sharding ? shardingToString(*sharding) : ""}};
}

ShardingProjection projectOp(Operation &op, const OpShardingRule &rule,
                             const Mesh &mesh) {
  return buildProjection(operandShardings(op), resultShardings(op), rule, mesh);
}

bool ruleFits(Operation &op, const OpShardingRule &rule) {
  return rule.operands.size() == op.numOperands() &&
         rule.results.size() == op.numResults();
}

json factorsHeader(const OpShardingRule &rule) {
  json factors = json::array();
  for (size_t f = 0; f < rule.factor_sizes.size(); ++f)
    factors.push_back({{"index", f},
                       {"symbol", factorSymbol(int64_t(f))},
                       {"size", rule.factor_sizes[f]},
                       {"kind", factorKind(rule, int64_t(f))}});
  return factors;
}

json factorRows(Operation &before, Operation &after, const OpShardingRule &rule,
                const Mesh &mesh) {
  ShardingProjection was = projectOp(before, rule, mesh);
  ShardingProjection now = projectOp(after, rule, mesh);
  auto was_shardings = operandShardings(before),
       now_shardings = operandShardings(after);
  json rows = json::array();
  for (size_t i = 0; i < rule.operands.size(); ++i)
    rows.push_back(
        {{"tensor", "operand " + std::to_string(i)},
         {"dims", rule.operands[i]},
         {"before", rowStateJson(was.operands[i], was_shardings[i])},
         {"after", rowStateJson(now.operands[i], now_shardings[i])}});
  was_shardings = resultShardings(before);
  now_shardings = resultShardings(after);
  for (size_t i = 0; i < rule.results.size(); ++i)
    rows.push_back({{"tensor", "result " + std::to_string(i)},
                    {"dims", rule.results[i]},
                    {"before", rowStateJson(was.results[i], was_shardings[i])},
                    {"after", rowStateJson(now.results[i], now_shardings[i])}});
  return rows;
}

std::string opFactorsReply(std::string_view text,
                           std::string_view options_json) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return detail::errorReply("options: expected a JSON object");
  OptionReader reader(options);
  detail::Position position;
  if (!detail::positionOption(reader, position))
    return detail::errorReply(reader.error());
  detail::BeforeAfter both = detail::parseBoth(text, reader);
  if (!both.after)
    return dumpReply(detail::failureReply(both.error, both.diagnostics));
  Operation *before = detail::findOp(*both.before, position);
  Operation *after = before ? detail::sameOp(*both.after, *before) : nullptr;
  if (!before || !after)
    return detail::errorReply("no op at line " + std::to_string(position.line));
  json reply = {{"ok", false},
                {"op", std::string(before->name)},
                {"line", before->loc.line},
                {"column", before->loc.col}};
  std::optional<OpShardingRule> rule = getOrCreateShardingRule(
      *before, both.before->ctx(), /*conservative_propagation=*/false,
      /*attach=*/false);
  if (!rule || !ruleFits(*before, *rule) || !ruleFits(*after, *rule)) {
    reply["error"] = std::string(before->name) + " has no sharding rule";
    return dumpReply(reply);
  }
  const Mesh *mesh = opMesh(*both.after, *after);
  Mesh empty;
  reply["mesh"] = mesh ? meshToString(*mesh) : "";
  reply["rule"] = "";
  reply["factors"] = factorsHeader(*rule);
  reply["rows"] = factorRows(*before, *after, *rule, mesh ? *mesh : empty);
  reply["ok"] = true;
  return dumpReply(reply);
}

// ---- Trace (per op, program order)

/// The user priority of the dim of `tensor` mapped to `factor`, or -1.
int64_t factorPriority(const OpShardingRule::TensorMapping &dims,
                       const TensorSharding *sharding, int64_t factor) {
  if (!sharding)
    return -1;
  for (size_t d = 0; d < dims.size() && d < sharding->dims.size(); ++d)
    if (std::find(dims[d].begin(), dims[d].end(), factor) != dims[d].end())
      return sharding->dims[d].priority.value_or(-1);
  return -1;
}

/// One tensor of a step: its name, rule dims and rows before and after.
struct TraceTensor {
  std::string name;
  const OpShardingRule::TensorMapping *dims;
  const TensorFactorShardings *was, *now;
  const TensorSharding *was_sharding, *now_sharding;
};

std::vector<TraceTensor> traceTensors(Operation &before, Operation &after,
                                      const OpShardingRule &rule,
                                      const ShardingProjection &was,
                                      const ShardingProjection &now) {
  std::vector<TraceTensor> tensors;
  auto was_ops = operandShardings(before), now_ops = operandShardings(after);
  for (size_t i = 0; i < rule.operands.size(); ++i)
    tensors.push_back({"operand " + std::to_string(i), &rule.operands[i],
                       &was.operands[i], &now.operands[i], was_ops[i],
                       now_ops[i]});
  auto was_res = resultShardings(before), now_res = resultShardings(after);
  for (size_t i = 0; i < rule.results.size(); ++i)
    tensors.push_back({"result " + std::to_string(i), &rule.results[i],
                       &was.results[i], &now.results[i], was_res[i],
                       now_res[i]});
  return tensors;
}

bool hasAxis(const FactorSharding &f, const AxisRef &axis) {
  return f.present &&
         std::find(f.axes.begin(), f.axes.end(), axis) != f.axes.end();
}

/// The tensor that held `axis` on `factor` before propagation, if any.
const TraceTensor *traceSource(const std::vector<TraceTensor> &tensors,
                               int64_t factor, const AxisRef &axis) {
  for (const TraceTensor &t : tensors)
    if (hasAxis(t.was->factors[factor], axis))
      return &t;
  return nullptr;
}

json stepDecisions(const std::vector<TraceTensor> &tensors) {
  json decisions = json::array();
  for (const TraceTensor &t : tensors)
    for (size_t f = 0; f < t.now->factors.size(); ++f)
      for (const AxisRef &axis : t.now->factors[f].axes) {
        if (hasAxis(t.was->factors[f], axis))
          continue;
        const TraceTensor *source = traceSource(tensors, int64_t(f), axis);
        int64_t priority =
            source ? factorPriority(*source->dims, source->was_sharding,
                                    int64_t(f))
                   : factorPriority(*t.dims, t.now_sharding, int64_t(f));
        decisions.push_back({{"target", t.name},
                             {"source", source ? source->name : ""},
                             {"factor", f},
                             {"symbol", factorSymbol(int64_t(f))},
                             {"axis", axisRefToString(axis)},
                             {"priority", priority}});
      }
  return decisions;
}

json shardingTexts(const std::vector<TraceTensor> &tensors, bool now) {
  json out = json::array();
  for (const TraceTensor &t : tensors) {
    const TensorSharding *s = now ? t.now_sharding : t.was_sharding;
    out.push_back(s ? shardingToString(*s) : "");
  }
  return out;
}

/// The step of one op, or null when propagation added nothing to it.
json traceStep(Module &before_module, Operation &before, Operation &after,
               const Mesh &mesh) {
  std::optional<OpShardingRule> rule =
      getOrCreateShardingRule(before, before_module.ctx(), false, false);
  if (!rule || !ruleFits(before, *rule) || !ruleFits(after, *rule))
    return nullptr;
  ShardingProjection was = projectOp(before, *rule, mesh);
  ShardingProjection now = projectOp(after, *rule, mesh);
  std::vector<TraceTensor> tensors =
      traceTensors(before, after, *rule, was, now);
  json decisions = stepDecisions(tensors);
  if (decisions.empty())
    return nullptr;
  return {{"op", std::string(before.name)},
          {"line", before.loc.line},
          {"column", before.loc.col},
          {"factors", factorsHeader(*rule)},
          {"tensors",
           [&] {
             json names = json::array();
             for (const TraceTensor &t : tensors)
               names.push_back(t.name);
             return names;
           }()},
          {"before", shardingTexts(tensors, false)},
          {"after", shardingTexts(tensors, true)},
          {"decisions", decisions}};
}

std::string strategyOf(const std::string &pipeline) {
  return pipeline == "basic" ? "basic" : "aggressive";
}

std::string traceReply(std::string_view text, std::string_view options_json) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return detail::errorReply("options: expected a JSON object");
  OptionReader reader(options);
  detail::BeforeAfter both = detail::parseBoth(text, reader);
  if (!both.after)
    return dumpReply(detail::failureReply(both.error, both.diagnostics));
  json steps = json::array();
  walk(both.before->op(), [&](Operation &op) {
    Operation *after = detail::sameOp(*both.after, op);
    const Mesh *mesh = after ? opMesh(*both.after, *after) : nullptr;
    if (!mesh)
      return;
    json step = traceStep(*both.before, op, *after, *mesh);
    if (step.is_null())
      return;
    step["index"] = steps.size();
    step["strategy"] = strategyOf(both.pipeline);
    steps.push_back(std::move(step));
  });
  return dumpReply({{"ok", true},
                    {"pipeline", both.pipeline},
                    {"exact", false},
                    {"order", "program"},
                    {"steps", steps}});
}

} // namespace

std::string propagationTraceJson(std::string_view text,
                                 std::string_view options_json) {
  return guarded([&] { return traceReply(text, options_json); });
}

std::string opFactorsJson(std::string_view text,
                          std::string_view options_json) {
  return guarded([&] { return opFactorsReply(text, options_json); });
}

} // namespace shardlab::api
