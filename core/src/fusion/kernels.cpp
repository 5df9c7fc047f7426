#include "shardlab/fusion/kernels.h"

#include "ir/op_properties.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace shardlab::fusion {

namespace {

// ---- what an op can be in a kernel ------------------------------------------

bool isOneOf(const Operation &op,
             std::initializer_list<std::string_view> names) {
  for (std::string_view name : names)
    if (op.name == name)
      return true;
  return false;
}

/// Ops that move no data of their own: a bitcast in a kernel, a literal, a
/// sharding marker.
bool isTransparent(const Operation &op) {
  if (isOneOf(op, {"stablehlo.reshape", "stablehlo.constant", "sdy.constant",
                   "stablehlo.get_tuple_element", "stablehlo.tuple",
                   "sdy.sharding_constraint", "sdy.reshard",
                   "sdy.propagation_barrier"}))
    return true;
  if (op.is("stablehlo.bitcast_convert"))
    return op.numOperands() == 1 && op.numResults() == 1 &&
           valueBytes(op.operand(0)) == valueBytes(op.result(0));
  if (op.is("stablehlo.custom_call")) {
    std::string_view target = customCallTarget(op);
    return target == "Sharding" || target == "SPMDFullToShardShape" ||
           target == "SPMDShardToFullShape";
  }
  return false;
}

bool isGemm(const Operation &op) {
  if (op.is("stablehlo.dot_general") || op.is("stablehlo.dot"))
    return true;
  std::string_view target = customCallTarget(op);
  return op.is("stablehlo.custom_call") &&
         (target == "__cublas$gemm" || target == "__cublas$lt$matmul" ||
          target == "__cublas$lt$matmul$f8");
}

/// Reads of operand 0 limited to what the op takes.
bool readsWhatItTakes(const Operation &op) {
  return isOneOf(
      op, {"stablehlo.slice", "stablehlo.dynamic_slice", "stablehlo.gather"});
}

/// Ops loop fusion merges into the kernel that consumes them.
bool isLoopFusible(const Operation &op) {
  if (isTransparent(op))
    return true;
  if (op.numRegions() != 0)
    return false;
  if (isElementwise(op) && op.dialect() == "stablehlo")
    return true;
  return isOneOf(
      op, {"stablehlo.broadcast_in_dim", "stablehlo.broadcast",
           "stablehlo.transpose", "stablehlo.slice", "stablehlo.dynamic_slice",
           "stablehlo.gather", "stablehlo.pad", "stablehlo.reverse",
           "stablehlo.concatenate", "stablehlo.iota", "stablehlo.select",
           "stablehlo.clamp", "stablehlo.compare", "stablehlo.convert"});
}

/// True when every result is a tensor of one element: index arithmetic.
bool hasOnlyScalarResults(const Operation &op) {
  if (op.numResults() == 0)
    return false;
  for (size_t r = 0; r < op.numResults(); ++r) {
    const Type type = op.result(r)->type;
    if (!type || !type->isRankedTensor() || !type->hasStaticShape() ||
        type->numElements() != 1)
      return false;
  }
  return true;
}

/// Producers worth computing again in each consumer rather than writing out:
/// the data-free ones, and any scalar (a loop's index arithmetic feeding
/// several slices and updates is one element, recomputed in each kernel for
/// nothing, where writing it out would cost a kernel launch).
bool isCheapToDuplicate(const Operation &op) {
  return isTransparent(op) || hasOnlyScalarResults(op) ||
         isOneOf(op, {"stablehlo.broadcast_in_dim", "stablehlo.broadcast",
                      "stablehlo.iota", "stablehlo.convert"});
}

KernelKind kindOf(const Operation &op) {
  if (isGemm(op))
    return KernelKind::Gemm;
  if (op.is("stablehlo.reduce") || op.is("stablehlo.reduce_window"))
    return KernelKind::Reduction;
  if (op.is("stablehlo.dynamic_update_slice"))
    return KernelKind::InPlace;
  if (isLoopFusible(op))
    return KernelKind::Loop;
  return KernelKind::Single;
}

bool absorbsProducers(KernelKind kind) {
  return kind == KernelKind::Loop || kind == KernelKind::Reduction ||
         kind == KernelKind::InPlace;
}

// ---- the planner
// ----------------------------------------------------------------

struct Group {
  KernelKind kind = KernelKind::Single;
  Operation *root = nullptr;
  std::vector<Operation *> members;
  bool alive = true;
  /// The op whose iteration space the kernel runs: its reduce, else its
  /// root (sibling fusion needs the two heroes to match).
  Operation *hero = nullptr;
};

/// What a kernel iterates over: the shape it writes (a loop kernel) or
/// reads and the dimensions it reduces (a reduction).
struct IterationSpace {
  std::vector<int64_t> shape;
  std::vector<int64_t> reduced;
  bool reduction = false;
};

std::optional<IterationSpace> iterationSpace(const Operation &hero) {
  IterationSpace space;
  const Value *value = nullptr;
  if (hero.is("stablehlo.reduce")) {
    const Attr *dims = hero.attrs.get("dimensions");
    if (hero.numOperands() < 2 || !dims || dims->kind != AttrKind::DenseArray)
      return std::nullopt;
    value = hero.operand(0);
    space.reduced = dims->ints();
    space.reduction = true;
  } else if (hero.numResults() == 1) {
    value = hero.result(0);
  }
  if (!value || !value->type || !value->type->isRankedTensor() ||
      !value->type->hasStaticShape() || value->type->numElements() <= 1)
    return std::nullopt;
  space.shape = value->type->shape;
  return space;
}

// XLA's ShapesCompatibleForMultiOutputFusion, simplified: two loop kernels
// writing one shape, two reductions of one shape over the same dimensions,
// or a loop kernel writing the shape a reduction reads.
bool sameIterationSpace(const IterationSpace &a, const IterationSpace &b) {
  if (a.shape != b.shape)
    return false;
  return !(a.reduction && b.reduction) || a.reduced == b.reduced;
}

class Planner {
public:
  Planner(Block &block,
          const std::function<bool(const Operation &)> &is_compute)
      : block_(block), is_compute_(is_compute) {
    int64_t position = 0;
    for (Operation &op : block) {
      order_[&op] = position++;
      if (!is_compute(op))
        continue;
      const int id = static_cast<int>(groups_.size());
      groups_.push_back({kindOf(op), &op, {&op}, true, &op});
      of_[&op] = {id};
      ops_.push_back(&op);
    }
  }

