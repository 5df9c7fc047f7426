// -sdy-insert-explicit-reshards, walked in post-order like Shardy: data-flow
// edge sources, call operands and func results are resharded to their
// targets; an sdy.reshard adding unreduced axes becomes unreduced
// collectives; operands whose unreduced axes the results lack are
// all-reduced; single-device ops move to and from their device. Every other
// op with a (non-custom) sharding rule gets, in the full version, one axis
// list per factor (findCommonAxes) with its operands and results resharded
// to it, and its results all-reduced over sharded reduction factors. Without
// the full version only calls, mhlo.ragged_dot and concatenates with
// differing shardings are processed that way, and a dot whose result
// conflicts in one factor may have its result resharded (processDot).
#include "explicit_reshards_util.h"
#include "export_passes.h"
#include "ir/op_properties.h"

#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "rules/registry.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/mesh.h"
#include "support/word_hash.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace shardlab {

namespace {

// The op's operand and result shardings, read once (null: none), pointing
// into attributes or into `owned`; reused from op to op.
struct OpShardings {
  std::vector<const TensorSharding *> in, out;
  std::deque<TensorSharding> owned;
};

void readShardings(Operation &op, OpShardings &s) {
  s.in.clear();
  s.out.clear();
  s.owned.clear();
  for (size_t i = 0; i < op.numOperands(); ++i)
    s.in.push_back(shardingBypassingBarriers(op.operand(i), s.owned));
  for (size_t i = 0; i < op.numResults(); ++i)
    s.out.push_back(shardingBypassingBarriers(op.result(i), s.owned));
}

int &meshCount(std::vector<std::pair<std::string_view, int>> &counts,
               std::string_view symbol) {
  for (auto &entry : counts)
    if (entry.first == symbol)
      return entry.second;
  return counts.emplace_back(symbol, 0).second;
}

// The mesh most non-replicated shardings use among those equal to the
// common mesh (ignoring device ids); nullopt when they disagree, when none
// has a mesh, or when the mesh is maximal.
const MeshRef *chooseMesh(MeshCache &meshes, const OpShardings &s) {
  const Mesh *common = nullptr;
  const MeshRef *first = nullptr, *best = nullptr;
  // Few meshes per op: a small list beats a map (no node allocations).
  std::vector<std::pair<std::string_view, int>> counts;
  int best_count = 0;
  for (const auto *list : {&s.in, &s.out})
    for (const TensorSharding *sharding : *list) {
      if (!sharding)
        continue;
      const Mesh *mesh = meshes.of(*sharding);
      if (!mesh || mesh->isEmpty())
        continue;
      if (common && common != mesh && !equalsIgnoringDeviceIds(*common, *mesh))
        return nullptr;
      if (!common) {
        common = mesh;
        first = &sharding->mesh;
      }
      if (isFullyReplicated(*sharding))
        continue;
      int count = ++meshCount(counts, sharding->mesh.symbol);
      if (count > best_count) {
        best_count = count;
        best = &sharding->mesh;
      }
    }
  if (!common || common->isMaximal())
    return nullptr;
  return best ? best : first;
}

bool sameSharding(const TensorSharding *a, const TensorSharding *b) {
  return a == b || (a && b && *a == *b);
}

bool isOnFullVersion(Operation &op, bool full) {
  if (full || op.is("func.call") || op.name == "mhlo.ragged_dot")
    return true;
  if (!op.is("stablehlo.concatenate") || op.numResults() == 0)
    return false;
  const TensorSharding *out = getSharding(op.result(0));
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (!sameSharding(getSharding(op.operand(i)), out))
      return true;
  return false;
}

std::vector<int64_t> tensorSizes(Operation &op) {
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < op.numOperands(); ++i)
    sizes.push_back(std::max<int64_t>(0, op.operand(i)->type->numElements()));
  for (size_t i = 0; i < op.numResults(); ++i)
    sizes.push_back(std::max<int64_t>(0, op.result(i)->type->numElements()));
  return sizes;
}

// Shardy's processOp in the full version and the reshards it implies.
struct OpContext {
  Module &module;
  Operation &op;
  const OpShardingRule &rule;
  const Mesh &mesh;
  const MeshRef &mesh_ref;
  const OpShardings &shardings;
  MeshCache &meshes;
};

