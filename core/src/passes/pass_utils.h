// Small IR helpers shared by the import, export and canonicalization passes:
// creating, cloning, moving and erasing ops, op order within a block, the
// side-effect model used for dead-code elimination, and typed accessors for
// the attributes of sdy ops.
#pragma once

#include "ir/op_properties.h"

#include "shardlab/ir/ir.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_registry.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardlab {

/// Old value -> new value, filled by cloneOp for results and block args.
using ValueMap = std::unordered_map<Value *, Value *>;

/// A detached op `name` with `operands` and results of `types`.
std::unique_ptr<Operation> makeOp(Context &ctx, std::string_view name,
                                  const std::vector<Value *> &operands,
                                  const std::vector<Type> &types, Location loc);

/// Makes `op` read operand `index` through a new `sdy.reshard` to `to`,
/// inserted just before `op`; the reshard.
Operation *reshardOperandBefore(Operation &op, size_t index,
                                const TensorSharding &to, Context &ctx);

/// Gives result `index` of `op` the sharding `computed` and its users an
/// `sdy.reshard` back to the sharding it had, inserted before `before`
/// (the op that followed `op`, taken once so that several results keep
/// their order); the reshard.
///
///   %r = op ...  {<[{"a"}]>}        becomes   %r0 = op ... {<computed>}
///   use(%r)                                   %r = sdy.reshard %r0 <[{"a"}]>
///                                             use(%r)
Operation *reshardResultBack(Operation &op, size_t index,
                             const TensorSharding &computed, Operation *before,
                             Context &ctx);

/// Deep copy of `op` (attributes, regions); operands are remapped through
/// `map` (unmapped operands are kept) and the copy's results and block
/// arguments are recorded in `map`.
std::unique_ptr<Operation> cloneOp(Operation &op, ValueMap &map);

/// Clones every op of `from` (but its terminator when `skip_terminator`)
/// before `before` in `into`, remapping through `map`.
void cloneBlockBefore(Block &from, Block &into, Operation *before,
                      ValueMap &map, bool skip_terminator);

/// A copy of `source` whose context is layered over source's (Context):
/// what the copy makes is its own, what it shares with the source is not
/// made again. The source must outlive the copy and stay as it is; copies
/// may be made from it on several threads at once.
std::unique_ptr<Module> copyModule(const Module &source);

/// A new `sdy.mesh @name = mesh` before `before` in the module's body.
void insertMeshOp(Module &module, Operation *before, const std::string &name,
                  const Mesh &mesh);

/// The kind of the combiner of a reduce or scatter whose region is one
/// elementwise op of its two arguments: "sum", "product", "max", "min",
/// "and", "or"; empty for any other region (argmax's comparator, complex
/// max by compare and select).
std::string_view combinerKind(Operation &op);

/// Structural equality of attributes (MLIR uniques attributes and compares
/// them by identity; here equal attributes may be distinct objects).
bool sameAttr(const Attr *a, const Attr *b);
/// The same names with structurally equal values, in the same order.
bool sameAttrs(const AttrDict &x, const AttrDict &y);

/// Erases `op`; its results must have no uses.
void eraseOp(Operation &op);

/// False when no op named one of `names` is alive in the module's context,
/// so a pass that only acts on such ops can skip its whole-module walk.
bool mayContain(const Module &module,
                std::initializer_list<std::string_view> names);
/// Replaces every use of op's results by `values` and erases it.
void replaceOp(Operation &op, const std::vector<Value *> &values);

/// Whether `op` is a collective: one of sdy's explicit collectives
/// (verify::isCollective) or a StableHLO one (all_gather, all_reduce,
/// all_to_all, reduce_scatter, collective_permute, collective_broadcast).
bool isCollectiveOp(const Operation &op);

/// The device groups of a StableHLO collective's `replica_groups` (or
/// `source_target_pairs`) attribute, -1 padding dropped; one group of all
/// `devices` when the attribute is missing or empty.
std::vector<std::vector<int64_t>> readReplicaGroups(const Attr *attr,
                                                    int64_t devices);

/// The table T when `lookup` is `dynamic_slice(constant T, partition_id)`
/// (the index possibly converted): how the per-device program finds where
/// a device's part of a sharded dimension starts. Nothing otherwise.
std::optional<std::vector<int64_t>> deviceTableOf(const Operation &lookup);

