// Optimizer state and updated weights (see optimizer_state.h).
#include "strategy/optimizer_state.h"

#include "ir/op_properties.h"
#include "passes/strategy/argument_trace.h"
#include "rules/rules_internal.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace shardlab::strategy {
namespace {

bool isMatmulLike(const Operation &op) {
  return op.is("stablehlo.dot_general") || op.is("stablehlo.dot") ||
         op.is("stablehlo.convolution") || op.is("stablehlo.custom_call");
}

// Where values flow: into an op's results, a loop's or a named
// computation's block arguments and results, a callee's arguments and its
// calls' results.
class Flow {
public:
  explicit Flow(Module &module) {
    walk(module.op(), [&](Operation &op) {
      if (op.is("func.func"))
        if (const Attr *name = op.attrs.get("sym_name"))
          funcs_.emplace(name->str(), &op);
      if (op.is("func.call"))
        if (const Attr *callee = op.attrs.get("callee"))
          calls_[callee->str()].push_back(&op);
    });
  }

  bool reachesMatmul(Value *start) const {
    std::unordered_set<Value *> seen{start};
    std::vector<Value *> todo{start};
    auto push = [&](Value *v) {
      if (v && seen.insert(v).second)
        todo.push_back(v);
    };
    while (!todo.empty()) {
      Value *value = todo.back();
      todo.pop_back();
      for (OpOperand *use = value->firstUse(); use; use = use->next_use) {
        if (isMatmulLike(*use->owner))
          return true;
        follow(*use->owner, use->index(), push);
      }
    }
    return false;
  }

private:
  template <typename Push>
  void follow(Operation &op, size_t i, const Push &push) const {
    if (isBlockReturn(op)) {
      returned(op, i, push);
      return;
    }
    if (op.is("stablehlo.while")) {
      push(i < op.numResults() ? op.result(i) : nullptr);
      for (size_t r = 0; r < op.numRegions(); ++r)
        push(blockArgument(op, r, i));
      return;
    }
    if (op.is("sdy.named_computation")) {
      push(blockArgument(op, 0, i));
      return;
    }
    if (op.is("func.call"))
      if (const Attr *callee = op.attrs.get("callee"))
        if (auto f = funcs_.find(callee->str()); f != funcs_.end()) {
          push(blockArgument(*f->second, 0, i));
          return;
        }
    for (size_t r = 0; r < op.numResults(); ++r)
      push(op.result(r));
  }

  // A terminator's operand `i`: the value its region's op gives back.
  template <typename Push>
  void returned(Operation &terminator, size_t i, const Push &push) const {
    Operation *parent = terminator.parentOp();
    if (!parent)
      return;
    if (parent->is("stablehlo.while")) {
      // The body's i-th value is the loop's i-th result and the next
      // trip's i-th argument; the condition's is the predicate.
      if (terminator.parentBlock() == &parent->region(1).front()) {
        push(i < parent->numResults() ? parent->result(i) : nullptr);
        push(blockArgument(*parent, 1, i));
      }
      return;
    }
    if (parent->is("func.func")) {
      if (const Attr *name = parent->attrs.get("sym_name"))
        if (auto calls = calls_.find(name->str()); calls != calls_.end())
          for (Operation *call : calls->second)
            push(i < call->numResults() ? call->result(i) : nullptr);
      return;
    }
    if (parent->is("sdy.named_computation")) {
      push(i < parent->numResults() ? parent->result(i) : nullptr);
      return;
    }
    for (size_t r = 0; r < parent->numResults(); ++r)
      push(parent->result(r));
  }

  static Value *blockArgument(Operation &op, size_t region, size_t i) {
    if (region >= op.numRegions() || op.region(region).blocks.empty())
      return nullptr;
    Block &block = op.region(region).front();
    return i < block.numArguments() ? block.argument(i) : nullptr;
  }

  std::unordered_map<std::string, Operation *> funcs_;
  std::unordered_map<std::string, std::vector<Operation *>> calls_;
};

// How deep rule 2 looks back through elementwise ops.
constexpr int kUpdateDepth = 6;

int64_t updatedBy(const ArgumentTracer &tracer, Value *result, Value *value,
                  const std::vector<bool> &candidates, int depth) {
  if (!value || value->isBlockArgument() || depth > kUpdateDepth)
    return -1;
  Operation &op = *value->defining_op;
  if (!isElementwise(op))
    return -1;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Value *operand = op.operand(i);
    if (rules::shapeOf(operand) != rules::shapeOf(result))
      continue;
    const ArgumentTrace trace = tracer.trace(operand);
    if (trace.arg >= 0 && size_t(trace.arg) < candidates.size() &&
        candidates[size_t(trace.arg)])
      return trace.arg;
  }
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (int64_t arg =
            updatedBy(tracer, result, op.operand(i), candidates, depth + 1);
        arg >= 0)
      return arg;
  return -1;
}

} // namespace

std::vector<bool> reachesNoMatmul(Module &module, Operation &entry) {
  const Flow flow(module);
  Block &body = entry.region(0).front();
  std::vector<bool> out(body.numArguments());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = !flow.reachesMatmul(body.argument(i));
  return out;
}

std::vector<int64_t> updatedArguments(Module &module, Operation &entry,
                                      const std::vector<bool> &candidates) {
  const ArgumentTracer tracer(module, entry);
  Block &body = entry.region(0).front();
  std::vector<int64_t> out;
  if (body.empty())
    return out;
  Operation &ret = *body.back();
  if (!isBlockReturn(ret))
    return out;
  for (size_t r = 0; r < ret.numOperands(); ++r)
    out.push_back(
        updatedBy(tracer, ret.operand(r), ret.operand(r), candidates, 0));
  return out;
}

} // namespace shardlab::strategy
