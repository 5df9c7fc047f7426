// StableHLO's SameOperandsAndResultShape trait on its elementwise ops: every
// operand and result has one shape (element types may differ: compare gives
// i1, convert changes them). select's predicate and clamp's bounds may be
// scalars. A `?` dimension matches any size, as MLIR's verifyCompatibleShape.
//
// Passes that rewrite shapes (the per-device program) must keep this: an
// add of a 4x8 shard and an unsliced 8x8 operand is an error, not a program.
#include "verify_ops.h"

#include "shardlab/sharding/shape.h"

namespace shardlab::verify {

namespace {

bool compatible(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && a[i] != kDynamic && b[i] != kDynamic)
      return false;
  return true;
}

// Operands that may be scalars whatever the result's shape.
bool mayBeScalar(const Operation &op, size_t operand) {
  return (op.is("stablehlo.select") && operand == 0) ||
         (op.is("stablehlo.clamp") && operand != 1);
}

} // namespace

bool verifyElementwiseShapes(VerifyContext &ctx, Operation &op) {
  if (op.numResults() == 0 || !op.result(0)->type->isRankedTensor())
    return true;
  const std::vector<int64_t> &shape = op.result(0)->type->shape;
  bool ok = true;
  auto check = [&](Type type) {
    // Types are uniqued: most operands have the result's own.
    ok = ok && (type == op.result(0)->type || !type->isRankedTensor() ||
                compatible(type->shape, shape));
  };
  for (size_t i = 1; i < op.numResults(); ++i)
    check(op.result(i)->type);
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (!(mayBeScalar(op, i) && op.operand(i)->type->isRankedTensor() &&
          op.operand(i)->type->shape.empty()))
      check(op.operand(i)->type);
  if (!ok)
    ctx.opError(op, "requires the same shape for all operands and results");
  return ok;
}

} // namespace shardlab::verify
