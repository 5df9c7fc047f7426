// -sdy-sharding-group-import: merges sharding groups that share a value
// (union-find), renumbers the merged groups 0..N-1 in order of first
// appearance, drops duplicate members, and checks that a group neither
// crosses a manual-computation boundary nor mixes tensor shapes.
#include "import_passes.h"
#include "passes/pass_utils.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

namespace shardlab {

namespace {

// Union-find over group ids; the merged class keeps the first argument's
// leader (as llvm::EquivalenceClasses::unionSets does), and members are
// remembered in insertion order.
struct GroupUnion {
  std::unordered_map<int64_t, int64_t> parent;
  std::vector<int64_t> order;

  int64_t find(int64_t id) {
    if (parent.emplace(id, id).second)
      order.push_back(id);
    while (parent[id] != id)
      id = parent[id] = parent[parent[id]];
    return id;
  }
  void unite(int64_t a, int64_t b) {
    int64_t la = find(a), lb = find(b);
    if (la != lb)
      parent[lb] = la;
  }
};

int64_t groupIdOf(const Operation &op) {
  return op.attrs.get("group_id")->intValue();
}

// Collects the groups per value in walk order; false (with an error) when a
// group crosses a manual computation or mixes shapes.
bool collectGroups(
    Module &module, DiagnosticEngine &diags,
    std::vector<std::pair<Value *, std::vector<Operation *>>> &value_groups) {
  std::map<int64_t, Operation *> group_manual;
  std::map<int64_t, Type> group_type;
  std::unordered_map<Value *, size_t> index;
  bool ok = true;
  walk(module.op(), [&](Operation &op) {
    if (!ok || !op.is("sdy.sharding_group"))
      return;
    Value *input = op.operand(0);
    auto [it, inserted] = index.emplace(input, value_groups.size());
    if (inserted)
      value_groups.push_back({input, {}});
    value_groups[it->second].second.push_back(&op);
    int64_t id = groupIdOf(op);
    Operation *manual = enclosingManualComputation(op);
    if (!group_manual.emplace(id, manual).second &&
        group_manual[id] != manual) {
      diags.error(op.loc, "ShardingGroupOps values cannot cross "
                          "ManualComputationOp boundaries for groupId: " +
                              std::to_string(id));
      ok = false;
      return;
    }
    Type type = input->type;
    if (!group_type.emplace(id, type).second &&
        group_type[id]->shape != type->shape) {
      diags.error(op.loc,
                  "ShardingGroupOps values must have the same shape for "
                  "groupId: " +
                      std::to_string(id));
      ok = false;
    }
  });
  return ok;
}

} // namespace

bool shardingGroupImportPass(Module &module, const PassOptions &,
                             DiagnosticEngine &diags) {
  if (!mayContain(module, {"sdy.sharding_group"}))
    return markUnchanged(module);
  std::vector<std::pair<Value *, std::vector<Operation *>>> value_groups;
  if (!collectGroups(module, diags, value_groups))
    return false;
  GroupUnion groups;
  for (auto &[value, ops] : value_groups)
    for (Operation *op : ops)
      groups.unite(groupIdOf(*ops.front()), groupIdOf(*op));
  std::unordered_map<int64_t, int64_t> new_id;
  for (int64_t id : groups.order)
    if (groups.find(id) == id)
      new_id.emplace(id, static_cast<int64_t>(new_id.size()));
  Context &ctx = module.ctx();
  std::map<int64_t, std::unordered_set<Value *>> members;
  for (auto &[value, ops] : value_groups)
    for (Operation *op : ops) {
      int64_t id = new_id[groups.find(groupIdOf(*op))];
      if (!members[id].insert(value).second) {
        eraseOp(*op);
        continue;
      }
      op->attrs.set(ctx.intern("group_id"),
                    ctx.attrs.integer(id, op->attrs.get("group_id")->type));
    }
  return true;
}

} // namespace shardlab