  void fuseEpilogues();
  void fuseProducers();
  void fuseSiblings();
  std::vector<Kernel> kernels() const;

private:
  /// The only user of `op`'s only result, when it is a compute op here.
  Operation *soleUser(Operation &op) const {
    if (op.numResults() != 1 || !op.result(0)->hasOneUse())
      return nullptr;
    Operation *user = op.result(0)->firstUse()->owner;
    return of_.count(user) ? user : nullptr;
  }
  bool isEpilogue(const Operation &user, const Value *acc,
                  bool on_product) const;
  bool claimedByOtherKernel(Operation &user, int gemm) const;
  bool isBroadcastOfScalarConstant(const Value *value) const;
  void fuseAsSecondOutput(Operation &producer, const std::set<int> &consumers);
  void moveInto(Operation &producer, const std::set<int> &groups);
  void merge(int into, Operation &op);
  void absorb(int into, int from);
  bool absorbIntoGemm(Operation &producer, Operation &user);
  std::vector<int> siblingCandidates(const Value &shared) const;
  bool canFuseSiblings(int a, int b) const;
  void mergeSiblings(int into, int from);
  int64_t orderInBlock(const Operation *op) const;

  Block &block_;
  const std::function<bool(const Operation &)> &is_compute_;
  std::vector<Group> groups_;
  std::vector<Operation *> ops_;
  std::unordered_map<const Operation *, std::vector<int>> of_;
  std::unordered_map<const Operation *, int64_t> order_;
};

bool Planner::isBroadcastOfScalarConstant(const Value *value) const {
  const Operation *def = value->defining_op;
  if (!def ||
      !isOneOf(*def, {"stablehlo.broadcast_in_dim", "stablehlo.broadcast"}) ||
      def->numOperands() != 1)
    return false;
  const Operation *c = def->operand(0)->defining_op;
  return c && (c->is("stablehlo.constant") || c->is("sdy.constant"));
}

// A matrix the GEMM's product is added to, which XLA's GEMM rewriter folds
// into the cuBLAS call as C with beta = 1 (FuseMatrixBiasAdd): the add is
// right on the product, the matrix has the product's type, and nothing else
// reads it, so its buffer may be overwritten (an entry function's argument
// may not: it is the caller's).
//   %d = dot_general %x, %g          (the only user of %d is the add)
//   %s = add %acc, %d                (%acc: a loop-carried accumulator)
// is one cuBLAS call that reads %acc and writes %s in its place.
bool isOverwritableMatrixBias(const Value *bias, const Value *product) {
  if (!bias->type || !product->type || !(bias->type == product->type) ||
      !bias->hasOneUse())
    return false;
  if (!bias->isBlockArgument())
    return true;
  const Block *block = bias->owner_block;
  const Region *region = block ? block->parent : nullptr;
  const Operation *owner = region ? region->parent : nullptr;
  return owner && !owner->is("func.func");
}

// What the GEMM rewriter folds into a cuBLAS(Lt) call after the product:
// bias, ReLU, a scalar scale, the output type; right on the product, an
// overwritable matrix (beta = 1).
bool Planner::isEpilogue(const Operation &user, const Value *acc,
                         bool on_product) const {
  if (user.numOperands() == 1)
    return user.is("stablehlo.convert");
  if (user.numOperands() != 2)
    return false;
  const Value *other =
      user.operand(0) == acc ? user.operand(1) : user.operand(0);
  const Operation *def = other->defining_op;
  const bool broadcast = def && isOneOf(*def, {"stablehlo.broadcast_in_dim",
                                               "stablehlo.broadcast"});
  if (user.is("stablehlo.add"))
    return broadcast || (on_product && isOverwritableMatrixBias(other, acc));
  if (user.is("stablehlo.maximum") || user.is("stablehlo.multiply"))
    return isBroadcastOfScalarConstant(other);
  return false;
}

// Group `from`'s members join group `into` (an op computed in both stays
// once) and `from` is retired.
void Planner::absorb(int into, int from) {
  Group &source = groups_[size_t(from)];
  for (Operation *m : source.members) {
    std::vector<int> &owners = of_[m];
    if (std::find(owners.begin(), owners.end(), into) != owners.end()) {
      std::erase(owners, from);
      continue;
    }
    std::replace(owners.begin(), owners.end(), from, into);
    groups_[size_t(into)].members.push_back(m);
  }
  source.alive = false;
  source.members.clear();
}

void Planner::merge(int into, Operation &op) {
  const std::vector<int> groups = of_[&op]; // a copy: absorb edits it
  for (int g : groups)
    if (g != into)
      absorb(into, g);
}

// Whether `user` is already another GEMM's epilogue: the sum of two
// products (add(dot a, dot b)) is two cuBLAS calls, the second reading the
// first's product as its matrix C, never one kernel; the first GEMM in
// program order takes the add.
bool Planner::claimedByOtherKernel(Operation &user, int gemm) const {
  const auto it = of_.find(&user);
  if (it == of_.end())
    return false;
  for (int g : it->second)
    if (g != gemm && groups_[size_t(g)].members.size() > 1)
      return true;
  return false;
}

void Planner::fuseEpilogues() {
  for (Operation *op : ops_) {
    if (!isGemm(*op) || op->numResults() != 1)
      continue;
    const int gemm = of_[op].front();
    Operation *acc = op;
    for (int steps = 0; steps < 4; ++steps) {
      Operation *user = soleUser(*acc);
      if (!user || !isEpilogue(*user, acc->result(0), acc == op) ||
          claimedByOtherKernel(*user, gemm))
        break;
      merge(gemm, *user);
      groups_[size_t(gemm)].root = user;
      acc = user;
    }
  }
}

// What a GEMM kernel takes in from a producer: a transpose of the two minor
// dimensions feeding the product is an operand flag of the cuBLAS call; the
// broadcast bias or scale feeding the epilogue is read as a vector or scalar;
// bitcasts and constants move nothing.
bool Planner::absorbIntoGemm(Operation &producer, Operation &user) {
  if (isTransparent(producer))
    return true;
  if (!isGemm(user))
    return isOneOf(producer,
                   {"stablehlo.broadcast_in_dim", "stablehlo.broadcast"});
  if (!producer.is("stablehlo.transpose"))
    return false;
  const Attr *perm = producer.attrs.get("permutation");
  if (!perm || perm->kind != AttrKind::DenseArray)
    return false;
  const std::vector<int64_t> &p = perm->ints();
  const size_t n = p.size();
  for (size_t i = 0; i + 2 < n; ++i)
    if (p[i] != int64_t(i))
      return false;
  return n >= 2;
}

void Planner::fuseProducers() {
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    Operation &producer = **it;
    std::vector<int> &mine = of_[&producer];
    if (mine.size() != 1 || groups_[size_t(mine.front())].members.size() != 1 ||
        !isLoopFusible(producer))
      continue;
    // The kernels that read it; a reader outside them (a return, a
    // collective, a loop) needs it in memory.
    std::set<int> consumers;
    bool materialized = false;
    for (size_t r = 0; r < producer.numResults(); ++r)
      for (OpOperand *use = producer.result(r)->firstUse(); use;
           use = use->next_use) {
        Operation *user = use->owner;
        auto found = of_.find(user);
        if (found == of_.end()) {
          materialized = true;
          continue;
        }
        for (int g : found->second) {
          const Group &group = groups_[size_t(g)];
          const bool buffer_of_update = group.kind == KernelKind::InPlace &&
                                        group.root == user && use->index() == 0;
          if (group.kind == KernelKind::Gemm && absorbIntoGemm(producer, *user))
            consumers.insert(g);
          else if (!absorbsProducers(group.kind) || buffer_of_update)
            materialized = true;
          else
            consumers.insert(g);
        }
      }
    if (consumers.empty())
      continue;
    if (materialized ||
        (consumers.size() > 1 && !isCheapToDuplicate(producer))) {
      fuseAsSecondOutput(producer, consumers);
      continue;
    }
    moveInto(producer, consumers);
  }
}

