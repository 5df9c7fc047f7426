// The op property lists (see op_properties.h).
#include "shardlab/ir/op_properties.h"

#include <algorithm>

namespace shardlab {

const std::vector<std::string_view> &stablehloElementwiseOps() {
  static const std::vector<std::string_view> ops = {
      "stablehlo.abs",
      "stablehlo.add",
      "stablehlo.and",
      "stablehlo.atan2",
      "stablehlo.cbrt",
      "stablehlo.ceil",
      "stablehlo.clamp",
      "stablehlo.compare",
      "stablehlo.complex",
      "stablehlo.convert",
      "stablehlo.cosine",
      "stablehlo.count_leading_zeros",
      "stablehlo.divide",
      "stablehlo.exponential",
      "stablehlo.exponential_minus_one",
      "stablehlo.floor",
      "stablehlo.imag",
      "stablehlo.is_finite",
      "stablehlo.log",
      "stablehlo.log_plus_one",
      "stablehlo.logistic",
      "stablehlo.maximum",
      "stablehlo.minimum",
      "stablehlo.multiply",
      "stablehlo.negate",
      "stablehlo.not",
      "stablehlo.or",
      "stablehlo.popcnt",
      "stablehlo.power",
      "stablehlo.real",
      "stablehlo.reduce_precision",
      "stablehlo.remainder",
      "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even",
      "stablehlo.rsqrt",
      "stablehlo.select",
      "stablehlo.shift_left",
      "stablehlo.shift_right_arithmetic",
      "stablehlo.shift_right_logical",
      "stablehlo.sign",
      "stablehlo.sine",
      "stablehlo.sqrt",
      "stablehlo.subtract",
      "stablehlo.tan",
      "stablehlo.tanh",
      "stablehlo.xor"};
  return ops;
}

bool isElementwise(const Operation &op) {
  if (op.is("stablehlo.bitcast_convert"))
    return op.numOperands() == 1 && op.numResults() == 1 &&
           op.operand(0)->type->rank() == op.result(0)->type->rank();
  if (op.is("sdy.propagation_barrier") || op.is("sdy.sharding_constraint") ||
      op.is("sdy.reshard"))
    return true;
  const std::vector<std::string_view> &ops = stablehloElementwiseOps();
  return std::binary_search(ops.begin(), ops.end(), op.name);
}

} // namespace shardlab
