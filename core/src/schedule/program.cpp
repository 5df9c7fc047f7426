// buildProgram: walks a function of a module lowered to explicit
// collectives and emits the costed per-device graph.
#include "ir/op_properties.h"
#include "ir/while_loops.h"
#include "passes/xla_support.h"
#include "program_internal.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace shardlab::schedule {
namespace detail {

LocalTensor localTensor(Value *value) {
  LocalTensor t;
  Type type = value ? value->type : nullptr;
  if (!type || !type->isRankedTensor() || !type->hasStaticShape())
    return t;
  t.shape = type->shape;
  t.dtype = type->element ? type->element->text : "";
  t.elements = 1;
  for (int64_t d : t.shape)
    t.elements *= d;
  const int64_t bits = type->element ? type->element->elementBitWidth() : 0;
  t.bytes = (t.elements * (bits > 0 ? bits : 32) + 7) / 8;
  return t;
}

// `head` says what was extrapolated and how; then the first three ops
// with why, and how many more.
std::string
extrapolationLine(const std::string &head,
                  const std::map<std::string, std::string> &extrapolated) {
  std::string line = head;
  size_t shown = 0;
  for (const auto &[op, why] : extrapolated) {
    if (shown == 3)
      break;
    line += (shown++ ? "; " : "") + op + " (" + why + ")";
  }
  if (extrapolated.size() > shown)
    line += "; and " + std::to_string(extrapolated.size() - shown) + " more";
  return line;
}

namespace {

using Env = std::unordered_map<const Value *, int64_t>;

// The while whose body `block` is, or null.
const Operation *whileOfBody(const Block *block) {
  const Region *region = block ? block->parent : nullptr;
  const Operation *loop = region ? region->parent : nullptr;
  return loop && loop->is("stablehlo.while") && &loop->region(1) == region
             ? loop
             : nullptr;
}

// Whether `init`, which starts `loop`'s state element `slot`, keeps its
// buffer there: XLA's copy insertion gives each element of a while's state
// a buffer of its own, so where one value starts several elements of the
// loop (two stacks of saved activations from one zero constant, say), the
// first keeps the value's buffer and the others start from copies. Any
// other reader of `init` needs it unchanged.
bool keptAsLoopState(const Value *init, const Operation &loop, size_t slot) {
  for (const OpOperand *use = init->firstUse(); use; use = use->next_use)
    if (use->owner != &loop || use->index() < slot)
      return false;
  return true;
}

// Whether every reader of `target` but `update` runs before it: each is an
// op of `update`'s block whose result `update` reads, directly or through
// other ops of the block (a row read back, added to and written in place:
// dw[i] += g). XLA's buffer assignment then gives the update its target's
// buffer, the old value being dead by the time it writes.
bool othersReadBefore(const Value *target, const Operation &update) {
  const Block *block = update.parentBlock();
  std::unordered_set<const Operation *> others;
  for (const OpOperand *use = target->firstUse(); use; use = use->next_use) {
    if (use->owner == &update)
      continue;
    if (use->owner->parentBlock() != block)
      return false;
    others.insert(use->owner);
  }
  std::unordered_set<const Operation *> seen;
  std::vector<const Operation *> stack{&update};
  size_t found = 0;
  while (!stack.empty() && found < others.size()) {
    const Operation *op = stack.back();
    stack.pop_back();
    for (size_t i = 0; i < op->numOperands(); ++i) {
      const Operation *def = op->operand(i)->defining_op;
      if (def && def->parentBlock() == block && seen.insert(def).second) {
        found += others.count(def);
        stack.push_back(def);
      }
    }
  }
  return found == others.size();
}

// Whether nothing but its one use reads `v`, the value an in-place update
// overwrites (or, `others_before`, its other readers run before the update:
// othersReadBefore). A while body's argument is, on the loop's first
// iteration, the loop's operand (the same node in `env`), which the loop
// must then be alone to read, or read first among its state's elements
// (keptAsLoopState); on later ones the previous iteration's result. (Where
// another op reads the old value, XLA's copy insertion copies it before the
// update.)
bool readOnce(const Env &env, const Value *v, bool others_before) {
  const Operation *entered = nullptr; // the loop `v` starts, if any
  size_t slot = 0;
  for (bool first = true;; first = false) {
    if (!v->hasOneUse() && !(first && others_before) &&
        !(entered && keptAsLoopState(v, *entered, slot)))
      return false;
    if (!v->isBlockArgument())
      return true;
    const Operation *loop = whileOfBody(v->owner_block);
    if (!loop)
      return false;
    const Value *init = loop->operand(v->index);
    const auto carried = env.find(v), before = env.find(init);
    if (carried == env.end() || before == env.end() ||
        carried->second != before->second)
      return true;
    entered = loop;
    slot = v->index;
    v = init;
  }
}

/// `map[key]`, made by `make()` the first time it is asked for: a loop
/// body's ops are emitted again every iteration, and what depends only on
/// the op is worked out once.
template <typename Map, typename Make>
typename Map::mapped_type &memoized(Map &map, const typename Map::key_type &key,
                                    Make make) {
  auto [it, fresh] = map.try_emplace(key);
  if (fresh)
    it->second = make();
  return it->second;
}

struct Builder {
  Module &module;
  const Coster &coster;
  Program &program;
  const ProgramOptions &options;
  std::string error;
  /// GEMMs costed outside the measured grid: `dot_general@12` -> why.
  std::map<std::string, std::string> extrapolated;
  /// GEMMs whose dtype key the table lacks, costed at their operands':
  /// `dot_general@12` -> which key at which.
  std::map<std::string, std::string> substituted;
  /// GEMMs the table could not cost, at the roofline: op -> dtype key.
  std::map<std::string, std::string> untabled;
  std::map<std::string, std::string> extrapolated_collectives;
  /// Collectives no model could cost: `all_reduce@40` -> why.
  std::map<std::string, std::string> failed_collectives;

  /// Fused attention calls: `custom_call@40` -> their softmax's scores.
  std::map<std::string, std::string> attention_softmax;

  /// What the tables could not price exactly for a GEMM or an attention
  /// call, under its label.
  void notePricing(const Operation &op, const OpCost &c) {
    if (c.pricedAsIs())
      return;
    const std::string name = label(op, "");
    if (!c.extrapolated.empty())
      extrapolated.emplace(name, c.extrapolated);
    if (!c.substituted.empty())
      substituted.emplace(name, c.substituted);
    if (!c.untabled.empty())
      untabled.emplace(name, c.untabled);
    if (!c.attention_softmax.empty())
      attention_softmax.emplace(name, c.attention_softmax);
  }

