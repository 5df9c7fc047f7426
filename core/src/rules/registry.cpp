// Dispatch of the op sharding rule registry by op name, Shardy's explicit
// "no rule" list, and the warning for ops the registry does not know.
#include "rules/registry.h"

#include "ir/op_properties.h"
#include "rules_internal.h"
#include "support/string_table.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace shardlab {

namespace {

using rules::RuleFn;

const std::unordered_map<std::string_view, RuleFn> &ruleTable() {
  static const std::unordered_map<std::string_view, RuleFn> table = [] {
    std::unordered_map<std::string_view, RuleFn> t;
    // Elementwise ops are pointwise; clamp and select get their own rules
    // below (scalar operands broadcast). So are collectives that keep shape.
    // Shardy's registry has no rule for the quantization ops (propagation
    // stops at them, with a warning), though they are elementwise.
    for (std::string_view name : elementwiseOps())
      if (name != "stablehlo.uniform_quantize" &&
          name != "stablehlo.uniform_dequantize")
        t.emplace(name, rules::pointwise);
    for (std::string_view name :
         {"sdy.sharding_constraint", "stablehlo.all_reduce",
          "stablehlo.collective_broadcast", "stablehlo.collective_permute",
          "stablehlo.cross-replica-sum"})
      t.emplace(name, rules::pointwise);
    const std::pair<std::string_view, RuleFn> specific[] = {
        {"stablehlo.all_gather", rules::allGather},
        {"stablehlo.all_to_all", rules::allToAll},
        {"stablehlo.bitcast_convert", rules::bitcastConvert},
        {"stablehlo.batch_norm_inference", rules::batchNormInference},
        {"stablehlo.broadcast_in_dim", rules::broadcastInDim},
        {"stablehlo.cholesky", rules::cholesky},
        {"stablehlo.clamp", rules::clamp},
        {"stablehlo.concatenate", rules::concatenate},
        {"stablehlo.convolution", rules::convolution},
        {"stablehlo.custom_call", rules::customCall},
        {"stablehlo.dot_general", rules::dotGeneral},
        {"stablehlo.dot", rules::dot},
        {"stablehlo.dynamic_slice", rules::dynamicSlice},
        {"stablehlo.dynamic_update_slice", rules::dynamicUpdateSlice},
        {"stablehlo.fft", rules::fft},
        {"stablehlo.gather", rules::gather},
        {"stablehlo.pad", rules::pad},
        {"stablehlo.reduce", rules::reduce},
        {"stablehlo.reduce_scatter", rules::reduceScatter},
        {"stablehlo.reduce_window", rules::reduceWindow},
        {"stablehlo.reshape", rules::reshape},
        {"stablehlo.reverse", rules::reverse},
        {"stablehlo.rng_bit_generator", rules::rngBitGenerator},
        {"stablehlo.scatter", rules::scatter},
        {"stablehlo.select_and_scatter", rules::selectAndScatter},
        {"stablehlo.select", rules::select},
        {"stablehlo.slice", rules::slice},
        {"stablehlo.sort", rules::sort},
        {"stablehlo.transpose", rules::transpose},
        {"stablehlo.triangular_solve", rules::triangularSolve},
    };
    for (const auto &[name, fn] : specific)
      t.insert_or_assign(name, fn); // clamp and select override pointwise
    return t;
  }();
  return table;
}

// Ops Shardy deliberately gives no rule: structure, data-flow ops handled
// through edges, constants and side-effecting ops.
bool hasNoRuleByDesign(std::string_view name) {
  static const std::unordered_set<std::string_view> names = [] {
    std::unordered_set<std::string_view> n;
    for (std::string_view op : {"builtin.module",
                                "module",
                                "func.func",
                                "func.call",
                                "sdy.constant",
                                "sdy.data_flow_edge",
                                "sdy.func_data_flow_edge",
                                "sdy.manual_computation",
                                "sdy.mesh",
                                "sdy.propagation_barrier",
                                "sdy.named_computation",
                                "sdy.sharding_group",
                                "sdy.reshard",
                                "stablehlo.after_all",
                                "stablehlo.case",
                                "stablehlo.constant",
                                "stablehlo.create_token",
                                "stablehlo.get_tuple_element",
                                "stablehlo.infeed",
                                "stablehlo.iota",
                                "stablehlo.outfeed",
                                "stablehlo.optimization_barrier",
                                "stablehlo.partition_id",
                                "stablehlo.recv",
                                "stablehlo.send",
                                "stablehlo.while"})
      n.insert(op);
    return n;
  }();
  return names.count(name) != 0;
}

// No operand or result is a tensor of dynamic or unknown shape.
bool hasStaticTensorTypes(const Operation &op) {
  auto isStatic = [](Type type) {
    return !type || !type->isTensor() ||
           (type->isRankedTensor() && type->hasStaticShape());
  };
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (!isStatic(op.operand(i)->type))
      return false;
  for (size_t i = 0; i < op.numResults(); ++i)
    if (!isStatic(op.result(i)->type))
      return false;
  return true;
}

// Terminators end a block and never carry a rule (the IR has no trait
// for them, so they are known by name: `*.return`, `*.yield`,
// `test.terminator`).
bool isTerminator(const Operation &op) {
  std::string_view name = op.name;
  size_t dot = name.find('.');
  std::string_view mnemonic =
      dot == std::string_view::npos ? name : name.substr(dot + 1);
  return mnemonic == "return" || mnemonic == "yield" ||
         mnemonic == "terminator";
}

void warnUnknownOpOnce(const Operation &op, DiagnosticEngine &warnings) {
  for (const Diagnostic &diag : warnings.diagnostics())
    if (diag.severity == Severity::Warning &&
        diag.message.rfind("op '", 0) == 0 &&
        diag.message.find("' is unknown to SDY sharding rule registry") !=
            std::string::npos)
      return;
  warnings.warning(op.loc, "op '" + std::string(op.name) +
                               "' is unknown to SDY sharding rule registry");
}

} // namespace

