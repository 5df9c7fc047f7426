// Building, naming and applying strategy plans (see plan.h).
#include "strategy/plan.h"

#include <algorithm>

#include "passes/pass_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/sharding/format.h"

namespace shardlab::strategy {
namespace {

// Whether `op` binds the program to the user's mesh in a way a plan cannot
// rewrite: a manual computation, or a collective (the module is already
// partitioned, or holds explicit collectives).
bool isBound(const Operation &op) {
  return op.is("sdy.manual_computation") || isCollectiveOp(op);
}

// Removes every sharding the user wrote: sharding constraints and reshards
// pass their operand through, named computations lose their shardings, and
// Shardy's own passes drop the sharding groups, every other sharding and
// the meshes. An error when an op binds the program to the user's mesh.
Status clearShardings(Module &module) {
  std::vector<Operation *> passthrough;
  std::string bound;
  walk(module.op(), [&](Operation &op) {
    if (isBound(op) && bound.empty())
      bound = std::string(op.name);
    if (op.is("sdy.sharding_constraint") || op.is("sdy.reshard"))
      passthrough.push_back(&op);
    else if (op.is("sdy.named_computation")) {
      op.attrs.erase("in_shardings");
      op.attrs.erase("out_shardings");
    }
  });
  if (!bound.empty())
    return makeError("the module holds " + bound +
                     ", bound to its own mesh; only the module as written "
                     "is estimated");
  for (Operation *op : passthrough)
    replaceOp(*op, {op->operand(0)});
  // The candidate's mesh and shardings come next; the propagation that
  // follows verifies the result.
  DiagnosticEngine diags;
  for (std::string_view flag :
       {"sdy-remove-sharding-groups", "sdy-drop-sharding-and-mesh"})
    if (!runNestedPass(module, flag, diags, {}, VerifyAfter::No))
      return makeError(std::string(flag) + " failed");
  return success();
}

// The priority of dim `d` (-1 past the end).
int64_t priorityAt(const std::vector<int64_t> &priorities, size_t d) {
  return d < priorities.size() ? priorities[d] : -1;
}

TensorSharding shardingOf(const ArgAxes &axes,
                          const std::vector<int64_t> &priorities) {
  TensorSharding sharding;
  sharding.mesh.symbol = "mesh";
  for (size_t i = 0; i < axes.size(); ++i) {
    DimSharding d;
    for (const std::string &axis : axes[i])
      d.axes.push_back(AxisRef{axis, std::nullopt});
    if (priorityAt(priorities, i) >= 0 && !axes[i].empty())
      d.priority = priorityAt(priorities, i);
    sharding.dims.push_back(std::move(d));
  }
  return sharding;
}

} // namespace

std::vector<int64_t> dimPriorities(const Plan &plan, size_t arg) {
  if (arg >= plan.args.size())
    return {};
  const int64_t own = arg < plan.priorities.size() ? plan.priorities[arg] : -1;
  std::vector<int64_t> out;
  for (const std::vector<std::string> &dim : plan.args[arg])
    out.push_back(!dim.empty() &&
                          std::find(plan.first_priority_axes.begin(),
                                    plan.first_priority_axes.end(),
                                    dim[0]) != plan.first_priority_axes.end()
                      ? 0
                      : own);
  return out;
}

std::string meshText(const std::vector<MeshAxis> &axes) {
  Mesh mesh;
  mesh.axes = axes;
  return meshBodyToString(mesh);
}

std::string argAxesText(const ArgAxes &axes,
                        const std::vector<int64_t> &priorities) {
  std::string out = "[";
  for (size_t d = 0; d < axes.size(); ++d) {
    out += d ? ", {" : "{";
    for (size_t a = 0; a < axes[d].size(); ++a)
      out += (a ? ", \"" : "\"") + axes[d][a] + "\"";
    out += "}";
    if (priorityAt(priorities, d) >= 0 && !axes[d].empty())
      out += "p" + std::to_string(priorityAt(priorities, d));
  }
  return out + "]";
}

std::string planKey(const Plan &plan) {
  if (plan.is_user)
    return "user";
  std::string key = meshText(plan.mesh);
  for (size_t i = 0; i < plan.args.size(); ++i)
    key += argAxesText(plan.args[i], dimPriorities(plan, i));
  for (const auto &[result, arg] : plan.pinned_results)
    key += " ->" + std::to_string(result) + "=" + std::to_string(arg);
  if (plan.write_unsharded)
    key += " closed";
  if (plan.virtual_stages > 1)
    key += " V" + std::to_string(plan.virtual_stages);
  return key;
}

Status checkDivisible(const Plan &plan, const std::vector<std::string> &names,
                      const std::vector<std::vector<int64_t>> &shapes) {
  for (size_t a = 0; a < plan.args.size() && a < shapes.size(); ++a)
    for (size_t d = 0; d < plan.args[a].size() && d < shapes[a].size(); ++d) {
      int64_t ways = 1;
      for (const std::string &axis : plan.args[a][d])
        for (const MeshAxis &m : plan.mesh)
          if (m.name == axis)
            ways *= m.size;
      const bool padded =
          std::find(plan.padded.begin(), plan.padded.end(),
                    std::pair<size_t, size_t>{a, d}) != plan.padded.end();
      if (ways > 1 && shapes[a][d] % ways != 0 && !padded)
        return makeError("dimension " + std::to_string(d) + " of " + names[a] +
                         " (size " + std::to_string(shapes[a][d]) +
                         ") does not divide by " + std::to_string(ways) +
                         " devices");
    }
  return success();
}

Status applyPlan(Module &module, Operation &entry, const Plan &plan) {
  if (plan.is_user)
    return success();
  if (Status cleared = clearShardings(module); !cleared)
    return cleared;
  Context &ctx = module.ctx();
  Mesh mesh;
  mesh.axes = plan.mesh;
  auto op = makeOp(ctx, "sdy.mesh", {}, {}, module.op().loc);
  op->attrs.set(ctx.intern("sym_name"), ctx.attrs.string("mesh"));
  op->attrs.set(ctx.intern("mesh"),
                ctx.attrs.make(Attr{AttrKind::Mesh, mesh, nullptr, {}}));
  module.body().insertBefore(module.body().front(), std::move(op));
  module.invalidateSymbols();
  Block &body = entry.region(0).front();
  for (size_t i = 0; i < plan.args.size() && i < body.numArguments(); ++i) {
    bool sharded = false;
    for (const auto &dim : plan.args[i])
      sharded = sharded || !dim.empty();
    if (sharded || plan.write_unsharded)
      setSharding(body.argument(i),
                  shardingOf(plan.args[i], dimPriorities(plan, i)), ctx);
  }
  for (const auto &[result, arg] : plan.pinned_results)
    if (result < funcNumResults(entry) && arg < plan.args.size())
      setFuncResultSharding(entry, result, shardingOf(plan.args[arg], {}), ctx);
  return success();
}

} // namespace shardlab::strategy
