// -sdy-verify-unreduced-axes: checks, op by op (post-order, stopping at the
// first error), that unreduced axes are only introduced where a reduction
// can produce them (SUM for default ops and dots, the body's reduction for
// reduce), only removed by collectives, and pass unchanged through calls
// and returns unless an sdy.reshard / sdy.sharding_constraint blesses the
// transition.
#include "export_passes.h"
#include "passes/call_graph.h"
#include "passes/call_graph_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "sharding/collective_verify.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/format.h"

#include <algorithm>
#include <optional>

namespace shardlab {

namespace {

Value *bypassBarriers(Value *value) {
  while (value && value->defining_op &&
         value->defining_op->is("sdy.propagation_barrier"))
    value = value->defining_op->operand(0);
  return value;
}

const TensorSharding *shardingOf(Value *value) {
  return getSharding(bypassBarriers(value));
}

bool isExplicitReshard(const Operation *op) {
  return op && (op->is("sdy.reshard") || op->is("sdy.sharding_constraint"));
}

bool definedByExplicitReshard(Value *value) {
  return isExplicitReshard(bypassBarriers(value)->defining_op);
}

bool anyUnreduced(const std::vector<const TensorSharding *> &shardings) {
  for (const TensorSharding *sharding : shardings)
    if (sharding && !sharding->unreduced.empty())
      return true;
  return false;
}

// What one op check needs: the module (meshes), where errors go, and
// sharding lists reused from op to op.
struct Checker {
  Module &module;
  DiagnosticEngine &diags;
  std::vector<const TensorSharding *> in, out;

  bool fail(Operation &op, const std::string &message) {
    diags.error(op.loc, "'" + std::string(op.name) + "' op " + message);
    return false;
  }

  ShardingRef ref(const TensorSharding *sharding) {
    return {sharding, sharding ? lookupMesh(module, sharding->mesh) : nullptr};
  }

