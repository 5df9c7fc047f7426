// shardlab-recompute: what a training step's backward pass recomputes of
// each layer's forward and what the forward saves for it, set as one of
// jax.checkpoint's policies.
//
// Rules, on a module (before propagation) whose forward layer loop F saves
// values of each layer in stacks [L, ...] (a dynamic_update_slice at its
// counter per trip) that a later layer loop B (the backward) reads one
// layer at a time (a dynamic_slice at its index):
//
// 1. Everything F saves but its carried activation (each layer's input) is
//    recomputed in B instead: the ops F computes it with are copied into B
//    (each layer's input read from its stack, the weights sliced at B's
//    index) and the stacks are dropped. The step then recomputes the whole
//    layer (policy `full`, jax.checkpoint's nothing_saveable).
// 2. The ops of B that compute what F computes (the same op, attributes and
//    types on operands that correspond, starting from the stacks' values
//    and B's index standing for F's counter) are its recomputation. Of the
//    values they give that the rest of B reads and that depend on a saved
//    activation (weights alone are cheap to slice again), F saves:
//      none       every one (everything_saveable): B recomputes nothing;
//      selective  the outputs of dot_general and custom calls (attention)
//                 they are computed from (dots_saveable, as Megatron's
//                 selective recomputation): B recomputes the cheap ops
//                 between them;
//      full       none of them.
//    Each saved value is a new stack F writes at its counter and B reads at
//    its index; what B no longer needs is erased.
//
// Worked example: a layer y = x + W2 · gelu(W1 · x) saved as `full` (F
// stacks x only). `none`: B's copies of W1 · x and gelu(...) are read from
// two new stacks [L, b, f] instead (F writes them), B's two GEMMs of the
// recomputation disappear, and what the device holds grows by those stacks;
// `selective`: only W1 · x is stacked and gelu is recomputed from it.
#include "passes/strategy/layer_loops.h"
#include "passes/strategy/strategy_passes.h"

