// Sharding groups (Shardy's ShardingGroupMap): the values tied together by
// sdy.sharding_group ops, and the sync of their initial shardings.
#include "edges.h"
#include "layers.h"

#include "ir/op_registry.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <string>

namespace shardlab::prop {

namespace {

bool fullyReplicatedAndOpen(const TensorSharding &s) {
  if (!s.replicated.empty() || !s.unreduced.empty())
    return false;
  for (const DimSharding &dim : s.dims)
    if (!dim.axes.empty() || dim.closed)
      return false;
  return true;
}

// The common sharding of a group, and whether two members disagree.
std::pair<const TensorSharding *, bool>
commonSharding(const std::vector<Value *> &members) {
  if (members.size() == 1)
    return {valueSharding(members.front()), false};
  const TensorSharding *common = nullptr;
  for (Value *member : members) {
    const TensorSharding *s = valueSharding(member);
    if (!s || fullyReplicatedAndOpen(*s))
      continue;
    if (!common)
      common = s;
    else if (!(*s == *common))
      return {common, true};
  }
  return {common, false};
}

// Inserts `sdy.sharding_constraint %member <open>` right after `member` and
// redirects the member's other uses to it.
Value *insertOpenConstraint(Module &module, Value *member,
                            const TensorSharding &like) {
  Context &ctx = module.ctx();
  auto op = Operation::create(ctx.ops, ctx.intern("sdy.sharding_constraint"),
                              lookupOp("sdy.sharding_constraint"), member->loc);
  op->setResultTypes({member->type});
  op->attrs.set(ctx.intern("sharding"),
                ctx.attrs.sharding(fullyOpenSharding(
                    like.mesh, static_cast<size_t>(member->type->rank()))));
  Block *block = member->isBlockArgument() ? member->owner_block
                                           : member->defining_op->parentBlock();
  Operation *before = member->isBlockArgument()
                          ? block->front()
                          : member->defining_op->nextInBlock();
  std::vector<OpOperand *> uses;
  for (OpOperand *use = member->firstUse(); use; use = use->next_use)
    uses.push_back(use);
  Operation *created = before ? block->insertBefore(before, std::move(op))
                              : block->push_back(std::move(op));
  created->setOperands({member});
  for (OpOperand *use : uses)
    use->set(created->result(0));
  return created->result(0);
}

} // namespace

ShardingGroups buildShardingGroups(Module &module, DiagnosticEngine &diags,
                                   const std::vector<Operation *> *group_ops) {
  ShardingGroups groups;
  auto add = [&](Operation &op) {
    if (!op.is("sdy.sharding_group") || op.numOperands() != 1)
      return;
    const Attr *id_attr = op.attrs.get("group_id");
    size_t id = id_attr ? static_cast<size_t>(id_attr->intValue()) : 0;
    if (groups.members.size() <= id)
      groups.members.resize(id + 1);
    groups.group_of.emplace(op.operand(0), id);
    groups.members[id].push_back(op.operand(0));
  };
  if (group_ops)
    for (Operation *op : *group_ops)
      add(*op);
  else
    walk(module.op(), add);
  for (size_t id = 0; id < groups.members.size(); ++id) {
    std::vector<Value *> &members = groups.members[id];
    if (members.empty())
      continue;
    auto [common, conflict] = commonSharding(members);
    if (!common)
      continue;
    TensorSharding sharding = *common;
    if (!conflict) {
      for (Value *member : members)
        setValueSharding(member, sharding, module.ctx());
      continue;
    }
    Operation *owner = owningOp(members.front());
    diags.warning(owner ? owner->loc : Location{},
                  "The initial operand shardings on the sharding groups of "
                  "groupID: " +
                      std::to_string(id) +
                      " do not match. Inserting an open sharding constraint "
                      "to all constrained values. This can be caused when "
                      "shardings from different values are grouped (e.g. "
                      "from jax.shard_alike) but have separate inconsistent "
                      "sharding constraints on them.");
    for (Value *&member : members) {
      groups.group_of.erase(member);
      member = insertOpenConstraint(module, member, sharding);
      groups.group_of.emplace(member, id);
    }
    groups.inserted_ops = true;
  }
  return groups;
}

} // namespace shardlab::prop