// A producer that was a kernel of its own becomes a member of `groups`
// (several: computed again in each).
void Planner::moveInto(Operation &producer, const std::set<int> &groups) {
  std::vector<int> &mine = of_[&producer];
  groups_[size_t(mine.front())].alive = false;
  groups_[size_t(mine.front())].members.clear();
  mine.clear();
  for (int g : groups) {
    groups_[size_t(g)].members.push_back(&producer);
    mine.push_back(g);
  }
}

// Multi-output fusion into a reduction (kernels.h): `producer` joins the
// reduction kernel among `consumers` whose reduce reads a tensor of its
// shape, when every reader outside that kernel comes after the reduce.
//   %e = exponential %x              -> one kernel: reads %x, writes %e
//   %s = reduce(%e) add                  and %s
//   %d = divide %e, broadcast(%s)    -> reads %e (written once)
void Planner::fuseAsSecondOutput(Operation &producer,
                                 const std::set<int> &consumers) {
  if (producer.numResults() != 1 || isTransparent(producer) ||
      isCheapToDuplicate(producer))
    return;
  const Type shape = producer.result(0)->type;
  if (!shape || !shape->isRankedTensor() || !shape->hasStaticShape())
    return;
  int into = -1;
  for (int g : consumers) {
    const Group &group = groups_[size_t(g)];
    const Operation *root = group.root;
    if (group.kind != KernelKind::Reduction || !root->is("stablehlo.reduce") ||
        root->numOperands() < 2 || !root->operand(0)->type ||
        root->operand(0)->type->shape != shape->shape)
      continue;
    if (into < 0 || order_.at(root) < order_.at(groups_[size_t(into)].root))
      into = g;
  }
  if (into < 0)
    return;
  const Group &target = groups_[size_t(into)];
  const std::unordered_set<const Operation *> inside(target.members.begin(),
                                                     target.members.end());
  for (OpOperand *use = producer.result(0)->firstUse(); use;
       use = use->next_use) {
    if (inside.count(use->owner))
      continue;
    // A reader in a nested region counts where its op of this block is.
    const Operation *reader = use->owner;
    while (reader && !order_.count(reader))
      reader = reader->parentOp();
    if (!reader || order_.at(reader) <= order_.at(target.root))
      return;
  }
  moveInto(producer, {into});
}

