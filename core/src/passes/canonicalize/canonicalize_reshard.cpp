// Canonicalization of sdy.reshard: a reshard of a single-use reshard becomes
// one reshard (label sdy-reshard), and a reshard whose result another,
// earlier reshard of the same data already computes (possibly through
// reshapes, with the same linear distribution of data) is replaced by that
// result, re-applying the reshapes and transposes in between.
#include "canonicalize_passes.h"
#include "canonicalize_patterns.h"
#include "passes/pass_utils.h"
#include "shardlab/sharding/axis.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace shardlab::canon {

namespace {

bool reshardOfReshard(Operation &op, Rewriter &rw) {
  Value *input = op.operand(0);
  Operation *inner = input->defining_op;
  if (!inner || !inner->is("sdy.reshard") || !input->hasOneUse())
    return false;
  auto reshard = makeOp(rw.ctx(), "sdy.reshard", {inner->operand(0)},
                        {op.result(0)->type}, op.loc);
  reshard->attrs.set(rw.ctx().intern("sharding"), op.attrs.get("sharding"));
  Operation *created = rw.insertBefore(op, std::move(reshard));
  rw.replaceOp(op, {created->result(0)});
  return true;
}

struct AxisStride {
  AxisRef axis;
  double stride;
};

// The linear stride of every axis of `sharding` over a row-major tensor of
// `shape`, sorted by stride, with adjacent sub-axes of one axis merged.
std::vector<AxisStride> axisStrides(const TensorSharding &sharding,
                                    const std::vector<int64_t> &shape,
                                    const Mesh &mesh) {
  std::vector<AxisStride> strides;
  double cumulative = 1.0;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    const std::vector<AxisRef> &axes = sharding.dims[i].axes;
    int64_t total = axesTotalSize(axes, mesh);
    double stride =
        cumulative * static_cast<double>((shape[i] + total - 1) / total);
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
      strides.push_back({*it, stride});
      stride *= static_cast<double>(axisRefSize(*it, mesh));
    }
    cumulative *= static_cast<double>(shape[i]);
  }
  std::stable_sort(strides.begin(), strides.end(),
                   [](const AxisStride &a, const AxisStride &b) {
                     return a.stride < b.stride;
                   });
  std::vector<AxisStride> merged;
  for (const AxisStride &entry : strides) {
    if (!merged.empty()) {
      AxisStride &back = merged.back();
      const AxisRef &prev = back.axis;
      if (prev.name == entry.axis.name &&
          subAxisPreSize(entry.axis) * axisRefSize(entry.axis, mesh) ==
              subAxisPreSize(prev) &&
          std::abs(entry.stride - back.stride * axisRefSize(prev, mesh)) <
              1e-6) {
        int64_t pre =
            std::min(subAxisPreSize(prev), subAxisPreSize(entry.axis));
        int64_t size = axisRefSize(prev, mesh) * axisRefSize(entry.axis, mesh);
        back.axis = pre == 1 && size == mesh.axisSize(prev.name).value_or(1)
                        ? fullAxis(prev.name)
                        : subAxis(prev.name, pre, size);
        continue;
      }
    }
    merged.push_back(entry);
  }
  return merged;
}

// Shardy's isShardingEquivalentAcrossReshapes (divisible mode).
bool equivalentAcrossReshapes(const TensorSharding &s1, Type t1,
                              const TensorSharding &s2, Type t2,
                              const Module &module) {
  if (s1 == s2 && t1 == t2)
    return true;
  if (!(s1.mesh == s2.mesh) || s1.replicated != s2.replicated)
    return false;
  if (!t1->isRankedTensor() || !t2->isRankedTensor() || !t1->encoding.empty() ||
      !t2->encoding.empty())
    return false;
  const Mesh *mesh = lookupMesh(module, s1.mesh);
  if (!mesh || s1.dims.size() != t1->shape.size() ||
      s2.dims.size() != t2->shape.size())
    return false;
  std::vector<AxisStride> a = axisStrides(s1, t1->shape, *mesh);
  std::vector<AxisStride> b = axisStrides(s2, t2->shape, *mesh);
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i].axis == b[i].axis) ||
        std::abs(a[i].stride - b[i].stride) >= 1e-6)
      return false;
  return true;
}

