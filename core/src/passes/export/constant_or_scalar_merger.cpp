// -sdy-constant-or-scalar-merger: the inverse of the splitter. Within one
// region, a constant (sdy.constant or stablehlo.constant) with the same
// attributes (value and sharding) as an earlier one, or a broadcast of the
// same scalar with the same attributes and type, is replaced by the earlier
// op.
#include "export_passes.h"
#include "passes/pass_utils.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <variant>

namespace shardlab {

namespace {

bool isScalarBroadcast(Operation &op) {
  if (!op.is("stablehlo.broadcast_in_dim") || op.numOperands() != 1)
    return false;
  Type type = op.operand(0)->type;
  return type->isRankedTensor() && type->shape.empty();
}

// Ops that may merge: the same kind of mergeable op in the same region
// (and for broadcasts, the same type and operand).
struct MergeBucket {
  bool constant;
  const Region *region;
  Type type;
  const Value *operand;
  bool operator<(const MergeBucket &o) const {
    return std::tie(constant, region, type, operand) <
           std::tie(o.constant, o.region, o.type, o.operand);
  }
};

} // namespace

bool constantOrScalarMergerPass(Module &module, const PassOptions &,
                                DiagnosticEngine &) {
  // In program order, each op merged as soon as it is seen (as Shardy's
  // merger rewrites while it walks): a broadcast whose scalar was merged
  // into an earlier constant then has the earlier one's operand and merges
  // with that one's broadcast too.
  std::vector<Operation *> candidates;
  walk(module.op(), [&](Operation &op) {
    if (op.is("sdy.constant") || op.is("stablehlo.constant") ||
        isScalarBroadcast(op))
      candidates.push_back(&op);
  });
  std::map<MergeBucket, std::vector<Operation *>> buckets;
  for (Operation *op : candidates) {
    const bool constant = !op->is("stablehlo.broadcast_in_dim");
    MergeBucket key{constant, op->parentBlock()->parent,
                    constant ? nullptr : op->result(0)->type,
                    constant ? nullptr : op->operand(0)};
    std::vector<Operation *> &seen = buckets[key];
    auto earlier = std::find_if(seen.begin(), seen.end(), [&](Operation *e) {
      return sameAttrs(e->attrs, op->attrs);
    });
    if (earlier == seen.end())
      seen.push_back(op);
    else
      replaceOp(*op, {(*earlier)->result(0)});
  }
  return true;
}

} // namespace shardlab