  Graph &graph() { return program.graph; }
  /// `name@line` and the suffix (the loop and call path), in one
  /// allocation: every node and assumption is named so.
  std::string label(const Operation &op, const std::string &suffix) const {
    char line[24];
    const auto end = std::to_chars(line, line + sizeof line, op.loc.line).ptr;
    std::string out;
    out.reserve(op.name.size() + 1 + size_t(end - line) + suffix.size());
    out.append(op.name).append(1, '@').append(line, end).append(suffix);
    return out;
  }
  /// The barrier after the last iteration of the loop that defined a value:
  /// a while's results exist once the whole loop has run.
  std::unordered_map<const Value *, int64_t> loop_end_of;
  /// `to` reads `value` (a data edge from its node, if it has one).
  void dependOn(const Env &env, const Value *value, int64_t to) {
    const auto it = env.find(value);
    if (it == env.end())
      return;
    graph().addEdge(it->second, to, coster.plainLatency());
    if (loop_end_of.empty())
      return;
    if (const auto end = loop_end_of.find(value); end != loop_end_of.end())
      graph().addEdge(end->second, to, 0, /*data=*/false);
  }
  void connect(const Env &env, Operation &op, int64_t to) {
    for (size_t i = 0; i < op.numOperands(); ++i)
      dependOn(env, op.operand(i), to);
  }
  int64_t resultBytes(Operation &op) {
    int64_t bytes = 0;
    for (size_t i = 0; i < op.numResults(); ++i)
      bytes += localTensor(op.result(i)).bytes;
    return bytes;
  }
  void bindResults(Env &env, Operation &op, int64_t node) {
    for (size_t i = 0; i < op.numResults(); ++i)
      env[op.result(i)] = node;
  }

  void emitCompute(Env &env, Operation &op, const std::string &suffix);
  void emitKernel(Env &env, const fusion::Kernel &kernel,
                  const std::string &suffix);
  bool isKernelOp(const Operation &op);
  bool emitCollective(Env &env, Operation &op, const std::string &suffix);
  void emitCombined(Env &env, const std::vector<Operation *> &members,
                    const std::string &suffix);
  void emitAsyncPair(Env &env, const std::vector<Operation *> &ops,
                     const CollectiveCall &call, const std::string &suffix,
                     const std::string &why);
  std::optional<fusion::CombineCandidate> combineCandidate(Operation &op);
  std::optional<fusion::CombineCandidate>
  newCombineCandidate(Operation &op, CollectiveKind kind);
  std::unordered_map<const Operation *, std::optional<fusion::CombineCandidate>>
      candidates;
  Operation *
  identicalCollective(Operation &op,
                      std::unordered_map<std::string, Operation *> &emitted);
  /// Each collective's CSE key ("" when it has none), built once.
  std::unordered_map<const Operation *, std::string> cse_keys;
  /// Emission order of each block, combined collectives as one step.
  std::unordered_map<const Block *, std::vector<std::vector<Operation *>>>
      block_steps;
  void emitWhile(Env &env, Operation &op, const std::string &suffix);
  void emitNamed(Env &env, Operation &op, const std::string &suffix);
  bool emitCall(Env &env, Operation &op, const std::string &suffix);
  void emitBranches(Env &env, Operation &op, const std::string &suffix);
  double regionCost(Region &region);
  /// The functions being expanded (a recursive call is costed as one op).
  std::vector<const Operation *> call_stack;
  std::set<const Operation *> seen_loops;
  std::vector<int64_t> emitBlock(Env &env, Block &block,
                                 const std::string &suffix);