std::optional<OpShardingRule>
createOpShardingRule(Operation &op, bool conservative_propagation,
                     DiagnosticEngine *warnings) {
  const auto &table = ruleTable();
  auto it = table.find(op.name);
  if (it != table.end())
    return it->second(op,
                      rules::RuleOptions{conservative_propagation, warnings});
  if (hasNoRuleByDesign(op.name) || isTerminator(op))
    return std::nullopt;
  if (warnings)
    warnUnknownOpOnce(op, *warnings);
  return std::nullopt;
}

std::optional<OpShardingRule>
getOrCreateShardingRule(Operation &op, Context &ctx,
                        bool conservative_propagation, bool attach,
                        DiagnosticEngine *warnings) {
  if (const Attr *existing = op.attrs.get(kShardingRuleAttr);
      existing && existing->kind == AttrKind::OpShardingRule)
    return existing->rule();
  std::optional<OpShardingRule> rule =
      createOpShardingRule(op, conservative_propagation, warnings);
  // A rule on an op with dynamic shapes would not verify (Shardy's rule
  // verifier wants static shapes); propagation still uses it unattached.
  if (attach && rule && hasStaticTensorTypes(op))
    op.attrs.set(kShardingRuleAttr, ctx.attrs.rule(*rule));
  return rule;
}

// Ops whose rule reads nothing but the op's name, types and attributes
// (some rules look at operand producers, users or bodies).
bool contextFreeRule(const Operation &op) {
  // These and the pointwise ops, in one table (one lookup per op; an open
  // table with inline key compares: std::unordered_set hashed with murmur
  // and called memcmp, which the propagation driver paid on every op).
  static const StringTable<bool> names = [] {
    StringTable<bool> table;
    for (std::string_view name :
         {"stablehlo.dot_general", "stablehlo.dot", "stablehlo.reshape",
          "stablehlo.transpose", "stablehlo.broadcast_in_dim",
          "stablehlo.select", "stablehlo.clamp"})
      table.emplace(name, true);
    for (const auto &[name, rule] : ruleTable())
      if (rule == rules::pointwise)
        table.emplace(name, true);
    return table;
  }();
  return names.count(op.name) != 0;
}

bool RuleCache::key(const Operation &op, bool conservative, Key &out) {
  if (op.numRegions() != 0 || !contextFreeRule(op))
    return false;
  auto word = [&out](const void *address) {
    out.push_back(reinterpret_cast<uintptr_t>(address));
  };
  out.clear();
  word(op.name.data());
  out.push_back(op.name.size());
  out.push_back(conservative ? 1 : 0);
  out.push_back(op.numOperands());
  for (size_t i = 0; i < op.numOperands(); ++i)
    word(op.operand(i)->type);
  out.push_back(op.numResults());
  for (size_t i = 0; i < op.numResults(); ++i)
    word(op.result(i)->type);
  for (const AttrDict *dict : {&op.attrs, &op.props()}) {
    out.push_back(dict != &op.attrs ? 1 : 0);
    for (const NamedAttr &entry : dict->entries()) {
      if (entry.name.substr(0, 4) == "sdy.")
        continue; // shardings and other sdy attributes do not shape the rule
      word(entry.name.data());
      out.push_back(entry.name.size());
      word(entry.value);
    }
  }
  return true;
}

const OpShardingRule *getOrAttachShardingRule(Operation &op, Context &ctx,
                                              bool conservative_propagation,
                                              DiagnosticEngine *warnings,
                                              RuleCache *cache) {
  if (const Attr *existing = op.attrs.get(kShardingRuleAttr);
      existing && existing->kind == AttrKind::OpShardingRule)
    return &existing->rule();
  RuleCache::Key local;
  RuleCache::Key &key = cache ? cache->scratch() : local;
  bool memo = cache && RuleCache::key(op, conservative_propagation, key);
  const Attr *attr = memo ? cache->find(key) : nullptr;
  if (!attr) {
    std::optional<OpShardingRule> rule =
        createOpShardingRule(op, conservative_propagation, warnings);
    if (!rule)
      return nullptr;
    attr = ctx.attrs.rule(std::move(*rule));
    if (memo)
      cache->insert(key, attr);
  }
  // Unattached on dynamic shapes, as in getOrCreateShardingRule; the rule
  // lives in the context either way.
  if (hasStaticTensorTypes(op))
    op.attrs.set(kShardingRuleAttr, attr);
  return &attr->rule();
}

} // namespace shardlab