/// Whether `a` comes before `b`; both are in the same block.
bool isBeforeInBlock(const Operation *a, const Operation *b);

/// MLIR's wouldOpBeTriviallyDead: no side effects (recursively for ops with
/// regions); terminators and unknown ops are never dead.
bool isSideEffectFree(Operation &op);
/// No result is used and the op has no side effects.
bool isTriviallyDead(Operation &op);
/// Erases every trivially dead op under `root` (an op that becomes dead
/// when a user is erased too), as MLIR's greedy pattern driver does to the
/// ops it visits.
void eraseTriviallyDeadOps(Operation &root);
/// The same sweep with another rule: erases every op under `root` that is
/// not a terminator, whose results nothing reads and that `erasable`
/// accepts (an op whose readers go in the sweep goes too). True when it
/// erased one.
bool eraseUnreadOps(Operation &root,
                    const std::function<bool(Operation &)> &erasable);

/// Returns true after telling the pass runner that the pass changed
/// nothing, so the module is not verified again (MLIR skips the verifier
/// when a pass preserves all analyses). For early exits of passes.
bool markUnchanged(Module &module);

/// The ops named `kind` nested in the module, collected before any is
/// erased (none walked when the module has none).
std::vector<Operation *> opsNamed(Module &module, std::string_view kind);
/// Erases the sdy.mesh symbols (only the module's body holds them).
void eraseMeshOps(Module &module);

/// The users of a value, in use-list order (each op once).
std::vector<Operation *> usersOf(const Value *value);

/// The sdy.manual_computation `op` is nested in (the innermost), or null.
Operation *enclosingManualComputation(const Operation &op);

/// Calls `fn(func)` for every top-level func.func with a body.
void forEachFunc(Module &module, const std::function<void(Operation &)> &fn);

/// The region's entry block terminator (sdy.return, func.return, ...).
Operation *terminatorOf(Operation &op, size_t region = 0);

/// Per-value shardings of `attr_name` (in_shardings/out_shardings/...).
std::vector<TensorSharding> shardingList(const Operation &op,
                                         std::string_view attr_name);
void setShardingList(Operation &op, std::string_view attr_name,
                     std::vector<TensorSharding> shardings, Context &ctx);
/// The `sharding` / `out_sharding` attribute of an sdy op.
const TensorSharding &opSharding(const Operation &op,
                                 std::string_view attr_name = "sharding");
void setOpSharding(Operation &op, const TensorSharding &sharding, Context &ctx,
                   std::string_view attr_name = "sharding");

/// Calls `fn` on every sharding of the module, in Shardy's walk order
/// (pre-order; a func's argument then result shardings, then its body; the
/// sharding attributes of each op) and stores the changed ones back. `fn`
/// must give equal results for equal shardings: an op attribute seen before
/// is not transformed again.
void transformShardings(Module &module,
                        const std::function<void(TensorSharding &)> &fn);

/// Removes attribute `name` from every argument and result dictionary of a
/// func.func (dropping arg_attrs / res_attrs when all become empty).
void eraseFuncArgAndResultAttr(Operation &func, std::string_view name,
                               Context &ctx);

/// The array of dictionaries `array` (arg_attrs / res_attrs) without entry
/// `name` in any of them; null when every dictionary is left empty or
/// `array` is not an array.
const Attr *withoutDictEntries(const Attr *array, std::string_view name,
                               Context &ctx);
/// Dictionary `dict` with `key` set to `value` (a new one when `dict` is
/// null or not a dictionary).
const Attr *dictWith(const Attr *dict, std::string_view key, const Attr *value,
                     Context &ctx);
/// Dictionary `dict` without `key`; null when nothing is left.
const Attr *dictWithout(const Attr *dict, std::string_view key, Context &ctx);
/// Sets attribute `name` of `op` to `value`, or erases it when null.
void setOrEraseAttr(Operation &op, std::string_view name, const Attr *value,
                    Context &ctx);

/// Whether `op` is a custom call to `target` (false for null).
bool isCustomCall(const Operation *op, std::string_view target);
/// The first of an op's result shardings (`sdy.sharding`), or null.
const TensorSharding *firstResultSharding(const Operation &op);

/// The mesh a sharding refers to, resolved in `module`; nullptr if unknown.
const Mesh *meshOf(const Module &module, const TensorSharding &sharding);

} // namespace shardlab
