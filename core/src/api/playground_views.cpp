// The playground's teaching views: the factor table of an op (Shardy's
// sharding projection before and after propagation), the device layout of
// a value (which shard each device holds, local shapes) and a per-op
// trace of what propagation added.
#include "shardlab/api/playground_api.h"

#include "guard.h"
#include "passes/pass_utils.h"
#include "playground_internal.h"
#include "propagation/projection.h"
#include "propagation/trace.h"
#include "request_fields.h"
#include "rules/registry.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

#include <algorithm>
#include <nlohmann/json.hpp>
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
    if (const Mesh *mesh = s ? lookupMesh(module, *s) : nullptr)
      return mesh;
  for (const TensorSharding *s : resultShardings(op))
    if (const Mesh *mesh = s ? lookupMesh(module, *s) : nullptr)
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

std::string opFactorsReply(std::string_view text, std::string_view options_json,
                           ViewCache *cache) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return detail::errorReply("options: expected a JSON object");
  OptionReader reader(options);
  reader.rejectUnknown(detail::fields::kSourcePosition);
  detail::Position position;
  if (!detail::positionOption(reader, position))
    return detail::errorReply(reader.error());
  std::shared_ptr<detail::BeforeAfter> cached =
      detail::parseBothCached(text, reader, cache);
  detail::BeforeAfter &both = *cached;
  if (!both.after)
    return dumpReply(detail::failureReply(both.error, both.diagnostics, text));
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

// ---- Trace (the propagation driver's decisions, in order)

/// The propagation layer whose trace stands for a playground pipeline (the
/// pipelines trace their propagation pass: user priorities).
PropagationLayer traceLayer(const std::string &pipeline) {
  if (pipeline == "basic")
    return PropagationLayer::Basic;
  if (pipeline == "aggressive")
    return PropagationLayer::Aggressive;
  if (pipeline == "op-priority")
    return PropagationLayer::OpPriority;
  return PropagationLayer::UserPriority;
}

/// `"a"` / `"a":(1)2` from the trace's unquoted `a` / `a:(1)2`.
std::string quotedAxis(const std::string &axis) {
  // Appended piece by piece: g++ 12 warns (-Wrestrict, a known false
  // positive) on `"literal" + std::string&&`.
  size_t colon = std::min(axis.find(':'), axis.size());
  std::string quoted = "\"";
  quoted.append(axis, 0, colon);
  quoted += '"';
  quoted.append(axis, colon);
  return quoted;
}

std::string slotName(const json &slot) {
  if (slot.contains("value"))
    return slot["value"].get<std::string>();
  if (slot.contains("result")) {
    std::string name = "@";
    name += slot.value("func", std::string());
    name += " result ";
    name += std::to_string(slot["result"].get<int64_t>());
    return name;
  }
  return "";
}

/// "result-0" -> "result 0" (as the factor table names rows).
std::string rowName(std::string node) {
  std::replace(node.begin(), node.end(), '-', ' ');
  return node;
}

json playgroundStep(const json &step) {
  json operands = json::array(), results = json::array();
  for (const json &slot : step["operands"])
    operands.push_back(slotName(slot));
  for (const json &slot : step["results"])
    results.push_back(slotName(slot));
  json decisions = json::array();
  for (const json &d : step["decisions"])
    decisions.push_back({{"axis", quotedAxis(d["axis"])},
                         {"factor", d["factor"]},
                         {"symbol", d["factor_name"]},
                         {"target", rowName(d["target"])},
                         {"source", rowName(d["source"])},
                         {"priority", step["user_priority"]}});
  const json &op = step["op"];
  return {{"index", step["step"]},
          {"kind", step["kind"]},
          {"op", op.value("name", std::string())},
          {"line", op.value("line", 0)},
          {"column", op.value("column", 0)},
          {"strategy", step["strategy"]},
          {"user_priority", step["user_priority"]},
          {"op_priority_level", step["op_priority_level"]},
          {"operands", operands},
          {"results", results},
          {"decisions", decisions},
          {"group_copies", step["group_copies"].size()}};
}

std::string traceReply(std::string_view text, std::string_view options_json) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return detail::errorReply("options: expected a JSON object");
  OptionReader reader(options);
  reader.rejectUnknown(detail::fields::kTraceOptions);
  Result<detail::PipelineChoice> choice = detail::pipelineOption(reader);
  if (!choice)
    return detail::errorReply(choice.error().message);
  const std::string &pipeline = choice->name;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = detail::parseVerified(text, diags);
  if (!module)
    return dumpReply(
        detail::failureReply("invalid module", diags.diagnostics(), text));
  PropagationOptions propagation;
  propagation.layer = traceLayer(pipeline);
  PropagationTrace trace;
  if (!propagateShardingsWithTrace(*module, propagation, diags, trace))
    return dumpReply(
        detail::failureReply("propagation failed", diags.diagnostics(), text));
  json full = traceToJson(trace, *module);
  json steps = json::array();
  for (const json &step : full["steps"])
    steps.push_back(playgroundStep(step));
  return dumpReply({{"ok", true},
                    {"pipeline", pipeline},
                    {"exact", true},
                    {"order", "decision"},
                    {"seeds", full["seeds"]},
                    {"steps", steps},
                    {"values", full["values"]}});
}

} // namespace

std::string propagationTraceJson(std::string_view text,
                                 std::string_view options_json) {
  return guarded([&] { return traceReply(text, options_json); });
}

std::string opFactorsJson(std::string_view text, std::string_view options_json,
                          ViewCache *cache) {
  return guarded([&] { return opFactorsReply(text, options_json, cache); });
}

} // namespace shardlab::api
