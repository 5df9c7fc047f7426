// -sdy-insert-explicit-reshards: for every op with a (non-custom) sharding
// rule, choose one axis list per factor (findCommonAxes), reshard the
// operands whose projection differs to it, give the results the chosen
// sharding (resharding back to what their users expect), and all-reduce the
// results over the axes of sharded reduction factors. Func results are
// resharded to the func's result shardings. Without the full version only
// concatenates with differing operand shardings are processed (Shardy's
// isOnFullVersion). Data-flow ops, calls, unreduced-axis collectives and
// single-device ops are left as they are (not implemented yet).
#include "explicit_reshards_util.h"

#include "shardlab/passes/explicit_collectives.h"
#include "shardlab/passes/pass_utils.h"
#include "shardlab/rules/registry.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/mesh.h"
#include "shardlab/sharding/sharding_utils.h"

#include <map>

namespace shardlab {

namespace {

using OptSharding = std::optional<TensorSharding>;

// The op's operand and result shardings, read once.
struct OpShardings {
  std::vector<OptSharding> in, out;
};

OpShardings readShardings(Operation &op) {
  OpShardings s;
  for (size_t i = 0; i < op.numOperands(); ++i)
    s.in.push_back(shardingBypassingBarriers(op.operand(i)));
  for (size_t i = 0; i < op.numResults(); ++i)
    s.out.push_back(shardingBypassingBarriers(op.result(i)));
  return s;
}

// The mesh most non-replicated shardings use among those equal to the
// common mesh (ignoring device ids); nullopt when they disagree, when none
// has a mesh, or when the mesh is maximal.
std::optional<MeshRef> chooseMesh(const Module &module, const OpShardings &s) {
  const Mesh *common = nullptr;
  std::optional<MeshRef> first, best;
  std::map<std::string, int> counts;
  int best_count = 0;
  for (const auto *list : {&s.in, &s.out})
    for (const OptSharding &sharding : *list) {
      if (!sharding)
        continue;
      const Mesh *mesh = meshOf(module, *sharding);
      if (!mesh || mesh->isEmpty())
        continue;
      if (common && !equalsIgnoringDeviceIds(*common, *mesh))
        return std::nullopt;
      if (!common) {
        common = mesh;
        first = sharding->mesh;
      }
      if (isFullyReplicated(*sharding))
        continue;
      int count = ++counts[sharding->mesh.symbol];
      if (count > best_count) {
        best_count = count;
        best = sharding->mesh;
      }
    }
  if (!common || common->isMaximal())
    return std::nullopt;
  return best ? best : first;
}

bool isOnFullVersion(Operation &op, const OpShardings &s, bool full) {
  if (full || op.is("func.call") || op.name == "mhlo.ragged_dot")
    return true;
  if (!op.is("stablehlo.concatenate") || s.out.empty())
    return false;
  for (const OptSharding &in : s.in)
    if (in != s.out[0])
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

Operation *insertReshardBefore(Context &ctx, Operation &before, Value *input,
                               const TensorSharding &sharding) {
  auto reshard = makeOp(ctx, "sdy.reshard", {input}, {input->type}, before.loc);
  setOpSharding(*reshard, sharding, ctx);
  return before.parentBlock()->insertBefore(&before, std::move(reshard));
}

// Redirects the uses of `value` (but in `except`) to `to`.
void replaceUsesExcept(Value *value, Value *to, Operation *except) {
  std::vector<OpOperand *> uses;
  for (OpOperand *use = value->firstUse(); use; use = use->next_use)
    if (use->owner != except)
      uses.push_back(use);
  for (OpOperand *use : uses)
    use->set(to);
}

// Inserts `name` (a reshard or all_reduce) on `result` after `after`;
// returns the new op.
Operation *insertAfter(Context &ctx, Operation &after, Value *result,
                       std::unique_ptr<Operation> op) {
  Operation *next = after.nextInBlock();
  Block *block = after.parentBlock();
  Operation *created = next ? block->insertBefore(next, std::move(op))
                            : block->push_back(std::move(op));
  replaceUsesExcept(result, created->result(0), created);
  (void)ctx;
  return created;
}

// Shardy's processOp in the full version and the reshards it implies.
struct OpContext {
  Module &module;
  Operation &op;
  const OpShardingRule &rule;
  const Mesh &mesh;
  const MeshRef &mesh_ref;
  const OpShardings &shardings;
};

TensorSharding rowSharding(const OpContext &c, const TensorFactorShardings &row,
                           const OpShardingRule::TensorMapping &mapping) {
  TensorSharding s =
      unproject(row, mapping, c.rule.factor_sizes, c.mesh_ref, c.mesh);
  for (DimSharding &dim : s.dims)
    dim.closed = true;
  return s;
}

bool needsCommonMesh(const OpContext &c, const OptSharding &s) {
  if (!s || isFullyReplicated(*s))
    return false;
  const Mesh *mesh = meshOf(c.module, *s);
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
        if (fs.axes != common[f] || !fs.overflow.empty())
          row_changed = true;
        fs.axes = common[f];
        fs.overflow.clear();
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
        insertReshardBefore(ctx, c.op, c.op.operand(i), target);
    c.op.setOperand(i, reshard->result(0));
  }
}

void reshardResults(const OpContext &c, const ShardingProjection &projection,
                    const std::vector<bool> &changed) {
  Context &ctx = c.module.ctx();
  size_t base = projection.operands.size();
  Operation *last = &c.op;
  for (size_t i = 0; i < projection.results.size(); ++i) {
    if (!changed[base + i] && !needsCommonMesh(c, c.shardings.out[i]))
      continue;
    Value *result = c.op.result(i);
    TensorSharding old =
        c.shardings.out[i]
            ? *c.shardings.out[i]
            : fullyClosedSharding(c.mesh_ref, result->type->shape.size());
    auto reshard =
        makeOp(ctx, "sdy.reshard", {result}, {result->type}, c.op.loc);
    setOpSharding(*reshard, old, ctx);
    last = insertAfter(ctx, *last, result, std::move(reshard));
    setSharding(result,
                rowSharding(c, projection.results[i], c.rule.results[i]), ctx);
  }
}

void allReduceResults(const OpContext &c, const AxesPerFactor &common) {
  if (c.op.numResults() == 0 || common.empty())
    return;
  std::vector<AxisRef> axes;
  for (int64_t f : c.rule.reduction)
    axes.insert(axes.end(), common[f].begin(), common[f].end());
  const TensorSharding *first = getSharding(c.op.result(0));
  if (first)
    axes = getAxisSetDiff(axes, first->unreduced, c.mesh);
  if (axes.empty())
    return;
  sortAndMergeAxes(axes, c.mesh);
  Context &ctx = c.module.ctx();
  Operation *last = &c.op;
  for (size_t i = 0; i < c.op.numResults(); ++i) {
    Value *result = c.op.result(i);
    const TensorSharding *s = getSharding(result);
    TensorSharding out =
        s ? *s : fullyClosedSharding(c.mesh_ref, result->type->shape.size());
    auto reduce =
        makeOp(ctx, "sdy.all_reduce", {result}, {result->type}, c.op.loc);
    reduce->attrs.set(
        ctx.intern("reduction_axes"),
        ctx.attrs.make(Attr{AttrKind::AxisRefList, axes, nullptr, {}}));
    setOpSharding(*reduce, out, ctx, "out_sharding");
    last = insertAfter(ctx, *last, result, std::move(reduce));
  }
}

void processFull(const OpContext &c) {
  std::vector<const TensorSharding *> in, out;
  for (const OptSharding &s : c.shardings.in)
    in.push_back(s ? &*s : nullptr);
  for (const OptSharding &s : c.shardings.out)
    out.push_back(s ? &*s : nullptr);
  ShardingProjection projection = buildProjection(in, out, c.rule, c.mesh);
  AxesPerFactor common =
      findCommonAxes(projection, c.rule, tensorSizes(c.op), c.mesh);
  std::vector<bool> changed = applyCommonAxes(projection, common);
  reshardOperands(c, projection, changed);
  reshardResults(c, projection, changed);
  allReduceResults(c, common);
}

bool isTerminator(const Operation &op) {
  return op.is("func.return") || op.is("stablehlo.return") ||
         op.is("sdy.return");
}

bool isDataFlowOp(const Operation &op) {
  return op.is("stablehlo.while") || op.is("stablehlo.case") ||
         op.is("stablehlo.optimization_barrier");
}

void processOp(Module &module, Operation &op, bool full) {
  if (isTerminator(op) || op.dialect() == "sdy" || op.is("func.call") ||
      isDataFlowOp(op))
    return;
  OpShardings s = readShardings(op);
  if (!isOnFullVersion(op, s, full))
    return;
  std::optional<OpShardingRule> rule =
      getOrCreateShardingRule(op, module.ctx(), false, /*attach=*/false);
  if (!rule || rule->is_custom)
    return;
  std::optional<MeshRef> mesh_ref = chooseMesh(module, s);
  const Mesh *mesh = mesh_ref ? lookupMesh(module, *mesh_ref) : nullptr;
  if (!mesh)
    return;
  processFull(OpContext{module, op, *rule, *mesh, *mesh_ref, s});
}

void reshardFuncResults(Module &module, Operation &func, bool full) {
  Operation *ret = terminatorOf(func);
  if (!full || !ret)
    return;
  for (size_t i = 0; i < ret->numOperands(); ++i) {
    const TensorSharding *target = getFuncResultSharding(func, i);
    OptSharding source = shardingBypassingBarriers(ret->operand(i));
    if (!target || (source && isEquivalent(*source, *target)) ||
        (!source && isFullyReplicated(*target)))
      continue;
    Operation *reshard =
        insertReshardBefore(module.ctx(), *ret, ret->operand(i), *target);
    ret->setOperand(i, reshard->result(0));
  }
}

} // namespace

bool insertExplicitReshardsPass(Module &module, const PassOptions &options,
                                DiagnosticEngine &) {
  bool full = optionIsTrue(options, "enable-full-version");
  forEachFunc(module, [&](Operation &func) {
    std::vector<Operation *> ops;
    walk(func, [&](Operation &op) { ops.push_back(&op); });
    for (Operation *op : ops)
      processOp(module, *op, full);
    reshardFuncResults(module, func, full);
  });
  return true;
}

} // namespace shardlab