#include "passes/export/local_builder.h"
#include "passes/pass_utils.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace shardlab {
namespace {

enum class Policy { Full, Selective, None };

// One stack F writes a layer of per trip and B reads a layer of.
struct Stash {
  size_t carried = 0;       ///< F's operand / result number
  Value *written = nullptr; ///< F's value (the layer, no leading 1)
  Value *read = nullptr;    ///< B's value standing for it
};

// A forward layer loop, the backward loop that reads its stacks.
struct LoopPair {
  Operation *forward = nullptr;
  Operation *backward = nullptr;
  Value *counter = nullptr; ///< F's counter, in its body
  Value *index = nullptr;   ///< the layer B reads its stacks at
  std::vector<Stash> stashes;
};

// `value` without a reshape that only added a leading dimension of 1.
Value *withoutUnitDim(Value *value) {
  Operation *def = value->defining_op;
  if (def && def->is("stablehlo.reshape") &&
      def->operand(0)->type->isRankedTensor() &&
      def->operand(0)->type->rank() + 1 == value->type->rank())
    return def->operand(0);
  return value;
}

// The value a dynamic_slice of one layer gives once its dimension of 1 is
// reshaped away (the slice itself when nothing does).
Value *dropUnitDim(Operation &slice) {
  Value *out = slice.result(0);
  if (out->hasOneUse()) {
    Operation &user = *out->firstUse()->owner;
    if (user.is("stablehlo.reshape") &&
        user.result(0)->type->rank() + 1 == out->type->rank())
      return user.result(0);
  }
  return out;
}

bool sameShape(const Value *a, const Value *b) {
  return a->type->isRankedTensor() && b->type->isRankedTensor() &&
         a->type->shape == b->type->shape &&
         a->type->element == b->type->element;
}

// The top-level op of `block` that `op` is or is nested in, or null.
Operation *ancestorIn(Operation *op, const Block &block) {
  while (op && op->parentBlock() != &block)
    op = op->parentOp();
  return op;
}

// Whether the regions of `a` and `b` compute the same (a reduce's body):
// the same ops in the same order, reading the same block arguments and
// earlier results, or the same values from outside.
bool sameRegions(Operation &a, Operation &b) {
  if (a.numRegions() != b.numRegions())
    return false;
  ValueMap to_b;
  for (size_t r = 0; r < a.numRegions(); ++r) {
    if (a.region(r).blocks.size() != b.region(r).blocks.size())
      return false;
    for (size_t k = 0; k < a.region(r).blocks.size(); ++k) {
      Block &x = *a.region(r).blocks[k], &y = *b.region(r).blocks[k];
      if (x.size() != y.size() || x.numArguments() != y.numArguments())
        return false;
      for (size_t i = 0; i < x.numArguments(); ++i) {
        if (x.argument(i)->type != y.argument(i)->type)
          return false;
        to_b[x.argument(i)] = y.argument(i);
      }
      for (Operation *p = x.front(), *q = y.front(); p;
           p = p->nextInBlock(), q = q->nextInBlock()) {
        if (p->name != q->name || p->numOperands() != q->numOperands() ||
            p->numResults() != q->numResults() || p->numRegions() ||
            q->numRegions() || !sameAttrs(p->attrs, q->attrs))
          return false;
        for (size_t i = 0; i < p->numOperands(); ++i) {
          auto it = to_b.find(p->operand(i));
          if ((it == to_b.end() ? p->operand(i) : it->second) != q->operand(i))
            return false;
        }
        for (size_t i = 0; i < p->numResults(); ++i) {
          if (p->result(i)->type != q->result(i)->type)
            return false;
          to_b[p->result(i)] = q->result(i);
        }
      }
    }
  }
  return true;
}

// Merges each op of `block` that repeats an earlier one (same op,
// attributes, operands and regions): the copies of rule 1 slice the weights B
// already sliced, and two slices of one weight would be gathered twice.
void mergeRepeats(Block &block) {
  std::map<std::pair<std::string_view, Value *>, std::vector<Operation *>> seen;
  for (Operation *op = block.front(); op;) {
    Operation *next = op->nextInBlock();
    // A sharding constraint only says what its operand is.
    if (op->numResults() > 0 &&
        (isSideEffectFree(*op) || op->is("sdy.sharding_constraint"))) {
      auto &same =
          seen[{op->name, op->numOperands() ? op->operand(0) : nullptr}];
      auto repeat = std::find_if(same.begin(), same.end(), [&](Operation *e) {
        if (e->numOperands() != op->numOperands() ||
            e->numResults() != op->numResults() ||
            !sameAttrs(e->attrs, op->attrs) || !sameRegions(*e, *op))
          return false;
        for (size_t i = 0; i < op->numOperands(); ++i)
          if (e->operand(i) != op->operand(i))
            return false;
        for (size_t i = 0; i < op->numResults(); ++i)
          if (e->result(i)->type != op->result(i)->type)
            return false;
        return true;
      });
      if (repeat == same.end()) {
        same.push_back(op);
      } else {
        std::vector<Value *> results;
        for (size_t i = 0; i < op->numResults(); ++i)
          results.push_back((*repeat)->result(i));
        replaceOp(*op, results);
      }
    }
    op = next;
  }
}

class Recompute {
public:
  Recompute(Module &module, Operation &func, Policy policy,
            DiagnosticEngine &diags)
      : ctx_(module.ctx()), module_(module), func_(func), policy_(policy),
        diags_(diags) {}
  bool run();

private:
  bool fail(const std::string &message) {
    diags_.error(func_.loc, "shardlab-recompute: " + message);
    return false;
  }
  std::vector<LoopPair> findPairs(const std::vector<Operation *> &loops);
  bool findStash(LoopPair &pair, size_t carried);
  bool recomputeAll(LoopPair &pair);
  Value *copyIntoBackward(LoopPair &pair, Value *value, ValueMap &copies,
                          Operation *before);
  void matchBackward(LoopPair &pair);
  std::vector<Value *> toSave(LoopPair &pair);
  bool save(LoopPair &pair, const std::vector<Value *> &values);
  bool matches(Operation &b, Operation &f) const;