bool isMetadataOp(const Operation *op) {
  return op && (op->is("stablehlo.reshape") || op->is("stablehlo.transpose"));
}

Value *unwrapMetadata(Value *value) {
  while (isMetadataOp(value->defining_op))
    value = value->defining_op->operand(0);
  return value;
}

// The sharding `sharding` of `value` seen at the value before the
// transposes and rank-preserving reshapes that produced it.
TensorSharding targetSharding(TensorSharding sharding, Value *value) {
  while (Operation *op = value->defining_op) {
    if (op->is("stablehlo.transpose")) {
      const std::vector<int64_t> &perm = op->attrs.get("permutation")->ints();
      std::vector<DimSharding> dims(perm.size());
      for (size_t res = 0; res < perm.size(); ++res)
        dims[perm[res]] = sharding.dims[res];
      sharding.dims = std::move(dims);
      value = op->operand(0);
    } else if (op->is("stablehlo.reshape") &&
               op->operand(0)->type->rank() == op->result(0)->type->rank()) {
      value = op->operand(0);
    } else {
      break;
    }
  }
  return sharding;
}

Value *findCompatibleReshard(Value *root, const TensorSharding &target,
                             Type target_type, Operation &current,
                             const Module &module) {
  std::vector<Value *> worklist = {root};
  std::unordered_set<Value *> visited;
  while (!worklist.empty()) {
    Value *value = worklist.back();
    worklist.pop_back();
    if (!visited.insert(value).second)
      continue;
    for (Operation *user : usersOf(value)) {
      if (user == &current)
        continue;
      if (user->is("sdy.reshard")) {
        if (equivalentAcrossReshapes(opSharding(*user), user->result(0)->type,
                                     target, target_type, module) &&
            user->parentBlock() == current.parentBlock() &&
            isBeforeInBlock(user, &current))
          return user->result(0);
      } else if (user->is("stablehlo.reshape")) {
        worklist.push_back(user->result(0));
      }
    }
  }
  return nullptr;
}

Operation *insertAfter(Value *value, std::unique_ptr<Operation> op,
                       Rewriter &rw) {
  Operation *def = value->defining_op;
  if (Operation *next = def->nextInBlock())
    return rw.insertBefore(*next, std::move(op));
  Operation *inserted = def->parentBlock()->push_back(std::move(op));
  rw.push(inserted);
  return inserted;
}

Value *cloneTransformationPath(Value *root, Value *target, Value *cached,
                               Rewriter &rw) {
  if (target == root)
    return cached;
  Operation *op = target->defining_op;
  Value *input = cloneTransformationPath(root, op->operand(0), cached, rw);
  ValueMap map;
  auto clone = cloneOp(*op, map);
  clone->setOperand(0, input);
  return insertAfter(input, std::move(clone), rw)->result(0);
}

bool reshardCse(Operation &op, Rewriter &rw) {
  Value *input = op.operand(0);
  Value *root = unwrapMetadata(input);
  TensorSharding target = targetSharding(opSharding(op), input);
  Value *cached =
      findCompatibleReshard(root, target, op.result(0)->type, op, rw.module());
  if (!cached)
    return false;
  if (cached->type != root->type) {
    auto reshape =
        makeOp(rw.ctx(), "stablehlo.reshape", {cached}, {root->type}, op.loc);
    cached = insertAfter(cached, std::move(reshape), rw)->result(0);
  }
  rw.replaceOp(op, {cloneTransformationPath(root, input, cached, rw)});
  return true;
}

} // namespace

bool applyReshardPatterns(Operation &op, Rewriter &rw, unsigned labels) {
  if ((labels & kLabelReshard) && reshardOfReshard(op, rw))
    return true;
  return (labels & kLabelUnlabelled) && reshardCse(op, rw);
}

} // namespace shardlab::canon