  // A loop body is emitted once per iteration, the same ops each time: what
  // depends only on the op (its kernel plan, collective call, cost) is
  // worked out on the first iteration and reused.
  struct BlockKernels {
    std::vector<fusion::Kernel> kernels;
    std::unordered_map<const Operation *, const fusion::Kernel *> root_of;
    std::unordered_set<const Operation *> fused;
  };
  std::unordered_map<const Block *, BlockKernels> block_kernels;
  const BlockKernels &kernelsOf(Block &block);
  std::unordered_map<const Operation *, std::optional<CollectiveCall>> calls;
  const std::optional<CollectiveCall> &callOf(const Operation &op);
  struct CostedCollective {
    OpCost cost;
    CollectiveInfo info;
  };
  /// Keyed by the first op of the call (a combined call's first member).
  std::unordered_map<const Operation *, CostedCollective> collective_costs;
  /// Keyed by the call itself: the layers of an unrolled loop (gradient
  /// buckets) make the same call from ops of their own, costed once, and
  /// share its groups (which the scheduler's shared-device rule then
  /// recognises by pointer).
  struct CallLess {
    bool operator()(const CollectiveCall &a, const CollectiveCall &b) const {
      return std::tie(a.kind, a.dtype, a.operand_bytes, a.output_bytes,
                      a.groups,
                      a.pairs) < std::tie(b.kind, b.dtype, b.operand_bytes,
                                          b.output_bytes, b.groups, b.pairs);
    }
  };
  std::map<CollectiveCall, CostedCollective, CallLess> costs_by_call;
  /// A combined call: its members' bytes summed, and what the report says.
  struct CombinedCall {
    CollectiveCall call;
    std::string why;
  };
  std::unordered_map<const Operation *, CombinedCall> combined_calls;
  std::unordered_map<const Operation *, OpCost> op_costs;
  const OpCost &computeCostOf(Operation &op);
  std::unordered_map<const Operation *, OpCost> kernel_costs;
  std::unordered_map<const Operation *, std::shared_ptr<const FusionInfo>>
      fusions;
  int64_t inPlaceTarget(const Env &env, Operation &root,
                        const fusion::Kernel *kernel);
  /// By in-place op: whether its target's other readers run before it.
  std::unordered_map<const Operation *, bool> reads_before;
  int64_t sharedBuffer(const Env &env, const Value *target, Operation &root);
  int64_t beginLoop(const Env &env, Operation &op, const std::string &suffix);
  int64_t separateIteration(int64_t first, int64_t previous_end, bool more,
                            const Operation &op, const std::string &iteration,
                            const std::unordered_set<int64_t> &early,
                            const std::unordered_set<int64_t> &late);
  void pipelinedNodes(const Env &env, const fusion::PipelinedOps &ops,
                      int64_t first, std::unordered_set<int64_t> &early,
                      std::unordered_set<int64_t> &late);
};

void Builder::emitCompute(Env &env, Operation &op, const std::string &suffix) {
  Node node;
  node.name = label(op, suffix);
  node.line = op.loc.line;
  node.output_bytes = resultBytes(op);
  if (isNopOp(op) || isFreeCustomCall(op)) {
    node.kind = NodeKind::Nop;
    node.explanation = "no-op (bitcast, constant or bookkeeping)";
    if (op.is("sdy.reshard"))
      program.assumptions.push_back(
          node.name + ": sdy.reshard left in the module, costed as free");
  } else {
    const OpCost &c = computeCostOf(op);
    node.cost_us = c.cost_us;
    node.explanation = c.explanation;
    notePricing(op, c);
    if (isCheckCustomCall(op)) {
      node.explanation = "interpreter check: a comparison of its operands; " +
                         node.explanation;
    } else if ((op.is("stablehlo.custom_call") || op.is("mhlo.custom_call")) &&
               !isGemmCustomCall(op) && !isFusedAttention(op)) {
      const Attr *target = op.attrs.get("call_target_name");
      const std::string name = target ? target->str() : "?";
      if (program.not_costed[name]++ == 0)
        program.assumptions.push_back(
            "custom_call @" + name +
            ": no kernel model knows it; costed as its bytes at memory "
            "speed (fusion roofline)");
      node.explanation = "not costed: custom_call @" + name +
                         " has no kernel model; " + node.explanation;
    }
  }
  node.in_place_of = inPlaceTarget(env, op, nullptr);
  const int64_t id = graph().addNode(std::move(node));
  connect(env, op, id);
  bindResults(env, op, id);
}

// Ops a kernel can hold: not control flow, calls to known functions,
// collectives or terminators (the builder emits those itself).
bool Builder::isKernelOp(const Operation &op) {
  if (isBlockReturn(op) || op.is("stablehlo.while") ||
      op.is("stablehlo.case") || op.is("stablehlo.if") ||
      op.is("sdy.named_computation"))
    return false;
  if (op.is("func.call")) {
    const Attr *callee = op.attrs.get("callee");
    Operation *func = callee ? module.lookupSymbol(callee->str()) : nullptr;
    if (func && func->is("func.func") && func->numRegions() &&
        !func->region(0).empty())
      return false;
  }
  return !callOf(op);
}

const std::optional<CollectiveCall> &Builder::callOf(const Operation &op) {
  return memoized(calls, &op, [&] {
    return stablehloCollectiveCall(module, const_cast<Operation &>(op),
                                   program.topology.num_devices);
  });
}

const OpCost &Builder::computeCostOf(Operation &op) {
  return memoized(op_costs, &op, [&] { return coster.compute(module, op); });
}

const Builder::BlockKernels &Builder::kernelsOf(Block &block) {
  auto [it, fresh] = block_kernels.try_emplace(&block);
  if (!fresh)
    return it->second;
  fusion::FusionOptions fusion_options;
  fusion_options.enabled = options.fusion && !coster.approximate();
  BlockKernels &plan = it->second;
  plan.kernels =
      fusion::planKernels(block, fusion_options, [this](const Operation &op) {
        return isKernelOp(op);
      });
  for (const fusion::Kernel &kernel : plan.kernels) {
    plan.root_of[kernel.root] = &kernel;
    for (const Operation *m : kernel.members)
      if (m != kernel.root)
        plan.fused.insert(m);
  }
  return plan;
}

std::vector<int64_t> Builder::emitBlock(Env &env, Block &block,
                                        const std::string &suffix) {
  // The kernels of this block: a fused op is emitted with its kernel's root.
  const BlockKernels &plan = kernelsOf(block);
  const auto &root_of = plan.root_of;
  const auto &fused = plan.fused;
  auto cached = block_steps.find(&block);
  if (cached == block_steps.end()) {
    fusion::CombineOptions combine;
    combine.enabled = options.combine_collectives && !coster.approximate();
    cached = block_steps
                 .emplace(&block, fusion::orderWithCombinedCollectives(
                                      block, combine,
                                      [this](Operation &op) {
                                        return combineCandidate(op);
                                      }))
                 .first;
  }
  // XLA's CSE: a collective identical to one already emitted in this block
  // (same operands, kind, groups, dimension) is that one. Export writes one
  // per use of a resharded value.
  std::unordered_map<std::string, Operation *> emitted_collectives;
  for (const std::vector<Operation *> &step : cached->second) {
    if (step.size() == 1 && options.combine_collectives &&
        !coster.approximate()) {
      if (Operation *same =
              identicalCollective(*step.front(), emitted_collectives)) {
        for (size_t i = 0; i < same->numResults(); ++i)
          env[step.front()->result(i)] = env[same->result(i)];
        continue;
      }
    }
    if (step.size() > 1) {
      emitCombined(env, step, suffix);
      continue;
    }
    Operation &op = *step.front();
    if (graph().size() > options.max_nodes) {
      error = "program exceeds " + std::to_string(options.max_nodes) +
              " nodes (unrolled loops?)";
      return {};
    }
    if (isBlockReturn(op)) {
      std::vector<int64_t> yielded;
      for (size_t i = 0; i < op.numOperands(); ++i)
        yielded.push_back(env.count(op.operand(i)) ? env[op.operand(i)] : -1);
      return yielded;
    }
    if (auto it = root_of.find(&op); it != root_of.end())
      emitKernel(env, *it->second, suffix);
    else if (fused.count(&op))
      continue; // computed inside its kernel
    else if (op.is("stablehlo.while"))
      emitWhile(env, op, suffix);
    else if (op.is("func.call") && emitCall(env, op, suffix))
      continue;
    else if (op.is("stablehlo.case") || op.is("stablehlo.if"))
      emitBranches(env, op, suffix);
    else if (op.is("sdy.named_computation"))
      emitNamed(env, op, suffix);
    else if (!emitCollective(env, op, suffix))
      emitCompute(env, op, suffix);
  }
  return {};
}

// One kernel of several ops: costed once from its boundary (Coster::kernel),
// waiting for what its members read from outside it.
void Builder::emitKernel(Env &env, const fusion::Kernel &kernel,
                         const std::string &suffix) {
  Operation &root = *kernel.root;
  bool moves_nothing = true; // constants, bitcasts, sharding markers only
  for (const Operation *m : kernel.members)
    moves_nothing = moves_nothing && (isNopOp(*m) || isFreeCustomCall(*m));
  const bool plain =
      moves_nothing || (kernel.members.size() == 1 &&
                        kernel.kind != fusion::KernelKind::InPlace &&
                        root.name != "stablehlo.slice" &&
                        root.name != "stablehlo.dynamic_slice" &&
                        root.name != "stablehlo.gather");
  if (plain) {
    emitCompute(env, root, suffix);
    return;
  }
  for (const Operation *m : kernel.members)
    if (m->is("sdy.reshard"))
      program.assumptions.push_back(
          label(*m, suffix) +
          ": sdy.reshard left in the module, costed as free");
  Node node;
  node.name = label(root, suffix);
  node.line = root.loc.line;
  node.output_bytes = resultBytes(root);
  for (Operation *extra : kernel.extra_outputs)
    node.output_bytes += resultBytes(*extra);
  const OpCost &c = memoized(kernel_costs, &root,
                             [&] { return coster.kernel(module, kernel); });
  node.cost_us = c.cost_us;
  node.explanation = c.explanation;
  if (!c.pricedAsIs()) // noted under the kernel's GEMM or custom call
    for (const Operation *m : kernel.members)
      if (m->is("stablehlo.dot_general") || m->is("stablehlo.dot") ||
          m->is("stablehlo.custom_call")) {
        notePricing(*m, c);
        break;
      }
  // Members by their op alone: the node's name says which iteration.
  node.fusion = memoized(fusions, &root, [&] {
    auto info = std::make_shared<FusionInfo>();
    info->kind = std::string(fusion::toString(kernel.kind));
    for (const Operation *m : kernel.members)
      info->members.push_back(label(*m, ""));
    for (const Operation *extra : kernel.extra_outputs)
      info->second_outputs.push_back(label(*extra, ""));
    return std::shared_ptr<const FusionInfo>(std::move(info));
  });
  node.bytes_read = kernel.bytes_read;
  node.bytes_written = kernel.bytes_written;
  if (kernel.extra_outputs.empty())
    node.in_place_of = inPlaceTarget(env, root, &kernel);
  const int64_t id = graph().addNode(std::move(node));
  for (Value *input : kernel.inputs)
    dependOn(env, input, id);
  bindResults(env, root, id);
  for (Operation *extra : kernel.extra_outputs)
    bindResults(env, *extra, id);
}

// The argument of the while body whose next value `op` computes (its
// result is the body's i-th yielded value: argument i), or null.
const Value *loopStateArgument(const Operation &op) {
  for (OpOperand *use = op.result(0)->firstUse(); use; use = use->next_use) {
    const Operation *user = use->owner;
    Block *block = user->parentBlock();
    if (isBlockReturn(*user) && whileOfBody(block))
      return block->argument(use->index());
  }
  return nullptr;
}

// The buffer `root` (an op, or `kernel`'s root) writes its result into, as
// XLA's alias analysis gives one buffer to an in-place op's target and result
// (a dynamic_update_slice, a one-operand scatter) and to a while body's
// argument and the value it yields in its place (a gradient accumulated, a
// counter). -1: a buffer of its own.
int64_t Builder::inPlaceTarget(const Env &env, Operation &root,
                               const fusion::Kernel *kernel) {
  if (root.numResults() != 1)
    return -1;
  if (root.is("stablehlo.dynamic_update_slice") || root.is("stablehlo.scatter"))
    return sharedBuffer(env, root.operand(0), root);
  // Loop state updated elementwise (XLA shares an elementwise kernel's
  // operand buffer with its result; a GEMM or a transpose gets a copy).
  const Value *state = loopStateArgument(root);
  if (!state || state->type != root.result(0)->type || !state->hasOneUse() ||
      !isElementwise(*state->firstUse()->owner))
    return -1;
  bool reads = false;
  if (kernel)
    reads = kernel->kind == fusion::KernelKind::Loop &&
            std::find(kernel->inputs.begin(), kernel->inputs.end(), state) !=
                kernel->inputs.end();
  else
    reads = isElementwise(root) && state->firstUse()->owner == &root;
  return reads ? sharedBuffer(env, state, root) : -1;
}

// The node owning `target`'s buffer, for `root` to write into: when nothing
// else reads the old value (else XLA's copy insertion copies it first), it
// is no entry parameter (read-only unless donated) and it is as large.
int64_t Builder::sharedBuffer(const Env &env, const Value *target,
                              Operation &root) {
  // Which readers come first depends on the op alone: worked out once.
  const bool others_before =
      !target->hasOneUse() && memoized(reads_before, &root, [&] {
        return othersReadBefore(target, root);
      });
  if (!readOnce(env, target, others_before))
    return -1;
  const auto it = env.find(target);
  if (it == env.end())
    return -1;
  const int64_t owner = graph().bufferOf(it->second);
  const Node &node = graph().node(owner);
  if (node.is_parameter || node.output_bytes != resultBytes(root))
    return -1;
  return owner;
}

// A call site runs its callee's body: the callee's ops join the program
// under the call path (`.../func.call@12/@inner`), so JAX's nested jits,
// named scopes and shard_map bodies are costed where they are called.
bool Builder::emitCall(Env &env, Operation &op, const std::string &suffix) {
  const Attr *callee = op.attrs.get("callee");
  Operation *func = callee ? module.lookupSymbol(callee->str()) : nullptr;
  if (!func || !func->is("func.func") || func->numRegions() == 0 ||
      func->region(0).empty())
    return false;
  if (std::find(call_stack.begin(), call_stack.end(), func) !=
      call_stack.end()) {
    program.assumptions.push_back(label(op, suffix) + ": recursive call to @" +
                                  callee->str() + " costed once");
    return false;
  }
  Block &body = func->region(0).front();
  for (size_t i = 0; i < body.numArguments() && i < op.numOperands(); ++i)
    if (env.count(op.operand(i)))
      env[body.argument(i)] = env[op.operand(i)];
  call_stack.push_back(func);
  const std::vector<int64_t> yielded =
      emitBlock(env, body, suffix + "/" + label(op, "") + "/@" + callee->str());
  call_stack.pop_back();
  for (size_t i = 0; i < yielded.size() && i < op.numResults(); ++i)
    if (yielded[i] >= 0)
      env[op.result(i)] = yielded[i];
  return true;
}

// Compute time of the ops of `region` run one after another (nested
// regions included), for comparing the branches of a case.
double Builder::regionCost(Region &region) {
  double total = 0;
  for (auto &block : region.blocks)
    for (Operation &inner : *block) {
      if (inner.numRegions() && !inner.is("stablehlo.reduce")) {
        for (size_t r = 0; r < inner.numRegions(); ++r)
          total += regionCost(inner.region(r));
        continue;
      }
      if (!isNopOp(inner) && !isFreeCustomCall(inner))
        total += coster.compute(module, inner).cost_us;
    }
  return total;
}

// stablehlo.case / if: one branch runs, which one is data; the costliest is
// scheduled, as one op, and the report says so.
void Builder::emitBranches(Env &env, Operation &op, const std::string &suffix) {
  size_t costliest = 0;
  double best = -1;
  for (size_t r = 0; r < op.numRegions(); ++r) {
    const double cost = regionCost(op.region(r));
    if (cost > best) {
      best = cost;
      costliest = r;
    }
  }
  Node node;
  node.name = label(op, suffix);
  node.line = op.loc.line;
  node.output_bytes = resultBytes(op);
  node.cost_us = std::max(best, 0.0);
  node.explanation = "costliest of " + std::to_string(op.numRegions()) +
                     " branches (branch " + std::to_string(costliest) +
                     "), its ops in sequence";
  program.assumptions.push_back(node.name + ": " + node.explanation +
                                " scheduled");
  const int64_t id = graph().addNode(std::move(node));
  connect(env, op, id);
  bindResults(env, op, id);
}

// A named computation (the per-device program keeps them; manual
// computations are inlined into it) runs its body in place.
void Builder::emitNamed(Env &env, Operation &op, const std::string &suffix) {
  Block &body = op.region(0).front();
  for (size_t i = 0; i < body.numArguments() && i < op.numOperands(); ++i)
    if (env.count(op.operand(i)))
      env[body.argument(i)] = env[op.operand(i)];
  const std::vector<int64_t> yielded = emitBlock(env, body, suffix);
  for (size_t i = 0; i < yielded.size() && i < op.numResults(); ++i)
    if (yielded[i] >= 0)
      env[op.result(i)] = yielded[i];
}

bool Builder::emitCollective(Env &env, Operation &op,
                             const std::string &suffix) {
  const std::optional<CollectiveCall> &call = callOf(op);
  if (!call)
    return false;
  if (call->kind == CollectiveKind::None) {
    emitCompute(env, op, suffix + " (single-device group)");
    graph().node(graph().size() - 1).kind = NodeKind::Nop;
    graph().node(graph().size() - 1).cost_us = 0;
    return true;
  }
  emitAsyncPair(env, {&op}, *call, suffix, "");
  return true;
}

// The key under which XLA's combiners would merge `op` with others: kind,
// element type, device groups, reduction and dimension.
std::optional<fusion::CombineCandidate>
Builder::combineCandidate(Operation &op) {
  const CollectiveKind kind = stablehloCollectiveKind(op);
  if (kind != CollectiveKind::AllReduce && kind != CollectiveKind::AllGather &&
      kind != CollectiveKind::ReduceScatter)
    return std::nullopt;
  return memoized(candidates, &op,
                  [&] { return newCombineCandidate(op, kind); });
}

std::optional<fusion::CombineCandidate>
Builder::newCombineCandidate(Operation &op, CollectiveKind kind) {
  const std::optional<CollectiveCall> &call = callOf(op);
  if (!call || call->kind == CollectiveKind::None)
    return std::nullopt;
  fusion::CombineCandidate c;
  c.bytes = call->output_bytes;
  c.key = std::string(toString(kind)) + "|" + call->dtype + "|";
  for (const char *dim : {"all_gather_dim", "scatter_dimension"})
    if (const Attr *a =
            op.props().get(dim) ? op.props().get(dim) : op.attrs.get(dim))
      c.key += std::to_string(a->intValue()) + "|";
  if (op.numRegions() && !op.region(0).empty() && op.region(0).front().front())
    c.key += std::string(op.region(0).front().front()->name) + "|";
  for (const std::vector<int64_t> &group : call->groups) {
    for (int64_t d : group)
      c.key += std::to_string(d) + ",";
    c.key += ";";
  }
  return c;
}

// The earlier collective of this block `op` repeats, or null (and `op` is
// recorded as emitted).
Operation *Builder::identicalCollective(
    Operation &op, std::unordered_map<std::string, Operation *> &emitted) {
  const std::string &key = memoized(cse_keys, &op, [&] {
    std::optional<fusion::CombineCandidate> c = combineCandidate(op);
    if (!c)
      return std::string();
    for (size_t i = 0; i < op.numOperands(); ++i)
      c->key +=
          std::to_string(reinterpret_cast<uintptr_t>(op.operand(i))) + ",";
    for (size_t i = 0; i < op.numResults(); ++i)
      c->key +=
          std::to_string(reinterpret_cast<uintptr_t>(op.result(i)->type)) + ",";
    return std::move(c->key);
  });
  if (key.empty())
    return nullptr;
  auto [it, inserted] = emitted.emplace(key, &op);
  return inserted ? nullptr : it->second;
}

// Collectives XLA's combiners merge into one call: one start/done pair
// moving all members' bytes, waiting for all their operands; every
// member's results come from its done.
void Builder::emitCombined(Env &env, const std::vector<Operation *> &members,
                           const std::string &suffix) {
  const CombinedCall &combined = memoized(combined_calls, members.front(), [&] {
    CombinedCall made;
    made.call = *callOf(*members.front());
    std::string lines;
    for (size_t i = 1; i < members.size(); ++i) {
      const std::optional<CollectiveCall> &other = callOf(*members[i]);
      made.call.operand_bytes += other->operand_bytes;
      made.call.output_bytes += other->output_bytes;
      lines += (i > 1 ? ", " : "") + std::to_string(members[i]->loc.line);
    }
    if (coster.explain())
      made.why = "combined (XLA's " + std::string(toString(made.call.kind)) +
                 " combiner) with the " + std::to_string(members.size() - 1) +
                 " collectives of lines " + lines + "\n";
    return made;
  });
  emitAsyncPair(env, members, combined.call, suffix, combined.why);
}

// One collective call as an async start/done pair moving `call`'s bytes:
// the start waits for the operands of every op in `ops`, their results
// come from the done.
void Builder::emitAsyncPair(Env &env, const std::vector<Operation *> &ops,
                            const CollectiveCall &call,
                            const std::string &suffix, const std::string &why) {
  const Operation &first = *ops.front();
  const CostedCollective &costed = memoized(collective_costs, &first, [&] {
    return memoized(costs_by_call, call, [&] {
      CostedCollective made;
      made.cost = coster.collective(call, made.info);
      return made;
    });
  });
  const OpCost &c = costed.cost;
  CollectiveInfo info = costed.info;
  if (!c.extrapolated.empty())
    extrapolated_collectives.emplace(label(first, ""), c.extrapolated);
  if (!c.failed.empty())
    failed_collectives.emplace(label(first, ""), c.failed);
  Node start;
  start.name = label(first, suffix) + "-start";
  start.line = first.loc.line;
  start.kind = NodeKind::AsyncStart;
  start.collective = call.kind;
  start.device_groups = info.groups;
  start.output_bytes = call.output_bytes;
  start.explanation = why + c.explanation;
  if (coster.approximate())
    start.cost_us = 1;
  // Stream 1: NVLink, beside the network's stream 0 (stream_per_link).
  if (options.stream_per_link &&
      info.comm_type == cost::toText(cost::CommType::SinglePartition))
    start.stream = 1;
  Node done = start;
  done.name = label(first, suffix) + "-done";
  done.kind = NodeKind::AsyncDone;
  done.output_bytes = 0;
  const int64_t s = graph().addNode(std::move(start));
  const int64_t d = graph().addNode(std::move(done));
  for (Operation *op : ops)
    connect(env, *op, s);
  graph().linkAsyncPair(s, d, c.cost_us);
  for (Operation *op : ops)
    bindResults(env, *op, d);
  info.start_node = s;
  program.collectives.push_back(std::move(info));
}

// XLA's WhileLoopBackendConfig, `{"known_trip_count":{"n":"8"}}`, as XLA
// dumps keep it in the while's backend_config.
std::optional<int64_t> backendConfigTripCount(const Operation &op) {
  const std::optional<double> n =
      backendConfigNumber(op, {"known_trip_count", "n"});
  if (!n || *n < 0 || *n != std::floor(*n))
    return std::nullopt;
  return int64_t(*n);
}

// XLA schedules a while body as a computation of its own, so nothing of
// one iteration overlaps the next (no collective of iteration k+1 is
// prefetched during iteration k), nor the work before or after the loop
// (the while is one instruction there). The unrolled iterations keep that
// order through barriers: every node of iteration k precedes the one after
// it, which precedes every node of iteration k+1; the first iteration
// follows the loop's start, and what reads the loop's results follows the
// barrier after the last. With the collective pipeliner, the `early` nodes
// of iteration k+1 need not wait for the barrier before them (they run in
// iteration k, or before the loop), and the `late` nodes of iteration k
// need not finish before the barrier after them. Returns the barrier after
// the nodes from `first` on.
int64_t Builder::separateIteration(int64_t first, int64_t previous_end,
                                   bool more, const Operation &op,
                                   const std::string &iteration,
                                   const std::unordered_set<int64_t> &early,
                                   const std::unordered_set<int64_t> &late) {
  const int64_t last = graph().size();
  if (previous_end >= 0)
    for (int64_t node = first; node < last; ++node)
      if (!early.count(node))
        graph().addEdge(previous_end, node, 0, /*data=*/false);
  Node end;
  end.name = (more ? "iteration-end@" : "loop-end@") +
             std::to_string(op.loc.line) + iteration;
  end.kind = NodeKind::Nop;
  end.explanation = more ? "end of a loop iteration (iterations do not "
                           "overlap)"
                         : "end of a loop (its results exist from here)";
  const int64_t barrier = graph().addNode(std::move(end));
  for (int64_t node = first; node < last; ++node)
    if (!late.count(node))
      graph().addEdge(node, barrier, 0, /*data=*/false);
  return barrier;
}

// The barrier a loop's first iteration follows: the while starts once its
// operands are ready.
int64_t Builder::beginLoop(const Env &env, Operation &op,
                           const std::string &suffix) {
  Node begin;
  begin.name = "loop-begin@" + std::to_string(op.loc.line) + suffix;
  begin.kind = NodeKind::Nop;
  begin.explanation = "start of a loop (its operands are ready)";
  const int64_t barrier = graph().addNode(std::move(begin));
  connect(env, op, barrier);
  return barrier;
}

// The nodes of the iteration emitted from `first` on that stand for the
// pipelined ops: the results' nodes, and a collective's start with its
// done.
void Builder::pipelinedNodes(const Env &env, const fusion::PipelinedOps &ops,
                             int64_t first, std::unordered_set<int64_t> &early,
                             std::unordered_set<int64_t> &late) {
  auto collect = [&](const std::unordered_set<const Operation *> &from,
                     std::unordered_set<int64_t> &into) {
    for (const Operation *op : from)
      for (size_t i = 0; i < op->numResults(); ++i) {
        const auto it = env.find(op->result(i));
        if (it == env.end() || it->second < first)
          continue;
        into.insert(it->second);
        const Node &node = graph().node(it->second);
        if (node.kind == NodeKind::AsyncDone && node.partner >= first)
          into.insert(node.partner);
      }
  };
  collect(ops.prefetched, early);
  collect(ops.sunk, late);
}

// A trip count carried as a frontend attribute (`mhlo.frontend_attributes =
// {known_trip_count = "8"}`, or XLA's `_xla_known_trip_count`): a string
// of digits or an integer.
std::optional<int64_t> frontendAttributeTripCount(const Operation &op) {
  const Attr *frontend = op.attrs.get("mhlo.frontend_attributes");
  if (!frontend || frontend->kind != AttrKind::Dict)
    return std::nullopt;
  for (std::string_view key : {"known_trip_count", "_xla_known_trip_count"}) {
    const Attr *value = frontend->get(key);
    if (value && value->kind == AttrKind::Integer)
      return value->intValue();
    if (value && value->kind == AttrKind::String && !value->str().empty() &&
        value->str().find_first_not_of("0123456789") == std::string::npos &&
        value->str().size() < 19)
      return std::stoll(value->str());
  }
  return std::nullopt;
}

void Builder::emitWhile(Env &env, Operation &op, const std::string &suffix) {
  const std::string name = label(op, suffix);
  // A loop inside an unrolled loop or a twice-called function is listed
  // once, where it is first reached.
  const bool first = seen_loops.insert(&op).second;
  LoopInfo loop{name, 1, "constant bounds"};
  std::optional<int64_t> trips = constantTripCount(op);
  if (!trips && (trips = backendConfigTripCount(op)))
    loop.source = "backend_config known_trip_count";
  if (!trips && (trips = frontendAttributeTripCount(op)))
    loop.source = "mhlo.frontend_attributes known_trip_count";
  if (!trips && options.while_trip_count > 0) {
    trips = options.while_trip_count;
    loop.source = "--while-trip-count";
  }
  if (!trips) {
    loop.source = "unknown (one iteration)";
    if (first)
      program.assumptions.push_back(
          name + ": trip count unknown, one iteration scheduled (set "
                 "--while-trip-count N)");
  }
  loop.trip_count = trips ? std::max<int64_t>(*trips, 0) : 1;
  if (first)
    program.loops.push_back(loop);
  Block &body = op.region(1).front();
  std::optional<fusion::PipelinedOps> pipelined;
  if (options.pipeline_collectives && !coster.approximate())
    pipelined = fusion::pipelinedOps(op);
  std::vector<int64_t> carried;
  for (size_t i = 0; i < op.numOperands(); ++i)
    carried.push_back(env.count(op.operand(i)) ? env[op.operand(i)] : -1);
  const int64_t n = trips ? std::max<int64_t>(*trips, 0) : 1;
  // Extrapolated: iteration 0, iteration 1 standing for 1 .. n-1-kLast,
  // and the last kLast. The edges keep what differs there: a pipelined
  // collective's prologue and epilogue, and the work around the loop that
  // the scheduler lays into its last iterations (measured: up to three).
  constexpr int64_t kLast = 3;
  const bool extrapolate = options.extrapolate_loops && n > kLast + 2;
  const int64_t steady_copies = n - 1 - kLast;
  if (extrapolate && first)
    program.assumptions.push_back(
        name + ": " + std::to_string(n) + " iterations extrapolated from " +
        std::to_string(kLast + 2) +
        " (the first, one steady iteration counted " +
        std::to_string(steady_copies) + " times, the last " +
        std::to_string(kLast) + ")");
  // The barrier after the previous iteration; before the first, the loop's
  // start.
  int64_t previous_end = n > 0 ? beginLoop(env, op, suffix) : -1;
  // XLA's pipeliner moves a collective one iteration, no further: what
  // iteration k prefetches starts in iteration k - 1 (after the end of
  // k - 2), what it sinks finishes in iteration k + 1 (before its end).
  int64_t end_before_previous = -1;
  std::unordered_set<int64_t> previous_late;
  for (int64_t it = 0; it < n && error.empty(); ++it) {
    if (extrapolate && it == 2)
      it = n - kLast;
    for (size_t i = 0; i < body.numArguments() && i < carried.size(); ++i)
      if (carried[i] >= 0)
        env[body.argument(i)] = carried[i];
    const std::string iteration =
        suffix + "/" + label(op, "") + "#" + std::to_string(it);
    const int64_t first_node = graph().size();
    const std::vector<int64_t> yielded = emitBlock(env, body, iteration);
    if (extrapolate && it == 1)
      for (int64_t node = first_node; node < graph().size(); ++node)
        graph().node(node).repeat *= steady_copies;
    std::unordered_set<int64_t> early, late;
    if (pipelined)
      pipelinedNodes(env, *pipelined, first_node, early, late);
    const int64_t end = separateIteration(first_node, previous_end, it + 1 < n,
                                          op, iteration, early, late);
    for (int64_t node : previous_late)
      graph().addEdge(node, end, 0, /*data=*/false);
    if (end_before_previous >= 0)
      for (int64_t node : early)
        graph().addEdge(end_before_previous, node, 0, /*data=*/false);
    end_before_previous = previous_end;
    previous_end = end;
    previous_late = std::move(late);
    for (size_t i = 0; i < yielded.size() && i < carried.size(); ++i)
      carried[i] = yielded[i];
  }
  for (size_t i = 0; i < carried.size() && i < op.numResults(); ++i) {
    if (carried[i] >= 0)
      env[op.result(i)] = carried[i];
    if (n > 0 && previous_end >= 0)
      loop_end_of[op.result(i)] = previous_end;
  }
}

Operation *findFunc(Module &module, const std::string &name) {
  if (name == "main")
    return module.mainFunc();
  Operation *func = module.lookupSymbol(name);
  return func && func->is("func.func") ? func : nullptr;
}

Topology topologyOf(Module &module, int64_t gpus_per_node) {
  Topology t;
  t.gpus_per_node = gpus_per_node > 0 ? gpus_per_node : 8;
  for (Operation &op : module.body()) {
    const Attr *mesh = op.is("sdy.mesh") ? op.attrs.get("mesh") : nullptr;
    const Attr *sym = op.attrs.get("sym_name");
    if (!mesh || mesh->kind != AttrKind::Mesh ||
        mesh->mesh().totalSize() <= t.num_devices)
      continue;
    t.num_devices = mesh->mesh().totalSize();
    t.mesh_name = sym && sym->kind == AttrKind::String ? sym->str() : "";
    t.device_ids = mesh->mesh().device_ids;
    t.device_count_source = "mesh @" + t.mesh_name;
  }
  if (t.num_devices == 1) { // no mesh: the devices stablehlo collectives name
    t.num_devices = std::max<int64_t>(1, maxStablehloDeviceId(module) + 1);
    if (t.num_devices > 1)
      t.device_count_source = "replica groups";
  }
  if (t.num_devices == 1) { // nor those: what the module says it runs on
    const int64_t declared = declaredDeviceCount(module);
    if (declared > 1) {
      t.num_devices = declared;
      t.device_count_source = "mhlo.num_partitions x mhlo.num_replicas";
    }
  }
  if (t.device_ids.empty())
    for (int64_t i = 0; i < t.num_devices; ++i)
      t.device_ids.push_back(i);
  t.num_nodes = (t.num_devices + t.gpus_per_node - 1) / t.gpus_per_node;
  return t;
}

void emitParameters(Builder &b, Env &env, Operation &func) {
  Block &entry = func.region(0).front();
  for (size_t i = 0; i < entry.numArguments(); ++i) {
    Node param;
    param.name = "arg" + std::to_string(i);
    param.kind = NodeKind::Nop;
    param.is_parameter = true;
    param.output_bytes = localTensor(entry.argument(i)).bytes;
    param.explanation = "entry parameter";
    env[entry.argument(i)] = b.graph().addNode(std::move(param));
  }
}

void emitReturn(Builder &b, const std::vector<int64_t> &yielded) {
  Node ret;
  ret.name = "return";
  ret.kind = NodeKind::Nop;
  const int64_t id = b.graph().addNode(std::move(ret));
  for (int64_t from : yielded)
    if (from >= 0)
      b.graph().addEdge(from, id, b.coster.plainLatency());
}

// The first value of unknown shape (a `?` dimension or an unranked tensor)
// in `func`, as an error; empty when every shape is static. Shardy lets
// dynamic function arguments through propagation, but bytes and FLOPs of
// a step need every shape.
std::string dynamicShapeError(Operation &func, Location &error_loc) {
  std::string error;
  auto check = [&](Type type, const Location &where, std::string_view what) {
    if (!error.empty() || !type->isTensor() ||
        (type->isRankedTensor() && type->hasStaticShape()))
      return;
    error_loc = where;
    error = std::string(what) + " has type " + type->text +
            "; the schedule only supports ranked tensors with a static "
            "shape (export the module with concrete shapes)";
  };
  auto check_op = [&](Operation &op) {
    for (size_t r = 0; r < op.numRegions(); ++r)
      for (auto &block : op.region(r).blocks)
        for (size_t i = 0; i < block->numArguments(); ++i)
          check(block->argument(i)->type, op.loc,
                std::string(op.name) + " block argument " + std::to_string(i));
    for (size_t i = 0; i < op.numResults(); ++i)
      check(op.result(i)->type, op.loc,
            std::string(op.name) + " result " + std::to_string(i));
  };
  check_op(func);
  walk(func, check_op);
  return error;
}

} // namespace
} // namespace detail

