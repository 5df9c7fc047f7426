// The reshape rule: in and out dimensions are factorized greedily into
// common factors (by GCD) so that a dimension split or merged by the reshape
// becomes a compound factor, e.g. 8 -> 2x4 gives ([ij])->([i, j]).
#include "rules_internal.h"

#include <numeric>

namespace shardlab::rules {

namespace {

// One side (in or out) of the reshape walk: the current dimension, the
// product of the dimension sizes entered so far and the product of the
// factors emitted so far.
struct Side {
  const std::vector<int64_t> &shape;
  int64_t dim = 0;
  int64_t prod_dims = 1;
  int64_t prod_factors = 1;

  bool done() const { return dim >= static_cast<int64_t>(shape.size()); }
  bool atSizeOne() const { return !done() && shape[dim] == 1; }
  void enterDim() {
    if (!done() && prod_dims == prod_factors)
      prod_dims *= shape[dim];
  }
  int64_t nextFactor() const { return prod_dims / prod_factors; }
  void leaveDimIfComplete() {
    if (!done() && prod_dims == prod_factors)
      ++dim;
  }
};

// The factor for the side that is behind, once the two sides diverged.
int64_t divergedFactor(int64_t next, int64_t gcd, int64_t smaller,
                       int64_t larger) {
  if (larger % smaller == 0 && next % (larger / smaller) == 0)
    return larger / smaller; // converges the two sides
  if (next > gcd)
    return next / gcd; // keeps the GCD for the next step
  return next;
}

int64_t dimOrNull(const Side &side) {
  return side.done() ? kNullDim : side.dim;
}

// One step of the walk once both sides are past their size-1 dims. Returns
// false when the walk cannot progress (inconsistent shapes).
bool factorStep(RuleBuilder &builder, Side &in, Side &out) {
  in.enterDim();
  out.enterDim();
  int64_t next_in = in.nextFactor(), next_out = out.nextFactor();
  int64_t gcd = std::gcd(next_in, next_out);
  if (in.prod_factors == out.prod_factors) {
    if (gcd > 1) {
      builder.addFactor({dimOrNull(in)}, {dimOrNull(out)}, gcd);
      in.prod_factors *= gcd;
      out.prod_factors *= gcd;
    } else {
      if (next_in <= 1 || next_out <= 1)
        return false;
      builder.addFactor({dimOrNull(in)}, {kNullDim}, next_in);
      in.prod_factors *= next_in;
      builder.addFactor({kNullDim}, {dimOrNull(out)}, next_out);
      out.prod_factors *= next_out;
    }
  } else if (in.prod_factors < out.prod_factors) {
    next_in = divergedFactor(next_in, gcd, in.prod_factors, out.prod_factors);
    if (next_in <= 1)
      return false;
    builder.addFactor({dimOrNull(in)}, {kNullDim}, next_in);
    in.prod_factors *= next_in;
  } else {
    next_out = divergedFactor(next_out, gcd, out.prod_factors, in.prod_factors);
    if (next_out <= 1)
      return false;
    builder.addFactor({kNullDim}, {dimOrNull(out)}, next_out);
    out.prod_factors *= next_out;
  }
  in.leaveDimIfComplete();
  out.leaveDimIfComplete();
  return true;
}

} // namespace

Rule reshape(Operation &op, const RuleOptions &) {
  if (op.numOperands() != 1 || op.numResults() != 1 ||
      !hasStaticShape(op.operand(0)) || !hasStaticShape(op.result(0)))
    return std::nullopt;
  const Type in_type = op.operand(0)->type, out_type = op.result(0)->type;
  // No rule for a reshape with no elements: nothing to propagate.
  if (in_type->numElements() == 0 ||
      in_type->numElements() != out_type->numElements())
    return std::nullopt;
  Side in{in_type->shape}, out{out_type->shape};
  RuleBuilder builder = builderFor(op);
  // Each step consumes a size-1 dim or multiplies a side's factors by > 1,
  // so the walk is bounded; the cap guards against inconsistent input.
  for (int steps = 0; !in.done() || !out.done(); ++steps) {
    if (steps > 4096)
      return std::nullopt;
    if (in.atSizeOne()) {
      builder.addFactor({in.dim++}, {kNullDim}, 1);
    } else if (out.atSizeOne()) {
      builder.addFactor({kNullDim}, {out.dim++}, 1);
    } else if (!factorStep(builder, in, out)) {
      return std::nullopt;
    }
  }
  return builder.build();
}

} // namespace shardlab::rules