TensorSharding rowSharding(const OpContext &c, const TensorFactorShardings &row,
                           const OpShardingRule::TensorMapping &mapping) {
  TensorSharding s =
      unproject(row, mapping, c.rule.factor_sizes, c.mesh_ref, c.mesh);
  for (DimSharding &dim : s.dims)
    dim.closed = true;
  return s;
}

bool needsCommonMesh(const OpContext &c, const TensorSharding *s) {
  if (!s || isFullyReplicated(*s))
    return false;
  const Mesh *mesh = c.meshes.of(*s);
  return mesh && mesh->device_ids != c.mesh.device_ids;
}

// Sets every tensor's factor shardings to `common`; returns which rows
// changed (operands then results).
std::vector<bool> applyCommonAxes(ShardingProjection &projection,
                                  const AxesPerFactor &common) {
  std::vector<bool> changed;
  for (auto *rows : {&projection.operands, &projection.results})
    for (TensorFactorShardings &row : *rows) {
      bool row_changed = false;
      for (size_t f = 0; f < row.factors.size() && f < common.size(); ++f) {
        FactorSharding &fs = row.factors[f];
        if (!fs.present)
          continue;
        if (fs.axes != common[f]) {
          fs.axes = common[f];
          row_changed = true;
        }
        if (!fs.overflow.empty()) {
          fs.overflow.clear();
          row_changed = true;
        }
      }
      changed.push_back(row_changed);
    }
  return changed;
}

void reshardOperands(const OpContext &c, const ShardingProjection &projection,
                     const std::vector<bool> &changed) {
  Context &ctx = c.module.ctx();
  for (size_t i = 0; i < projection.operands.size(); ++i) {
    if (!changed[i] && !needsCommonMesh(c, c.shardings.in[i]))
      continue;
    TensorSharding target =
        rowSharding(c, projection.operands[i], c.rule.operands[i]);
    Operation *reshard =
        createReshard(ctx, pointBefore(c.op), c.op.operand(i), target);
    c.op.setOperand(i, reshard->result(0));
  }
}

void reshardResults(const OpContext &c, const ShardingProjection &projection,
                    const std::vector<bool> &changed) {
  Context &ctx = c.module.ctx();
  size_t base = projection.operands.size();
  InsertPoint point = pointAfter(c.op);
  for (size_t i = 0; i < projection.results.size(); ++i) {
    if (!changed[base + i] && !needsCommonMesh(c, c.shardings.out[i]))
      continue;
    Value *result = c.op.result(i);
    // Read now, not from c.shardings: setting an earlier result's sharding
    // gave the results without one a fully open sharding (as in Shardy).
    const TensorSharding *current = getSharding(result);
    TensorSharding old =
        current ? *current
                : fullyClosedSharding(c.mesh_ref, result->type->shape.size());
    Operation *reshard = createReshard(ctx, point, result, old);
    result->replaceAllUsesExcept(reshard->result(0), reshard);
    setSharding(result,
                rowSharding(c, projection.results[i], c.rule.results[i]), ctx);
  }
}

// Shardy's processDot (default version): when lhs and rhs agree and the
// result conflicts in exactly one non-contracting factor whose result axes
// are the reduction axes, the dot takes the operands' axes and its result
// is resharded back afterwards.
struct DotConflict {
  int64_t factor = -1;
  std::vector<AxisRef> operand_axes, reduction_axes;
};

bool overlapsAny(const std::vector<AxisRef> &seen, const AxisRef &axis) {
  for (const AxisRef &a : seen)
    if (overlaps(a, axis))
      return true;
  return false;
}

