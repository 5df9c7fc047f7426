// Where propagation reads and writes shardings around data-flow ops (while,
// case, optimization_barrier, manual and named computations): edge owners,
// sources and targets, the `sdy.data_flow_edge` holding a target's sharding,
// and the manual-axes view change across a manual computation (Shardy's
// ShardableDataFlowOpInterface, getShardableValue, DataFlowEdgeOp::lookup).
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"

#include <optional>
#include <vector>

namespace shardlab::prop {

bool isTerminator(const Operation &op);
/// while, case, optimization_barrier, sdy.manual_computation,
/// sdy.named_computation.
bool isDataFlowOp(const Operation &op);
/// The op owning `value`: its defining op, or the op of its block.
Operation *owningOp(Value *value);
/// The func.return ending the body of `func`, or null.
Operation *funcReturnOp(Operation &func);
/// The edge owner for a value that is a target of a data-flow op, else null.
Value *edgeOwnerFromTarget(Value *target);
/// The edge owner for a use that is a source of a data-flow edge, else null.
Value *edgeOwnerFromSource(OpOperand &use);
/// The `sdy.data_flow_edge` that is the single user of `owner`, or null.
Operation *dataFlowEdgeUser(Value *owner);
/// Sources of the edge owned by `owner`.
std::vector<Value *> edgeSources(Value *owner);
/// Targets of the edge other than `owner` (while region arguments).
std::vector<Value *> nonOwnerTargets(Value *owner);

/// The value whose sharding stands for `value` (Shardy's getShardableValue):
/// an edge's result for edge targets; null for unshardable block arguments.
Value *shardableValue(Value *value);
/// Sharding of `value` through shardableValue (null: none).
const TensorSharding *valueSharding(Value *value);
/// For a block argument of a manual computation without a data-flow edge:
/// its in sharding without the manual axes, which is what Shardy's
/// getSharding returns there (valueSharding gives the stored one).
std::optional<TensorSharding> manualBodyArgView(Value *value);
/// Writes the sharding of `value` through shardableValue (no-op if none).
void setValueSharding(Value *value, const TensorSharding &sharding,
                      Context &ctx);

/// The sharding of a `sdy.data_flow_edge` as propagation sees it
/// (`before`) or as it is stored (`!before`): manual computations add or
/// drop their manual axes.
TensorSharding transformEdgeSharding(Operation &edge,
                                     const TensorSharding &sharding,
                                     bool before);

} // namespace shardlab::prop