// ---- sibling multi-output fusion ----------------------------------------

// Where `op` runs in this block: a reader inside a nested region runs where
// its op of this block does (-1: not in this block).
int64_t Planner::orderInBlock(const Operation *op) const {
  while (op && !order_.count(op))
    op = op->parentOp();
  return op ? order_.at(op) : -1;
}

// The loop and reduction kernels that read `shared` from memory, in the
// program order of their roots: the candidates of XLA's FuseSiblings.
std::vector<int> Planner::siblingCandidates(const Value &shared) const {
  std::vector<int> found;
  for (const OpOperand *use = shared.firstUse(); use; use = use->next_use) {
    auto owners = of_.find(use->owner);
    if (owners == of_.end())
      continue;
    for (int g : owners->second) {
      const Group &group = groups_[size_t(g)];
      const bool transparent_only =
          std::all_of(group.members.begin(), group.members.end(),
                      [](const Operation *m) { return isTransparent(*m); });
      if (!group.alive || transparent_only ||
          (group.kind != KernelKind::Loop &&
           group.kind != KernelKind::Reduction) ||
          std::find(found.begin(), found.end(), g) != found.end())
        continue;
      found.push_back(g);
    }
  }
  std::sort(found.begin(), found.end(), [&](int a, int b) {
    return order_.at(groups_[size_t(a)].root) <
           order_.at(groups_[size_t(b)].root);
  });
  return found;
}