std::optional<DotConflict> findDotConflict(const OpContext &c,
                                           const ShardingProjection &p) {
  int64_t lhs_size = c.op.operand(0)->type->numElements();
  int64_t rhs_size = c.op.operand(1)->type->numElements();
  int64_t result_size = c.op.result(0)->type->numElements();
  DotConflict conflict;
  std::vector<AxisRef> seen;
  for (size_t f = 0; f < c.rule.factor_sizes.size(); ++f) {
    const FactorSharding *lhs = p.operands[0].find(f);
    const FactorSharding *rhs = p.operands[1].find(f);
    const FactorSharding *res = p.results[0].find(f);
    const std::vector<AxisRef> &axes = lhs ? lhs->axes : rhs->axes;
    int64_t max_size = lhs ? lhs_size : rhs_size;
    if (lhs && rhs) {
      max_size = std::max(lhs_size, rhs_size);
      if (lhs->axes != rhs->axes)
        return std::nullopt;
      if (std::count(c.rule.reduction.begin(), c.rule.reduction.end(), f)) {
        conflict.reduction_axes.insert(conflict.reduction_axes.end(),
                                       axes.begin(), axes.end());
        continue;
      }
    } else {
      for (const AxisRef &axis : axes) {
        if (overlapsAny(seen, axis))
          return std::nullopt;
        seen.push_back(axis);
      }
    }
    if (!res || res->axes == axes)
      continue;
    if (axes.empty() || conflict.factor >= 0 || result_size > max_size)
      return std::nullopt;
    conflict.factor = static_cast<int64_t>(f);
    conflict.operand_axes = axes;
  }
  return conflict;
}

void processDot(const OpContext &c, ShardingProjection &projection) {
  if (c.shardings.out.empty() || !c.shardings.out[0])
    return;
  std::optional<DotConflict> conflict = findDotConflict(c, projection);
  if (!conflict || conflict->factor < 0)
    return;
  std::vector<AxisRef> &result_axes =
      projection.results[0].factors[conflict->factor].axes;
  if (result_axes.empty() || result_axes != conflict->reduction_axes)
    return;
  result_axes = conflict->operand_axes;
  Context &ctx = c.module.ctx();
  Value *result = c.op.result(0);
  setSharding(result,
              unproject(projection.results[0], c.rule.results[0],
                        c.rule.factor_sizes, c.mesh_ref, c.mesh),
              ctx);
  Operation *reshard =
      createReshard(ctx, pointAfter(c.op), result, *c.shardings.out[0]);
  result->replaceAllUsesExcept(reshard->result(0), reshard);
}

// Shardy's getReductionAxes: the common axes of the reduction factors in
// the full version, else (only when the result is unreduced) the
// compatible axes of each reduction factor.
std::vector<AxisRef> reductionAxes(const OpContext &c,
                                   const ShardingProjection &projection,
                                   const AxesPerFactor &common, bool full) {
  std::vector<AxisRef> axes;
  if (full) {
    for (int64_t f : c.rule.reduction)
      if (static_cast<size_t>(f) < common.size())
        axes.insert(axes.end(), common[f].begin(), common[f].end());
    return axes;
  }
  const TensorSharding *first = getSharding(c.op.result(0));
  if (!first || first->unreduced.empty())
    return axes;
  for (int64_t f : c.rule.reduction)
    if (auto factor = compatibleFactorAxes(projection, f))
      axes.insert(axes.end(), factor->begin(), factor->end());
  return axes;
}

bool equivalentOrBothReplicated(const TensorSharding *a,
                                const TensorSharding &b) {
  return a ? isEquivalent(*a, b) : isFullyReplicated(b);
}

// A reshape with overflow axes: its operand and result are resharded to the
// aligned shardings where these differ from the current ones.
AxesPerFactor processReshapeOverflow(const OpContext &c,
                                     ShardingProjection &projection) {
  AxesPerFactor common =
      alignReshapeOverflowAxes(projection, c.rule, c.mesh_ref, c.mesh);
  TensorSharding in =
      rowSharding(c, projection.operands[0], c.rule.operands[0]);
  TensorSharding out = rowSharding(c, projection.results[0], c.rule.results[0]);
  std::optional<TensorSharding> operand = shardingOf(c.op.operand(0));
  std::vector<bool> changed = {
      !equivalentOrBothReplicated(operand ? &*operand : nullptr, in),
      !equivalentOrBothReplicated(c.shardings.out[0], out)};
  reshardOperands(c, projection, changed);
  reshardResults(c, projection, changed);
  return common;
}

AxesPerFactor processFull(const OpContext &c, ShardingProjection &projection) {
  if (c.op.is("stablehlo.reshape") && c.op.numOperands() == 1 &&
      c.op.numResults() == 1 && hasOverflowAxes(projection))
    return processReshapeOverflow(c, projection);
  AxesPerFactor common =
      findCommonAxes(projection, c.rule, tensorSizes(c.op), c.mesh);
  std::vector<bool> changed = applyCommonAxes(projection, common);
  reshardOperands(c, projection, changed);
  reshardResults(c, projection, changed);
  return common;
}

