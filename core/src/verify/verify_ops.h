// The verifier's topic entry points (private to core/src/verify). Each
// returns false after emitting the op's diagnostics; the driver in
// verifier.cpp stops at the first op that fails, as MLIR's verifier does.
#pragma once

#include "verify_context.h"

namespace shardlab::verify {

/// Discardable `sdy.*` attributes of any op, in attribute-name order:
/// sdy.sharding, sdy.sharding_rule and the propagation-edge attributes.
bool verifyDiscardableAttrs(VerifyContext &ctx, Operation &op);
/// `sdy.sharding` attributes of func.func arguments and results.
bool verifyFuncShardings(VerifyContext &ctx, Operation &func);
/// The invariants of the sdy ops (collectives and manual computations
/// included); true for other ops. Inline: the verifier asks for every op,
/// and most are of other dialects.
bool verifySdyDialectOp(VerifyContext &ctx, Operation &op);
inline bool verifySdyOp(VerifyContext &ctx, Operation &op) {
  return op.dialect() != "sdy" || verifySdyDialectOp(ctx, op);
}
/// StableHLO's elementwise ops: one shape for every operand and result
/// (select's predicate and clamp's bounds may be scalars).
bool verifyElementwiseShapes(VerifyContext &ctx, Operation &op);
bool verifyManualComputation(VerifyContext &ctx, Operation &op);
/// Whether `op` is an sdy collective (sdy.all_gather, ...).
bool isCollective(const Operation &op);
bool verifyCollective(VerifyContext &ctx, Operation &op);
/// `sdy.propagation_edges` (one attribute) or `sdy.result_propagation_edges`
/// / `sdy.block_arg_propagation_edges` (arrays of them) on `op`.
bool verifyPropagationEdgesAttr(VerifyContext &ctx, Operation &op,
                                const NamedAttr &attr);

} // namespace shardlab::verify
