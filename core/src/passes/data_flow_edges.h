// The data-flow edges of Shardy's ShardableDataFlowOpInterface ops: which
// values own an edge (results of stablehlo.while / case /
// optimization_barrier, block arguments and results of sdy.manual_computation
// and sdy.named_computation), and the sharding seen on an owner from inside
// (a manual computation's block arguments see their in sharding without the
// manual axes).
#pragma once

#include "shardlab/ir/ir.h"

#include <optional>
#include <vector>

namespace shardlab {

/// Whether `op` has data-flow edges.
bool isShardableDataFlowOp(const Operation &op);
/// False when the module's context holds none of those ops.
bool mayContainShardableDataFlowOps(const Module &module);
/// Block arguments of `op` that own an edge (manual/named computations).
std::vector<Value *> blockArgEdgeOwners(Operation &op);
/// Results of `op` that own an edge.
std::vector<Value *> resultEdgeOwners(Operation &op);

/// The sharding of an edge owner as its edge sees it, if any.
std::optional<TensorSharding> edgeOwnerSharding(Value *owner);
/// Sets the sharding of an edge owner from its edge's sharding (adding a
/// manual computation's manual axes back).
void setEdgeOwnerSharding(Value *owner, const TensorSharding &sharding,
                          Context &ctx);

/// Puts an sdy.data_flow_edge (with the owner's sharding) after every
/// static-shaped edge owner of `op` and routes the owner's uses through it.
void addDataFlowEdgesOf(Operation &op, Context &ctx);

/// Shardy's getShardingsFromDataFlowEdges: the shardings of the owners'
/// edges (fully open on the first edge's mesh where an edge has none), or
/// nothing when no edge has a sharding.
std::optional<std::vector<TensorSharding>>
shardingsFromDataFlowEdges(const std::vector<Value *> &owners);

/// The edge owner of `target` (a while block argument -> the while result;
/// other targets own themselves); nullptr when `target` is not a value of a
/// data-flow op.
Value *edgeOwnerFromTarget(Value *target);
/// The sdy.data_flow_edge using `owner`, if any.
Operation *dataFlowEdgeUser(Value *owner);
/// Shardy's getShardableValue: where the sharding of `value` lives (its
/// data-flow edge if any, the edge owner for other targets, the value
/// itself for op results and func arguments); nullptr for block arguments
/// of other region ops.
Value *shardableValue(Value *value);
/// Sets the sharding of a shardable value (the `sharding` attribute of an
/// sdy.data_flow_edge even when it has none yet).
void setShardableValueSharding(Value *value, const TensorSharding &sharding,
                               Context &ctx);

/// The manual axes of an sdy.manual_computation.
const std::vector<std::string> &manualAxesOf(const Operation &op);

} // namespace shardlab