// No tensor is sharded or unreduced: no factor can conflict and nothing is
// reduced, so the rule would change nothing (saves building it).
bool allReplicated(const OpShardings &s) {
  for (const auto *list : {&s.in, &s.out})
    for (const TensorSharding *sharding : *list)
      if (sharding &&
          (!isFullyReplicated(*sharding) || !sharding->unreduced.empty()))
        return false;
  return true;
}

// The op's rule without attaching it and without copying: the attached
// one, one shared with equal ops through `cache`, or one built into `owned`
// for ops whose rules cannot be shared (regions, uncomparable attributes).
// `key` is scratch storage, reused so that building keys does not allocate.
const OpShardingRule *ruleOf(Operation &op, Context &ctx, RuleCache &cache,
                             RuleCache::Key &key,
                             std::optional<OpShardingRule> &owned) {
  if (const Attr *attached = op.attrs.get(kShardingRuleAttr);
      attached && attached->kind == AttrKind::OpShardingRule)
    return &attached->rule();
  if (!RuleCache::key(op, false, key)) {
    owned = createOpShardingRule(op, false);
    return owned ? &*owned : nullptr;
  }
  const Attr *attr = cache.find(key);
  if (!attr) {
    std::optional<OpShardingRule> rule = createOpShardingRule(op, false);
    if (!rule)
      return nullptr;
    attr = ctx.attrs.rule(std::move(*rule));
    cache.insert(key, attr);
  }
  return &attr->rule();
}

// Ops whose processing changed nothing, by what the processing read: the
// op's name, its rule, the version flag and each tensor's sharding and type.
// Attributes and types are interned and immutable, so their addresses stand
// for their values, and rules are shared by equal ops: an op that reads the
// same as one that changed nothing changes nothing either. Modules repeat
// layers, so most ops are skipped before their projection is built.
class UnchangedOps {
public:
  /// Builds the key of `op` into the scratch key; false when the op cannot
  /// be keyed (a sharding computed for it, not interned).
  bool key(const Operation &op, const OpShardingRule &rule,
           const OpShardings &s, bool full) {
    if (!s.owned.empty())
      return false;
    key_.clear();
    key_.push_back(reinterpret_cast<uintptr_t>(op.name.data()));
    key_.push_back(reinterpret_cast<uintptr_t>(&rule));
    key_.push_back(full ? 1 : 0);
    key_.push_back(s.in.size());
    for (size_t i = 0; i < s.in.size(); ++i) {
      key_.push_back(reinterpret_cast<uintptr_t>(s.in[i]));
      key_.push_back(reinterpret_cast<uintptr_t>(op.operand(i)->type));
    }
    for (size_t i = 0; i < s.out.size(); ++i) {
      key_.push_back(reinterpret_cast<uintptr_t>(s.out[i]));
      key_.push_back(reinterpret_cast<uintptr_t>(op.result(i)->type));
    }
    return true;
  }
  bool contains() const { return seen_.count(key_) != 0; }
  void insert() { seen_.insert(key_); }

private:
  std::unordered_set<std::vector<uintptr_t>, WordsHash> seen_;
  std::vector<uintptr_t> key_;
};

// What the pass keeps from op to op: the rule memo, the mesh memo, the ops
// that changed nothing, and the storage of one op's shardings and
// projection (rebuilt in place).
struct Scratch {
  explicit Scratch(const Module &module) : meshes(module) {}
  RuleCache rules;
  RuleCache::Key rule_key;
  MeshCache meshes;
  UnchangedOps unchanged;
  OpShardings shardings;
  ShardingProjection projection;
};

bool isDot(const Operation &op) {
  return op.is("stablehlo.dot") || op.is("stablehlo.dot_general");
}

// Without the full version only dots and ops whose first result is
// unreduced can change (processDot, reductionAxes): the others skip the
// rule and the projection.
bool changesWithoutFullVersion(Operation &op) {
  if (isDot(op))
    return true;
  if (op.numResults() == 0)
    return false;
  const TensorSharding *first = getSharding(op.result(0));
  return first && !first->unreduced.empty();
}