namespace {

// How the fused attention calls were priced, for their assumption line.
std::string attentionPricing(const ProgramOptions &options) {
  const auto &measured = options.fused_attention;
  if (!measured)
    return "priced as the GEMMs they fuse, at the GEMM table's rates; the "
           "softmax between them (per score an exponential, a running max "
           "and sum, conversions) is not priced (a table's "
           "\"fused_attention\" entry, measured by bench/gpu/ingest.py, "
           "prices it)";
  char text[256];
  std::snprintf(text, sizeof text,
                "priced as the GEMMs they fuse, at the GEMM table's rates, "
                "times x%.3g (forward) and x%.3g (backward) for the whole "
                "call, softmax included, from ",
                measured->forward_slowdown, measured->backward_slowdown);
  return text + measured->source;
}

// The program one device runs is what the per-device steps make of the
// module (perDeviceSteps, the end of the "partition" pipeline): the
// scheduler reads types as per-device sizes and collectives as StableHLO
// ones, never shardings. A pipelined layout's stages are then cut out of it
// (shardlab-pipeline-stages), and XLA's GPU collective rewrites run (the
// gpu stage: an all-reduce whose reader keeps a part is a reduce-scatter).
Status toPerDevice(Module &module, const ProgramOptions &options,
                   DiagnosticEngine &diags) {
  PassPipeline pipeline;
  if (!module.per_device)
    for (const auto &[flag, pass_options] : perDeviceSteps())
      if (Status added = appendPass(pipeline, flag, pass_options); !added)
        return added;
  if (options.split_micro_batches)
    if (Status added = appendPass(pipeline, "shardlab-split-micro-batches", "");
        !added)
      return added;
  if (options.pipeline_stages > 0)
    if (Status added = appendPass(
            pipeline, "shardlab-pipeline-stages",
            "stages=" + std::to_string(options.pipeline_stages) +
                " schedule=" + options.pipeline_schedule + " virtual-stages=" +
                std::to_string(options.pipeline_virtual_stages) +
                " stage-kind=" + options.pipeline_stage_kind);
        !added)
      return added;
  // What XLA's GPU compiler makes of the collectives before scheduling.
  for (const auto &[flag, pass_options] : gpuSteps())
    if (Status added = appendPass(pipeline, flag, pass_options); !added)
      return added;
  std::string failed;
  if (runPassPipeline(module, pipeline, diags, &failed))
    return success();
  std::string why;
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error) {
      why = ": " + d.message;
      break;
    }
  return makeError("cannot make the per-device program: " + failed + " failed" +
                   why);
}