// One kernel in place of `a` and `b` is emitted at the later root, so
// everything outside that reads what the earlier one writes must come after
// that root (which also rules out a path between them: neither reads the
// other's results). Ops computed again in several kernels write nothing.
bool Planner::canFuseSiblings(int a, int b) const {
  const Group &first = groups_[size_t(a)];
  const Group &second = groups_[size_t(b)];
  const std::optional<IterationSpace> space_a = iterationSpace(*first.hero);
  const std::optional<IterationSpace> space_b = iterationSpace(*second.hero);
  if (!space_a || !space_b || !sameIterationSpace(*space_a, *space_b))
    return false;
  const bool a_first = order_.at(first.root) < order_.at(second.root);
  const Group &earlier = a_first ? first : second;
  const int64_t emitted_at = order_.at((a_first ? second : first).root);
  const std::unordered_set<const Operation *> inside(earlier.members.begin(),
                                                     earlier.members.end());
  for (const Operation *m : earlier.members) {
    if (of_.at(m).size() > 1)
      continue;
    for (size_t r = 0; r < m->numResults(); ++r)
      for (const OpOperand *use = m->result(r)->firstUse(); use;
           use = use->next_use)
        if (!inside.count(use->owner) && orderInBlock(use->owner) <= emitted_at)
          return false;
  }
  return true;
}

// `from` joins `into`; the kernel runs at the later of their roots, over the
// reduction's iteration space when one of them reduces.
void Planner::mergeSiblings(int into, int from) {
  Group &target = groups_[size_t(into)];
  const Group &source = groups_[size_t(from)];
  if (order_.at(source.root) > order_.at(target.root))
    target.root = source.root;
  if (source.kind == KernelKind::Reduction) {
    target.kind = KernelKind::Reduction;
    target.hero = source.hero;
  }
  absorb(into, from);
}