void processRuleOp(Module &module, Operation &op, const OpShardings &s,
                   bool full, Scratch &scratch) {
  if (allReplicated(s) || (!full && !changesWithoutFullVersion(op)))
    return;
  std::optional<OpShardingRule> owned;
  const OpShardingRule *rule =
      ruleOf(op, module.ctx(), scratch.rules, scratch.rule_key, owned);
  if (!rule || rule->is_custom)
    return;
  const MeshRef *mesh_ref = chooseMesh(scratch.meshes, s);
  const Mesh *mesh = mesh_ref ? scratch.meshes.get(*mesh_ref) : nullptr;
  if (!mesh)
    return;
  bool keyed = scratch.unchanged.key(op, *rule, s, full);
  if (keyed && scratch.unchanged.contains())
    return;
  // Every change the processing makes creates an op (a reshard, an
  // all-reduce) or sets the op's sharding.
  const size_t made_before = module.ctx().ops.allocated();
  const Attr *sharding_before = op.attrs.get("sdy.sharding");
  OpContext c{module, op, *rule, *mesh, *mesh_ref, s, scratch.meshes};
  ShardingProjection &projection = scratch.projection;
  buildProjectionInto(projection, s.in, s.out, *rule, *mesh);
  AxesPerFactor common;
  if (full)
    common = processFull(c, projection);
  else if (isDot(op))
    processDot(c, projection);
  if (op.numResults() > 0)
    allReduceResults(module, op, reductionAxes(c, projection, common, full),
                     *mesh, *mesh_ref);
  if (keyed && module.ctx().ops.allocated() == made_before &&
      op.attrs.get("sdy.sharding") == sharding_before)
    scratch.unchanged.insert();
}

bool isSingleDeviceOp(MeshCache &meshes, const OpShardings &s) {
  for (const TensorSharding *sharding : s.out)
    if (const Mesh *mesh = sharding ? meshes.of(*sharding) : nullptr;
        mesh && mesh->isMaximal())
      return true;
  return false;
}

bool processOp(Module &module, Operation &op, bool enable_full,
               Scratch &scratch, DiagnosticEngine &diags) {
  bool full = isOnFullVersion(op, enable_full);
  if (isShardableDataFlowOp(op)) {
    reshardDataFlowSources(module, op, full);
    return true;
  }
  if (op.is("func.call")) {
    reshardCallOperands(module, op, full);
    return true;
  }
  if (convertReshardToUnreducedCollectives(module, op))
    return true;
  // An sdy.all_reduce already here (the export run a second time) is read
  // as an op whose operand is unreduced and whose result is not, and gets
  // another before it, as in Shardy: the partition pipeline exports once.
  allReduceOperandsIfUnreducedToReplicated(module, op);
  OpShardings &s = scratch.shardings;
  readShardings(op, s);
  if (isSingleDeviceOp(scratch.meshes, s))
    return processSingleDeviceOp(module, op, s.out, diags);
  processRuleOp(module, op, s, full, scratch);
  return true;
}

bool isTerminator(const Operation &op) { return isBlockReturn(op); }

// The func's ops in post-order (nested ops before their parent), as MLIR's
// default walk visits them.
void collectPostOrder(Operation &root, std::vector<Operation *> &ops) {
  for (size_t r = 0; r < root.numRegions(); ++r)
    for (auto &block : root.region(r).blocks)
      for (Operation &op : *block) {
        collectPostOrder(op, ops);
        if (!isTerminator(op))
          ops.push_back(&op);
      }
}

} // namespace

bool insertExplicitReshardsPass(Module &module, const PassOptions &options,
                                DiagnosticEngine &diags) {
  bool full = options.flag("enable-full-version");
  bool ok = true;
  Scratch scratch(module);
  forEachFunc(module, [&](Operation &func) {
    if (!ok || !verifyNoSingleDeviceFuncShardings(module, func, diags)) {
      ok = false;
      return;
    }
    std::vector<Operation *> ops;
    collectPostOrder(func, ops);
    for (Operation *op : ops)
      if (!processOp(module, *op, full, scratch, diags)) {
        ok = false;
        return;
      }
    reshardFuncResults(module, func, full);
  });
  return ok;
}

} // namespace shardlab