// What a rewrite of the per-device program assumed (its module attribute).
void rewriteAssumptions(Module &module, std::vector<std::string> &out) {
  for (const auto &[attr, what] :
       {std::pair{"shardlab.micro_batches", "micro-batches: "},
        std::pair{"shardlab.pipeline", "pipeline: "},
        std::pair{"shardlab.recompute", "recompute: "}}) {
    const Attr *said = module.op().attrs.get(attr);
    if (said && said->kind == AttrKind::String)
      out.push_back(what + said->str());
  }
}

} // namespace

Result<Program> buildProgram(Module &module, const ProgramOptions &options,
                             DiagnosticEngine &diags) {
  std::vector<std::string> padding;
  if (!module.per_device)
    padding = detail::paddingAssumptions(module);
  if (Status local = toPerDevice(module, options, diags); !local)
    return local.error();
  Operation *func = detail::findFunc(module, options.func_name);
  if (!func || func->numRegions() == 0 || func->region(0).empty())
    return makeError("no function '" + options.func_name +
                     "' (and not exactly one func.func) in the module");
  Location where;
  std::string error = detail::dynamicShapeError(*func, where);
  if (!error.empty()) {
    if (where.line)
      diags.error(where, error);
    return makeError(error);
  }
  Result<detail::Coster> coster = detail::Coster::create(options);
  if (!coster)
    return coster.error();
  Program program;
  program.assumptions = std::move(padding);
  rewriteAssumptions(module, program.assumptions);
  program.topology = detail::topologyOf(module, options.sol.gpus_per_node);
  if (options.estimator == EstimatorMode::Real) {
    program.hardware = options.hardware;
    program.network = options.sol;
    if (options.pipeline_collectives && options.stream_per_link)
      program.band_schedule = BandSchedule::Overlapped;
    program.gemm_rates =
        options.table
            ? "the table given (" + options.table->metadata.source + ")"
            : cost::presetGemmSource(options.hardware);
  }
  detail::Builder b{module, *coster, program, options, {}};
  detail::Env env;
  detail::emitParameters(b, env, *func);
  detail::emitReturn(b, b.emitBlock(env, func->region(0).front(), ""));
  if (!b.error.empty())
    return makeError(b.error);
  // "GEMM table: 3 GEMMs outside ...: dot_general@12 (why); ..."
  const auto say = [&](const char *table, const char *noun, const char *what,
                       const std::map<std::string, std::string> &ops) {
    if (!ops.empty())
      program.assumptions.push_back(detail::extrapolationLine(
          std::string(table) + ": " + std::to_string(ops.size()) + " " + noun +
              (ops.size() == 1 ? " " : "s ") + what + ": ",
          ops));
  };
  say("GEMM table", "GEMM",
      "outside the measured grid of their dtype, costed at the rate of its "
      "edge",
      b.extrapolated);
  say("GEMM table", "GEMM",
      "of a dtype key it does not have, costed at their operands' key and "
      "the wider result's extra bytes at HBM bandwidth",
      b.substituted);
  say("GEMM table", "GEMM",
      "of a dtype key it does not have, costed by the roofline at the "
      "datasheet peak of their operands' type",
      b.untabled);
  say("fused attention", "call", attentionPricing(options).c_str(),
      b.attention_softmax);
  say("collective table", "collective",
      "moving more than its largest measured message, costed at that "
      "message's throughput",
      b.extrapolated_collectives);
  program.uncosted_collectives = int64_t(b.failed_collectives.size());
  if (!b.failed_collectives.empty())
    program.assumptions.push_back(detail::extrapolationLine(
        "not costed: " + std::to_string(b.failed_collectives.size()) +
            " collective" + (b.failed_collectives.size() == 1 ? "" : "s") +
            " no model could cost, each taking XLA's fallback (its "
            "kHighLatency, 5,000 us): ",
        b.failed_collectives));
  return program;
}

} // namespace shardlab::schedule