// Sibling multi-output fusion (XLA's GpuMultiOutputFusion::FuseSiblings):
// kernels that read one tensor from memory and iterate over the same space
// become one kernel that reads it once and writes what each wrote.
//   %a = reduce(%dy) add across [0]               -> one reduction kernel:
//   %p = multiply %dy, %xhat                          reads %dy and %xhat,
//   %b = reduce(%p) add across [0]                    writes %a and %b
// (LayerNorm's bias and scale gradients: %dy is read once, not twice).
// Not a constant, iota or broadcast scalar: those are not read from memory.
void Planner::fuseSiblings() {
  // Bounds, as XLA bounds a fusion's operands and outputs: a tensor read by
  // thousands of kernels costs a few checks each, not one per pair.
  constexpr size_t kMaxSiblingMembers = 256;
  constexpr size_t kMaxSiblingHeads = 8;
  auto consider = [&](const Value &shared) {
    const Type type = shared.type;
    if (!type || !type->isRankedTensor() || !type->hasStaticShape() ||
        type->numElements() <= 1)
      return;
    if (const Operation *def = shared.defining_op) {
      if (isCheapToDuplicate(*def) || def->is("stablehlo.iota"))
        return;
      if (auto owners = of_.find(def);
          owners != of_.end() && owners->second.size() > 1)
        return;
    }
    std::vector<int> heads;
    for (int g : siblingCandidates(shared)) {
      const Group &group = groups_[size_t(g)];
      if (shared.defining_op &&
          std::find(group.members.begin(), group.members.end(),
                    shared.defining_op) != group.members.end())
        continue; // computed inside, not read from memory
      bool merged = false;
      for (int head : heads)
        if (groups_[size_t(head)].alive &&
            groups_[size_t(head)].members.size() + group.members.size() <=
                kMaxSiblingMembers &&
            canFuseSiblings(head, g)) {
          mergeSiblings(head, g);
          merged = true;
          break;
        }
      if (!merged && heads.size() < kMaxSiblingHeads)
        heads.push_back(g);
    }
  };
  for (size_t i = 0; i < block_.numArguments(); ++i)
    consider(*block_.argument(i));
  for (Operation &op : block_)
    for (size_t r = 0; r < op.numResults(); ++r)
      consider(*op.result(r));
}

int64_t sliceBytesOf(const Operation &user) {
  return valueBytes(user.result(0));
}

// `duplicated`: ops computed again in several kernels; all their users are
// inside those kernels, so they are never written out.
Kernel finish(const Group &group,
              const std::unordered_map<const Operation *, int64_t> &order,
              const std::unordered_set<const Operation *> &duplicated) {
  Kernel k;
  k.kind = group.kind;
  k.root = group.root;
  k.members = group.members;
  std::sort(
      k.members.begin(), k.members.end(),
      [&](Operation *a, Operation *b) { return order.at(a) < order.at(b); });
  if (k.members.size() == 1 && k.kind == KernelKind::Loop &&
      !isTransparent(*k.root))
    k.kind = KernelKind::Single;
  const std::unordered_set<const Operation *> in(k.members.begin(),
                                                 k.members.end());
  // Inputs, and what of each is read.
  for (Operation *m : k.members)
    for (size_t i = 0; i < m->numOperands(); ++i) {
      Value *v = m->operand(i);
      if (v->defining_op && in.count(v->defining_op))
        continue;
      if (std::find(k.inputs.begin(), k.inputs.end(), v) == k.inputs.end())
        k.inputs.push_back(v);
    }
  for (Value *v : k.inputs) {
    int64_t taken = 0;
    bool whole = false;
    for (OpOperand *use = v->firstUse(); use; use = use->next_use) {
      Operation *user = use->owner;
      if (!in.count(user))
        continue;
      if (readsWhatItTakes(*user) && use->index() == 0)
        taken += sliceBytesOf(*user);
      else if (user == k.root && k.kind == KernelKind::InPlace &&
               use->index() == 0)
        continue; // the buffer an update is written into, in place
      else
        whole = true;
    }
    k.bytes_read += whole ? valueBytes(v) : std::min(taken, valueBytes(v));
  }
  // Outputs: results read outside the kernel.
  for (Operation *m : k.members)
    for (size_t r = 0; r < m->numResults() && !duplicated.count(m); ++r) {
      bool outside = false;
      for (OpOperand *use = m->result(r)->firstUse(); use && !outside;
           use = use->next_use)
        outside = !in.count(use->owner);
      if (!outside)
        continue;
      if (m != k.root &&
          (k.extra_outputs.empty() || k.extra_outputs.back() != m))
        k.extra_outputs.push_back(m);
      if (m == k.root && k.kind == KernelKind::InPlace && m->numOperands() > 1)
        k.bytes_written += valueBytes(m->operand(1)); // the update only
      else
        k.bytes_written += valueBytes(m->result(r));
    }
  // One FLOP per output element; a reduction's per input element reduced.
  for (Operation *m : k.members)
    if (m->is("stablehlo.reduce") || m->is("stablehlo.reduce_window"))
      for (size_t i = 0; i < m->numOperands() / 2; ++i) {
        const Type type = m->operand(i)->type;
        if (type && type->hasStaticShape())
          k.flops += double(type->numElements());
      }
    else if (!isTransparent(*m) && !isGemm(*m))
      for (size_t r = 0; r < m->numResults(); ++r) {
        const Type type = m->result(r)->type;
        if (type && type->hasStaticShape())
          k.flops += double(type->numElements());
      }
  return k;
}

} // namespace