  // The check of op's first `num_operands` operands and its results.
  bool transition(Operation &op, size_t num_operands,
                  std::optional<ReductionKind> introduced,
                  std::optional<ReductionKind> removed) {
    in.clear();
    out.clear();
    for (size_t i = 0; i < num_operands; ++i) {
      Value *operand = op.operand(i);
      in.push_back(definedByExplicitReshard(operand) ? nullptr
                                                     : shardingOf(operand));
    }
    for (size_t i = 0; i < op.numResults(); ++i)
      out.push_back(shardingOf(op.result(i)));
    // Without unreduced axes nothing is added, dropped or kept: the common
    // case, checked without looking meshes up.
    if (!anyUnreduced(in) && !anyUnreduced(out))
      return true;
    std::vector<ShardingRef> ins, outs;
    for (const TensorSharding *sharding : in)
      ins.push_back(ref(sharding));
    for (const TensorSharding *sharding : out)
      outs.push_back(ref(sharding));
    if (auto error =
            verifyUnreducedAxesTransition(ins, outs, introduced, removed))
      return fail(op, *error);
    return true;
  }
};

// The reduction all returned values of `region` compute (add / max / min).
std::optional<ReductionKind> reductionOf(Operation &op) {
  Operation *ret = terminatorOf(op);
  if (!ret || !ret->is("stablehlo.return") || !ret->numOperands())
    return std::nullopt;
  std::optional<ReductionKind> kind;
  for (size_t i = 0; i < ret->numOperands(); ++i) {
    Operation *def = ret->operand(i)->defining_op;
    std::optional<ReductionKind> current;
    if (def && def->is("stablehlo.add"))
      current = ReductionKind::Sum;
    else if (def && def->is("stablehlo.maximum"))
      current = ReductionKind::Max;
    else if (def && def->is("stablehlo.minimum"))
      current = ReductionKind::Min;
    if (!current || (kind && *kind != *current))
      return std::nullopt;
    kind = current;
  }
  return kind;
}

std::string axisKey(const AxisRef &axis) { return axisRefToString(axis); }

// Shardy's verifyEqual: the same set of unreduced axes on both sides.
bool sameAxes(Checker &checker, Operation &op, const TensorSharding *source,
              const TensorSharding *target, const std::string &suffix) {
  std::vector<AxisRef> from =
      source ? source->unreduced : std::vector<AxisRef>{};
  std::vector<AxisRef> to = target ? target->unreduced : std::vector<AxisRef>{};
  auto keys = [](const std::vector<AxisRef> &axes) {
    std::vector<std::string> out;
    for (const AxisRef &axis : axes)
      out.push_back(axisKey(axis));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  if (keys(from) == keys(to))
    return true;
  std::vector<std::string> names;
  for (const AxisRef &axis : from)
    if (std::find(to.begin(), to.end(), axis) == to.end())
      names.push_back(axis.name.str());
  for (const AxisRef &axis : to)
    if (std::find(from.begin(), from.end(), axis) == from.end())
      names.push_back(axis.name.str());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string joined;
  for (const std::string &name : names)
    joined += (joined.empty() ? "" : ", ") + name;
  return checker.fail(op,
                      "has unreduced axes mismatch for '" + joined + suffix);
}

bool verifyCall(Checker &checker, Operation &call) {
  Operation *callee = calleeOf(checker.module, call);
  if (!callee || !callee->numRegions() || callee->region(0).empty())
    return true;
  Block &entry = callee->region(0).front();
  for (size_t i = 0; i < call.numOperands(); ++i) {
    if (definedByExplicitReshard(call.operand(i)))
      continue;
    if (!sameAxes(checker, call, shardingOf(call.operand(i)),
                  shardingOf(entry.argument(i)),
                  "' at call argument " + std::to_string(i) + "."))
      return false;
  }
  for (size_t i = 0; i < call.numResults(); ++i)
    if (!sameAxes(checker, call, getFuncResultSharding(*callee, i),
                  shardingOf(call.result(i)),
                  "' at call result " + std::to_string(i) + "."))
      return false;
  return true;
}

bool verifyReturnPair(Checker &checker, Operation &op, size_t index,
                      const TensorSharding *result) {
  if (definedByExplicitReshard(op.operand(index)) || !result)
    return true;
  return sameAxes(checker, op, shardingOf(op.operand(index)), result,
                  "' at return value " + std::to_string(index) +
                      " without a blessed operation (e.g., sdy.reshard). "
                      "This is an invalid transition from unreduced to "
                      "reduced.");
}

bool verifyTerminator(Checker &checker, Operation &op) {
  Operation *parent = op.parentOp();
  if (parent->is("func.func")) {
    for (size_t i = 0; i < op.numOperands(); ++i)
      if (!verifyReturnPair(checker, op, i, getFuncResultSharding(*parent, i)))
        return false;
    return true;
  }
  for (size_t i = 0; i < op.numOperands() && i < parent->numResults(); ++i) {
    const TensorSharding *result = shardingOf(parent->result(i));
    std::optional<TensorSharding> local;
    if (result && parent->is("sdy.manual_computation"))
      local = withoutAxes(*result, manualAxesOf(*parent));
    if (!verifyReturnPair(checker, op, i, local ? &*local : result))
      return false;
  }
  return true;
}

bool verifyCollective(Checker &checker, Operation &op) {
  const TensorSharding *in = shardingOf(op.operand(0));
  const TensorSharding *out = shardingOf(op.result(0));
  if (!in && !out)
    return true;
  std::optional<ReductionKind> body =
      op.numRegions() ? reductionOf(op) : std::nullopt;
  std::vector<ShardingRef> ins = {checker.ref(in)}, outs = {checker.ref(out)};
  if (auto error = verifyUnreducedAxesTransition(ins, outs, std::nullopt, body))
    return checker.fail(op, *error);
  return true;
}

// Terminators with MLIR's ReturnLike trait (stablehlo.return has none).
bool isReturnLike(const Operation &op) {
  return op.is("func.return") || op.is("sdy.return");
}

bool isTerminator(const Operation &op) {
  return op.nextInBlock() == nullptr && op.parentOp() &&
         !op.parentOp()->is("builtin.module") && op.numResults() == 0 &&
         op.name.size() >= 6 && op.name.substr(op.name.size() - 6) == "return";
}

bool verifyOp(Checker &checker, Operation &op) {
  if (op.is("func.func") || isExplicitReshard(&op))
    return true;
  if (op.is("stablehlo.reduce"))
    return checker.transition(op, op.numOperands() / 2, reductionOf(op),
                              std::nullopt);
  if (op.is("stablehlo.dot_general") || op.is("stablehlo.dot"))
    return checker.transition(op, op.numOperands(), ReductionKind::Sum,
                              std::nullopt);
  if (op.is("sdy.all_reduce") || op.is("sdy.reduce_scatter"))
    return shardingOf(op.operand(0)) ||
           checker.fail(op, "operand must be sharded.");
  if (op.is("stablehlo.all_reduce") || op.is("stablehlo.reduce_scatter"))
    return verifyCollective(checker, op);
  if (op.is("func.call"))
    return verifyCall(checker, op);
  if (isTerminator(op))
    return !isReturnLike(op) || verifyTerminator(checker, op);
  return checker.transition(op, op.numOperands(), ReductionKind::Sum,
                            std::nullopt);
}

// MLIR's post-order walk (nested ops before their op), stopping at the
// first failure.
bool verifyPostOrder(Checker &checker, Operation &root) {
  for (size_t r = 0; r < root.numRegions(); ++r)
    for (auto &block : root.region(r).blocks)
      for (Operation &op : *block)
        if (!verifyPostOrder(checker, op) || !verifyOp(checker, op))
          return false;
  return true;
}

} // namespace

bool verifyUnreducedAxesPass(Module &module, const PassOptions &,
                             DiagnosticEngine &diags) {
  // Without any unreduced axis in the context, every transition keeps the
  // empty set; only the collectives' own checks could still fail.
  if (!module.ctx().attrs.anyUnreduced() &&
      !mayContain(module, {"sdy.all_reduce", "sdy.reduce_scatter",
                           "stablehlo.all_reduce", "stablehlo.reduce_scatter"}))
    return markUnchanged(module);
  Checker checker{module, diags, {}, {}};
  bool ok = true;
  forEachFunc(module, [&](Operation &func) {
    ok = verifyPostOrder(checker, func) && ok;
  });
  return ok;
}

} // namespace shardlab
