// Rules of stablehlo.custom_call by call target name: the targets Shardy
// knows (linear algebra helpers, top-k, host offloading, SPMD internals),
// no rule for opaque callbacks, and a warning for any other target.
#include "rules/stablehlo_attrs.h"
#include "rules_internal.h"

#include <algorithm>
#include <string>

namespace shardlab::rules {

namespace {

bool isOneOf(std::string_view name,
             std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), name) != set.end();
}

std::vector<int64_t> dropLast2(const std::vector<int64_t> &shape) {
  return std::vector<int64_t>(shape.begin(), shape.end() - 2);
}

// Eigh: ([..., a, b]) -> ([..., a, b], [..., b]).
Rule eigh(Operation &op) {
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  int64_t d1 = static_cast<int64_t>(in.size()) - 2, d2 = d1 + 1;
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(dropLast2(in))
      .addFactor({d1}, {d1, kNullDim}, in[d1])
      .addFactor({d2}, {d2, d1}, in[d2]);
  return builder.build();
}

// Qr / QrDecompositionBlock: non-batch dims replicated; the taus result
// has its own factor.
Rule qr(Operation &op) {
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  const std::vector<int64_t> &taus = shapeOf(op.result(1));
  int64_t d1 = static_cast<int64_t>(in.size()) - 2, d2 = d1 + 1;
  if (static_cast<int64_t>(taus.size()) <= d1)
    return std::nullopt;
  const FactorType nr = FactorType::NeedReplication;
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(dropLast2(in))
      .addFactor({d1}, {d1, kNullDim}, in[d1], nr)
      .addFactor({d2}, {d2, kNullDim}, in[d2], nr)
      .addFactor({kNullDim}, {kNullDim, d1}, taus[d1], nr);
  return builder.build();
}

Rule householderProduct(Operation &op) {
  const std::vector<int64_t> &lhs = shapeOf(op.operand(0));
  const std::vector<int64_t> &taus = shapeOf(op.operand(1));
  int64_t d1 = static_cast<int64_t>(lhs.size()) - 2, d2 = d1 + 1;
  if (static_cast<int64_t>(taus.size()) <= d1)
    return std::nullopt;
  const FactorType nr = FactorType::NeedReplication;
  RuleBuilder builder = builderFor(op);
  builder.addPointwise(dropLast2(lhs))
      .addFactor({d1, kNullDim}, {d1}, lhs[d1], nr)
      .addFactor({d2, kNullDim}, {d2}, lhs[d2], nr)
      .addFactor({kNullDim, d1}, {kNullDim}, taus[d1], nr);
  return builder.build();
}

// ApproxTopK / PartialReduce: (operand, iota, init, init) -> (values,
// indices); the reduced dim is pass-through on the inputs and a blocked,
// replicated factor on the results.
Rule approxTopK(Operation &op) {
  const std::vector<int64_t> &in = shapeOf(op.operand(0));
  const std::vector<int64_t> &out = shapeOf(op.result(0));
  if (in.size() != out.size())
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d);
    if (in[d] == out[d]) {
      builder.addFactorToAll(dim, in[d]);
      continue;
    }
    builder.addFactor({dim, dim, kNullDim, kNullDim}, {kNullDim, kNullDim},
                      in[d]);
    builder.addFactor({kNullDim, kNullDim, kNullDim, kNullDim}, {dim, dim},
                      out[d], FactorType::NeedReplication, true);
  }
  return builder.build();
}

// X64Combine feeding an rng_bit_generator stays replicated and blocked.
Rule x64Combine(Operation &op) {
  bool feeds_rng = false;
  for (OpOperand *use = op.result(0)->firstUse(); use; use = use->next_use)
    feeds_rng = feeds_rng || use->owner->is("stablehlo.rng_bit_generator");
  if (!feeds_rng)
    return buildPointwise(op);
  const std::vector<int64_t> &shape = shapeOf(op.result(0));
  if (shape.size() != 1)
    return std::nullopt;
  RuleBuilder builder = builderFor(op);
  builder.addFactorToAll(0, shape[0], FactorType::NeedReplication, true);
  return builder.build();
}

bool hasUnknownCustomCallWarning(const DiagnosticEngine &diags) {
  for (const Diagnostic &diag : diags.diagnostics())
    if (diag.severity == Severity::Warning &&
        diag.message.rfind("custom call @", 0) == 0)
      return true;
  return false;
}

// The targets with a rule needing the op's arity to be checked first.
Rule shapedTarget(Operation &op, std::string_view target) {
  size_t operands = op.numOperands(), results = op.numResults();
  if (target == "Eigh" && operands == 1 && results == 2 &&
      shapeOf(op.operand(0)).size() >= 2)
    return eigh(op);
  if (isOneOf(target, {"Qr", "QrDecompositionBlock"}) && operands == 1 &&
      results == 2 && shapeOf(op.operand(0)).size() >= 2)
    return qr(op);
  if (target == "ProductOfElementaryHouseholderReflectors" && operands == 2 &&
      results == 1 && shapeOf(op.operand(0)).size() >= 2)
    return householderProduct(op);
  if (target == "mhlo.topk" && operands == 1 && results == 2) {
    RuleBuilder builder = builderFor(op);
    builder.addPointwiseWithDiffTypeForMismatch(
        shapeOf(op.operand(0)), shapeOf(op.result(0)),
        FactorType::NeedReplication, true);
    return builder.build();
  }
  if (isOneOf(target, {"ApproxTopK", "PartialReduce"}) && operands == 4 &&
      results == 2)
    return approxTopK(op);
  if (target == "X64Combine" && results == 1)
    return x64Combine(op);
  return std::nullopt;
}

} // namespace

Rule customCall(Operation &op, const RuleOptions &options) {
  std::string_view target = stringAttr(op, "call_target_name");
  if (isOneOf(target,
              {"sdy_testonly", "tpu_custom_call", "xla_python_cpu_callback",
               "xla_python_gpu_callback", "xla_ffi_python_cpu_callback",
               "xla_ffi_python_gpu_callback", "xla.debug.Log"}))
    return std::nullopt;
  if (isOneOf(target,
              {"annotate_device_placement", "Cholesky", "CompactWyHelper",
               "InspectSharding", "InvertDiagBlocksLowerTriangular",
               "InvertDiagBlocksUpperTriangular", "LayoutConstraint",
               "mhlo.erf", "MoveToDevice", "MoveToHost", "X64SplitHigh",
               "X64SplitLow", "xla.megascale.provide_metadata",
               "_SPMDInternalOp_MultiPad", "_SPMDInternalOp_RotateRight",
               "_SPMDInternalOp_MultiRotate", "_SPMDInternalOp_MultiSlice",
               "_SPMDInternalOp_Wrap"}))
    return buildPointwise(op);
  if (isOneOf(target, {"Eigh", "Qr", "QrDecompositionBlock",
                       "ProductOfElementaryHouseholderReflectors", "mhlo.topk",
                       "ApproxTopK", "PartialReduce", "X64Combine"}))
    return shapedTarget(op, target);
  if (options.warnings && !hasUnknownCustomCallWarning(*options.warnings))
    options.warnings->warning(op.loc, "custom call @" + std::string(target) +
                                          " is unknown to SDY sharding rule "
                                          "registry");
  return std::nullopt;
}

} // namespace shardlab::rules