  Context &ctx_;
  Module &module_;
  Operation &func_;
  Policy policy_;
  DiagnosticEngine &diags_;
  ValueMap forward_of_; ///< B's values -> the F values they recompute
  std::unordered_set<Operation *> recomputed_; ///< B's ops that match F's
  std::unordered_set<Value *> activation_;     ///< B's values from a saved one
  int64_t saved_before_ = 0, saved_after_ = 0;
};

// Stack `carried` of F: F's body updates it at its counter with one layer
// and B slices it at one index; recorded in `pair` (B found by the first).
bool Recompute::findStash(LoopPair &pair, size_t carried) {
  Operation &f = *pair.forward;
  Block &body = f.region(1).front();
  Operation *update = body.back()->operand(carried)->defining_op;
  if (!update || !update->is("stablehlo.dynamic_update_slice") ||
      update->operand(0) != body.argument(carried) ||
      update->numOperands() < 3 || update->operand(2) != pair.counter)
    return false;
  Value *written = withoutUnitDim(update->operand(1));
  Value *read = nullptr;
  for (OpOperand *use = f.result(carried)->firstUse(); use;
       use = use->next_use) {
    Operation &slice = *use->owner;
    Operation *loop = slice.parentOp();
    if (!slice.is("stablehlo.dynamic_slice") || use->index() != 0 || read ||
        !loop || !loop->is("stablehlo.while") ||
        (pair.backward && loop != pair.backward) ||
        (pair.index && slice.operand(1) != pair.index))
      return false;
    pair.backward = loop;
    pair.index = slice.operand(1);
    read = dropUnitDim(slice);
  }
  // A stack nothing reads (the backward's reader was dead) is dropped.
  if (read && !sameShape(read, written))
    return false;
  pair.stashes.push_back({carried, written, read});
  return true;
}

std::vector<LoopPair>
Recompute::findPairs(const std::vector<Operation *> &loops) {
  std::vector<LoopPair> pairs;
  for (Operation *loop : loops) {
    LoopPair pair;
    pair.forward = loop;
    pair.counter = bodyCounter(*loop);
    for (size_t i = 0; pair.counter && i < loop->numResults(); ++i)
      findStash(pair, i);
    if (!pair.stashes.empty() &&
        std::find(loops.begin(), loops.end(), pair.backward) != loops.end())
      pairs.push_back(std::move(pair));
  }
  return pairs;
}

// `value` of F's body, computed in B before `before` by copies of F's ops
// (memoized in `copies`); null when F computes it from something B cannot
// see (a carried value F does not save).
Value *Recompute::copyIntoBackward(LoopPair &pair, Value *value,
                                   ValueMap &copies, Operation *before) {
  if (auto it = copies.find(value); it != copies.end())
    return it->second;
  Block &body = pair.forward->region(1).front();
  Operation *def = value->defining_op;
  if (value->owner_block != &body && (!def || def->parentBlock() != &body))
    return value; // defined outside F: B sees it too
  if (!def) {
    Operation *yield = body.back();
    // A carried value F never changes is its initial value.
    if (yield->operand(value->index) == value)
      return copies[value] = pair.forward->operand(value->index);
    return nullptr;
  }
  std::vector<Value *> operands;
  for (size_t i = 0; i < def->numOperands(); ++i) {
    Value *copy = copyIntoBackward(pair, def->operand(i), copies, before);
    if (!copy)
      return nullptr;
    operands.push_back(copy);
  }
  ValueMap map;
  for (size_t i = 0; i < def->numOperands(); ++i)
    map[def->operand(i)] = operands[i];
  Operation *copy =
      before->parentBlock()->insertBefore(before, cloneOp(*def, map));
  for (size_t i = 0; i < def->numResults(); ++i)
    copies[def->result(i)] = copy->result(i);
  return copies[value];
}

// Rule 1: B recomputes everything F saves but the layer inputs.
bool Recompute::recomputeAll(LoopPair &pair) {
  Block &back = pair.backward->region(1).front();
  ValueMap copies{{pair.counter, pair.index}};
  std::vector<Stash> kept, dropped, unread;
  for (const Stash &s : pair.stashes)
    (!s.read                        ? unread
     : s.written->isBlockArgument() ? kept
                                    : dropped)
        .push_back(s);
  if (dropped.empty() && unread.empty())
    return true;
  if (kept.empty())
    return fail("the forward layer loop saves no layer input to recompute "
                "its layer from");
  // Copies go before the first op of B that reads a dropped stack; the
  // inputs they start from must be read by then.
  Operation *before = back.back();
  for (const Stash &s : dropped)
    for (Operation *user : usersOf(s.read))
      if (Operation *top = ancestorIn(user, back);
          top && isBeforeInBlock(top, before))
        before = top;
  for (const Stash &s : kept) {
    Operation *read = s.read->defining_op;
    if (!read || read->parentBlock() != &back || !isBeforeInBlock(read, before))
      return fail("the backward layer loop reads a layer input after it "
                  "needs what is recomputed from it");
    copies[s.written] = s.read;
  }
  for (const Stash &s : dropped) {
    Value *copy = copyIntoBackward(pair, s.written, copies, before);
    if (!copy)
      return fail("a value the forward layer loop saves is computed from "
                  "something it carries and does not save");
    s.read->replaceAllUsesWith(copy);
  }
  mergeRepeats(back);
  eraseTriviallyDeadOps(*pair.backward);
  std::vector<bool> keep(pair.forward->numOperands(), true);
  for (const std::vector<Stash> *gone : {&dropped, &unread})
    for (const Stash &s : *gone)
      keep[s.carried] = false;
  ValueMap map;
  Operation *rebuilt = rebuildLoop(ctx_, *pair.forward, keep, {}, map);
  if (!rebuilt)
    return fail("the forward layer loop reads a value it saves for the "
                "backward in a later layer");
  pair.forward = rebuilt;
  pair.counter = bodyCounter(*pair.forward);
  for (Stash &s : kept) {
    s.written = map.at(s.written);
    s.carried =
        size_t(std::count(keep.begin(), keep.begin() + s.carried, true));
  }
  pair.stashes = kept;
  return true;
}

// Whether B's op `b` computes what F's op `f` does.
bool Recompute::matches(Operation &b, Operation &f) const {
  if (b.name != f.name || b.numOperands() != f.numOperands() ||
      b.numResults() != f.numResults() || !sameAttrs(b.attrs, f.attrs) ||
      !sameRegions(b, f))
    return false;
  for (size_t i = 0; i < b.numResults(); ++i)
    if (b.result(i)->type != f.result(i)->type)
      return false;
  for (size_t i = 0; i < b.numOperands(); ++i) {
    auto it = forward_of_.find(b.operand(i));
    Value *want = it == forward_of_.end() ? b.operand(i) : it->second;
    if (f.operand(i) != want)
      return false;
  }
  return true;
}

// Rule 2's correspondence: which of B's ops recompute F's.
void Recompute::matchBackward(LoopPair &pair) {
  Block &fwd = pair.forward->region(1).front();
  Block &back = pair.backward->region(1).front();
  forward_of_.clear();
  recomputed_.clear();
  activation_.clear();
  forward_of_[pair.index] = pair.counter;
  for (const Stash &s : pair.stashes) {
    forward_of_[s.read] = s.written;
    activation_.insert(s.read);
  }
  // B's own values (its arguments and top-level results) stand for F's
  // only through forward_of_; anything else is outside both loops.
  std::unordered_set<Value *> local;
  for (size_t i = 0; i < back.numArguments(); ++i)
    local.insert(back.argument(i));
  std::map<std::pair<std::string_view, Value *>, std::vector<Operation *>>
      by_first;
  for (Operation &f : fwd)
    by_first[{f.name, f.numOperands() ? f.operand(0) : nullptr}].push_back(&f);
  for (Operation &b : back) {
    bool known = true, activation = false;
    for (size_t i = 0; i < b.numOperands() && known; ++i) {
      known = forward_of_.count(b.operand(i)) || !local.count(b.operand(i));
      activation |= activation_.count(b.operand(i)) > 0;
    }
    for (size_t i = 0; i < b.numResults(); ++i)
      local.insert(b.result(i));
    if (!known || b.numResults() == 0)
      continue;
    Value *first = nullptr;
    if (b.numOperands()) {
      auto it = forward_of_.find(b.operand(0));
      first = it == forward_of_.end() ? b.operand(0) : it->second;
    }
    auto candidates = by_first.find({b.name, first});
    if (candidates == by_first.end())
      continue;
    for (Operation *f : candidates->second)
      if (matches(b, *f)) {
        recomputed_.insert(&b);
        for (size_t i = 0; i < b.numResults(); ++i) {
          forward_of_[b.result(i)] = f->result(i);
          if (activation)
            activation_.insert(b.result(i));
        }
        break;
      }
  }
}

// Rule 2's choice: the recomputed values F saves under the policy, in B's
// order.
std::vector<Value *> Recompute::toSave(LoopPair &pair) {
  Block &back = pair.backward->region(1).front();
  std::unordered_set<Value *> read; // the recomputed values the rest reads
  for (Operation *op : recomputed_)
    for (size_t i = 0; i < op->numResults(); ++i)
      if (activation_.count(op->result(i)))
        for (Operation *user : usersOf(op->result(i)))
          if (!recomputed_.count(ancestorIn(user, back)))
            read.insert(op->result(i));
  std::unordered_set<Value *> chosen;
  if (policy_ == Policy::None)
    chosen = read;
  if (policy_ == Policy::Selective) {
    std::vector<Value *> stack(read.begin(), read.end());
    std::unordered_set<Value *> seen;
    while (!stack.empty()) {
      Value *v = stack.back();
      stack.pop_back();
      Operation *def = v->defining_op;
      if (!seen.insert(v).second || !activation_.count(v) || !def ||
          !recomputed_.count(def))
        continue;
      if (def->is("stablehlo.dot_general") ||
          def->is("stablehlo.custom_call")) {
        chosen.insert(v);
        continue;
      }
      for (size_t i = 0; i < def->numOperands(); ++i)
        stack.push_back(def->operand(i));
    }
  }
  std::vector<Value *> ordered;
  for (Operation &op : back)
    for (size_t i = 0; i < op.numResults(); ++i)
      if (chosen.count(op.result(i)))
        ordered.push_back(op.result(i));
  return ordered;
}

// F writes each of `values` (B's) into a new stack; B reads it from there.
bool Recompute::save(LoopPair &pair, const std::vector<Value *> &values) {
  if (values.empty())
    return true;
  const int64_t layers =
      pair.forward->result(pair.stashes[0].carried)->type->shape[0];
  std::vector<Value *> inits;
  LocalBuilder outside(ctx_, *pair.forward);
  for (Value *v : values) {
    std::vector<int64_t> shape{layers};
    shape.insert(shape.end(), v->type->shape.begin(), v->type->shape.end());
    inits.push_back(outside.splat(outside.reshaped(v->type, shape), 0.0));
  }
  const size_t old_count = pair.forward->numOperands();
  ValueMap map;
  std::vector<bool> keep(old_count, true);
  Operation *f = rebuildLoop(ctx_, *pair.forward, keep, inits, map);
  if (!f)
    return fail("cannot add stacks to the forward layer loop");
  pair.forward = f;
  pair.counter = bodyCounter(*f);
  Block &body = f->region(1).front();
  Operation *yield = body.back();
  LocalBuilder in_forward(ctx_, *yield);
  Value *zero = in_forward.splat(pair.counter->type, 0.0);
  for (size_t k = 0; k < values.size(); ++k) {
    Value *layer = map.at(forward_of_.at(values[k]));
    std::vector<int64_t> one{1};
    one.insert(one.end(), layer->type->shape.begin(), layer->type->shape.end());
    std::vector<Value *> update{body.argument(old_count + k),
                                in_forward.reshape(layer, one), pair.counter};
    update.insert(update.end(), one.size() - 1, zero);
    Operation *write = in_forward.create("stablehlo.dynamic_update_slice",
                                         update, {inits[k]->type});
    yield->setOperand(old_count + k, write->result(0));
    // B reads the layer where it computed it.
    Operation *def = values[k]->defining_op;
    LocalBuilder in_backward(ctx_, *def);
    std::vector<Value *> starts{pair.index};
    Value *index_zero = in_backward.splat(pair.index->type, 0.0);
    starts.insert(starts.end(), one.size() - 1, index_zero);
    Value *slice =
        in_backward.dynamicSlice(f->result(old_count + k), starts, one);
    values[k]->replaceAllUsesWith(
        in_backward.reshape(slice, values[k]->type->shape));
  }
  eraseTriviallyDeadOps(*pair.backward);
  return true;
}

bool Recompute::run() {
  if (module_.per_device)
    return fail("runs before propagation, on the global program (the "
                "per-device one has its collectives in the layers)");
  // What nothing reads (a gradient of a constant) reads nothing either.
  eraseTriviallyDeadOps(func_);
  LayerLoops loops = findLayerLoops(func_);
  if (!loops.error.empty())
    return fail(loops.error);
  // Pairing a backward trip with its forward one assumes one layer a trip.
  if (loops.trips != loops.layers)
    return fail("its layer loops run " +
                std::to_string(loops.layers / loops.trips) +
                " layers a trip (an unrolled scan); it recomputes loops of "
                "one layer a trip");
  // Each loop with its repeats merged, so that an op B shares with itself
  // (a table of RoPE angles) is one F shares too; before the stacks are
  // found, which a merge could otherwise leave naming an erased value.
  for (Operation *loop : loops.loops)
    mergeRepeats(loop->region(1).front());
  std::vector<LoopPair> pairs = findPairs(loops.loops);
  if (pairs.empty())
    return fail("no layer loop saves values (a dynamic_update_slice of "
                "[L, ...] stacks at its counter) that a later layer loop "
                "reads one layer at a time: no forward and backward pass");
  for (LoopPair &pair : pairs) {
    saved_before_ += int64_t(pair.stashes.size());
    if (!recomputeAll(pair))
      return false;
    matchBackward(pair);
    const std::vector<Value *> chosen = toSave(pair);
    if (!save(pair, chosen))
      return false;
    saved_after_ += int64_t(pair.stashes.size() + chosen.size());
  }
  static constexpr const char *kNames[] = {"full", "selective", "none"};
  const std::string values =
      std::to_string(saved_after_) + (saved_after_ == 1 ? " value" : " values");
  module_.op().attrs.set(
      ctx_.intern("shardlab.recompute"),
      ctx_.attrs.string(std::string(kNames[int(policy_)]) +
                        ": the forward layer loop saves " + values +
                        " per layer for the backward (the module saved " +
                        std::to_string(saved_before_) + ")"));
  return true;
}

} // namespace

bool recomputePass(Module &module, const PassOptions &options,
                   DiagnosticEngine &diags) {
  Operation *func = module.mainFunc();
  if (!func) {
    diags.error(module.op().loc, "shardlab-recompute: no entry function");
    return false;
  }
  const std::string policy = options.text("policy");
  const Policy p = policy == "none"        ? Policy::None
                   : policy == "selective" ? Policy::Selective
                                           : Policy::Full;
  return Recompute(module, *func, p, diags).run();
}

} // namespace shardlab