std::string_view toString(KernelKind kind) {
  switch (kind) {
  case KernelKind::Loop:
    return "loop fusion";
  case KernelKind::Reduction:
    return "reduction fusion";
  case KernelKind::Gemm:
    return "gemm";
  case KernelKind::InPlace:
    return "in-place update";
  case KernelKind::Single:
    break;
  }
  return "kernel";
}

int64_t valueBytes(const Value *value) {
  Type type = value ? value->type : nullptr;
  if (!type || !type->isRankedTensor() || !type->hasStaticShape())
    return 0;
  const int64_t bits = type->element ? type->element->elementBitWidth() : 0;
  return (type->numElements() * (bits > 0 ? bits : 32) + 7) / 8;
}

std::vector<Kernel> Planner::kernels() const {
  std::vector<const Group *> alive;
  for (const Group &group : groups_)
    if (group.alive && !group.members.empty())
      alive.push_back(&group);
  std::sort(alive.begin(), alive.end(), [&](const Group *a, const Group *b) {
    return order_.at(a->root) < order_.at(b->root);
  });
  std::unordered_set<const Operation *> duplicated;
  for (const auto &[op, owners] : of_)
    if (owners.size() > 1)
      duplicated.insert(op);
  std::vector<Kernel> out;
  out.reserve(alive.size());
  for (const Group *group : alive)
    out.push_back(finish(*group, order_, duplicated));
  return out;
}

std::vector<Kernel>
planKernels(Block &block, const FusionOptions &options,
            const std::function<bool(const Operation &)> &is_compute) {
  Planner planner(block, is_compute);
  if (options.enabled) {
    planner.fuseEpilogues();
    planner.fuseProducers();
    planner.fuseSiblings();
    // A producer whose readers now share one kernel joins it, as XLA's
    // multi-output fusion fuses producers into the fusions it made.
    planner.fuseProducers();
  }
  return planner.kernels();
}

std::string describe(const Kernel &kernel) {
  std::vector<std::string> names;
  for (const Operation *m : kernel.members) {
    if (isTransparent(*m) && kernel.members.size() > 1)
      continue;
    std::string_view name = m->name;
    if (name.rfind("stablehlo.", 0) == 0)
      name.remove_prefix(10);
    names.emplace_back(name);
  }
  std::string out(toString(kernel.kind));
  if (kernel.kind == KernelKind::Single && !names.empty())
    return names.front();
  out += ": ";
  const size_t shown = std::min<size_t>(names.size(), 4);
  for (size_t i = 0; i < shown; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > shown)
    out += " (+" + std::to_string(names.size() - shown) + ")";
  return out;
}

} // namespace shardlab::fusion
