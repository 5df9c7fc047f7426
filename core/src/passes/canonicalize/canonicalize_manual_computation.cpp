// Canonicalization of sdy.manual_computation: operands whose block argument
// is unused are dropped, and a manual computation whose manual axes all have
// size 1 (or that has no inputs, outputs or body) is inlined or erased.
#include "canonicalize_passes.h"
#include "canonicalize_patterns.h"
#include "passes/pass_utils.h"
#include "shardlab/sharding/mesh.h"

namespace shardlab::canon {

namespace {

// Queues `op` and everything nested in it, `op` first.
void pushTree(Operation &op, Rewriter &rw) {
  std::vector<Operation *> nested;
  walk(op, [&](Operation &inner) { nested.push_back(&inner); });
  for (auto it = nested.rbegin(); it != nested.rend(); ++it)
    rw.push(*it);
  rw.push(&op);
}

bool dropUnusedInputs(Operation &op, Rewriter &rw) {
  Block &body = op.region(0).front();
  std::vector<size_t> kept;
  for (size_t i = 0; i < body.numArguments(); ++i)
    if (body.argument(i)->hasUses())
      kept.push_back(i);
  if (kept.size() == body.numArguments())
    return false;
  std::vector<TensorSharding> in = shardingList(op, "in_shardings");
  std::vector<Value *> operands;
  std::vector<TensorSharding> shardings;
  for (size_t i : kept) {
    operands.push_back(op.operand(i));
    if (i < in.size())
      shardings.push_back(in[i]);
  }
  std::vector<Type> types;
  for (size_t i = 0; i < op.numResults(); ++i)
    types.push_back(op.result(i)->type);
  auto copy = makeOp(rw.ctx(), op.name, operands, types, op.loc);
  copy->attrs = op.attrs;
  setShardingList(*copy, "in_shardings", std::move(shardings), rw.ctx());
  Block &new_body = copy->addRegion().addBlock();
  ValueMap map;
  for (size_t i : kept) {
    Value *arg = body.argument(i);
    map[arg] = new_body.addArgument(arg->type, arg->loc);
  }
  cloneBlockBefore(body, new_body, nullptr, map, false);
  Operation *created = rw.insertBefore(op, std::move(copy));
  std::vector<Value *> results;
  for (size_t i = 0; i < created->numResults(); ++i)
    results.push_back(created->result(i));
  rw.replaceOp(op, results);
  pushTree(*created, rw);
  return true;
}

int64_t manualAxesProduct(Operation &op, const Module &module) {
  // Kept alive: an inline mesh is resolved to a pointer into its sharding.
  std::vector<TensorSharding> shardings = shardingList(op, "in_shardings");
  for (TensorSharding &sharding : shardingList(op, "out_shardings"))
    shardings.push_back(std::move(sharding));
  std::vector<const Mesh *> meshes;
  for (const TensorSharding &sharding : shardings)
    meshes.push_back(lookupMesh(module, sharding));
  if (meshes.empty())
    return 1;
  const Mesh *mesh = commonMesh(meshes);
  if (!mesh)
    return 0;
  int64_t product = 1;
  for (const std::string &axis :
       std::get<std::vector<std::string>>(op.attrs.get("manual_axes")->payload))
    product *= mesh->axisSize(axis).value_or(1);
  return product;
}

bool inlineRedundant(Operation &op, Rewriter &rw) {
  Block &body = op.region(0).front();
  bool no_io = shardingList(op, "in_shardings").empty() &&
               shardingList(op, "out_shardings").empty();
  if (no_io && body.front()->is("sdy.return")) {
    rw.eraseOp(op);
    return true;
  }
  if (manualAxesProduct(op, rw.module()) != 1)
    return false;
  ValueMap map;
  for (size_t i = 0; i < body.numArguments(); ++i)
    map[body.argument(i)] = op.operand(i);
  Operation *first_new = op.prevInBlock();
  cloneBlockBefore(body, *op.parentBlock(), &op, map, true);
  Operation *terminator = body.back();
  std::vector<Value *> results;
  for (size_t i = 0; i < terminator->numOperands(); ++i) {
    auto it = map.find(terminator->operand(i));
    results.push_back(it == map.end() ? terminator->operand(i) : it->second);
  }
  Operation *inserted =
      first_new ? first_new->nextInBlock() : op.parentBlock()->front();
  for (Operation *it = inserted; it != &op; it = it->nextInBlock())
    pushTree(*it, rw);
  rw.replaceOp(op, results);
  return true;
}

} // namespace

bool applyManualComputationPatterns(Operation &op, Rewriter &rw,
                                    unsigned labels) {
  if (!(labels & kLabelUnlabelled))
    return false;
  return dropUnusedInputs(op, rw) || inlineRedundant(op, rw);
}

} // namespace shardlab::canon
